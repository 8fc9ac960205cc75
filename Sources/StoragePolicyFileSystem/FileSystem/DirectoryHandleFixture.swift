// What `policyctl test` needs to build a fixture tree that the engine itself never does: owners of any entry.
// It acts on a name inside an open directory and never follows a symlink, like every other call here; the
// fault seam counts it as a mkdir call. (Symlinks are `makeSymlink(_:to:)`, which layout entries use too.)

extension DirectoryHandle {
    /// Sets the owner and group of `name` itself, a symlink included (fchownat with AT_SYMLINK_NOFOLLOW).
    package func changeOwner(of name: FileName, user: UInt32, group: UInt32) throws(FileSystemError) {
        let r = name.withCString { n in systemCall(.mkdir) { system_fchownat(descriptor, n, user, group, _AT_SYMLINK_NOFOLLOW) } }
        if case .failure(let e) = r { throw FileSystemError(.other("fchownat"), path: path.appending(name), errno: e) }
    }
}
