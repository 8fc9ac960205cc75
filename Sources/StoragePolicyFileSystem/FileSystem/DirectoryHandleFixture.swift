// What `policyctl test` needs to build a fixture tree that the engine itself never does: symlinks and owners.
// Both act on a name inside an open directory and never follow a symlink, like every other call here; the
// fault seam counts them as mkdir calls (they make an entry).

extension DirectoryHandle {
    /// Creates the symlink `name` pointing at `target` (symlinkat); fails with EEXIST when anything has the name.
    package func makeSymlink(_ name: FileName, target: [UInt8]) throws(FileSystemError) {
        let r = name.withCString { n in
            (target + [0]).withUnsafeBufferPointer { t in
                t.withMemoryRebound(to: CChar.self) { t in systemCall(.mkdir) { system_symlinkat(t.baseAddress!, descriptor, n) } }
            }
        }
        if case .failure(let e) = r { throw FileSystemError(.other("symlinkat"), path: path.appending(name), errno: e) }
    }

    /// Sets the owner and group of `name` itself, a symlink included (fchownat with AT_SYMLINK_NOFOLLOW).
    package func changeOwner(of name: FileName, user: UInt32, group: UInt32) throws(FileSystemError) {
        let r = name.withCString { n in systemCall(.mkdir) { system_fchownat(descriptor, n, user, group, _AT_SYMLINK_NOFOLLOW) } }
        if case .failure(let e) = r { throw FileSystemError(.other("fchownat"), path: path.appending(name), errno: e) }
    }
}
