// Probes on a directory for the in-use check: opening a folder without touching its atime, whether an entry
// holds a BSD flock, and whether the folder's filesystem keeps all its flocks in this kernel (so /proc/locks,
// read by Platform/FlockTable, lists them). The process tables themselves are Platform/.
internal import CPosix

extension DirectoryHandle {
    /// Opens the directory `name` with O_NOATIME where permitted, so listing it leaves its atime alone (a plan
    /// changes nothing); a symlink is refused and so is a mount point (EXDEV).
    package func openDirectoryLeavingAtime(_ name: FileName) throws(FileSystemError) -> DirectoryHandle {
        let target = path.appending(name)
        let handle = DirectoryHandle(descriptor: try WalkDirectory.openDescriptor(name, in: descriptor, path: target), path: target)
        if try !handle.status().isOnSameMount(as: status()) { throw FileSystemError(.openat, path: target, errno: .crossDevice) }
        return handle
    }

    /// True when `name` (self when nil) holds a BSD flock someone else took: a non-blocking exclusive flock fails.
    /// Opened O_RDONLY|O_NOFOLLOW|O_NONBLOCK|O_NOCTTY (O_NOATIME where permitted), so a symlink is never
    /// followed and a FIFO swapped in cannot block; only regular files and directories are probed.
    /// Our own probe lock goes with the descriptor at once.
    package func holdsFlock(_ name: FileName?, expected: EntryIdentity? = nil) throws(FileSystemError) -> Bool {
        let target = name.map(path.appending) ?? path
        let base = _O_RDONLY | _O_NOFOLLOW | _O_NONBLOCK | _O_NOCTTY | _O_CLOEXEC
        func open(_ flags: Int32) -> Result<Int32, Errno> {
            let n = name.map { $0 } ?? FileName(unchecked: Array(".".utf8))
            return n.withCString { n in systemCall(.open) { system_openat(descriptor, n, flags) } }
        }
        var r = open(base | cposix_o_noatime())
        if case .failure(let e) = r, e == .notPermitted { r = open(base) }
        let fd: Int32
        switch r {
        case .success(let value): fd = value
        case .failure(let e): throw FileSystemError(.openat, path: target, errno: e)
        }
        defer { _ = system_close(fd) }
        var s = CInterop.Stat()
        guard system_fstat(fd, &s) == 0 else { throw FileSystemError(.fstat, path: target, errno: Errno.current) }
        let type = FileType(mode: UInt32(s.st_mode))
        guard type == .regular || type == .directory else { return false }
        if let expected, UInt64(s.st_dev) != expected.device || UInt64(s.st_ino) != expected.inode { return false }
        if system_flock(fd, _LOCK_EX | _LOCK_NB) == 0 { return false }
        let e = Errno.current
        if e == .wouldBlock { return true }
        throw FileSystemError(.flock, path: target, errno: e)
    }

    /// True when this directory is on a filesystem whose flocks all live in this kernel (so /proc/locks lists
    /// them): ext2/3/4, XFS, btrfs, tmpfs, f2fs. Network and FUSE filesystems, overlayfs and anything unknown: false.
    package var flocksAreLocal: Bool {
        switch UInt64(bitPattern: cposix_fs_type(descriptor)) {
        case 0xEF53, 0x5846_5342, 0x9123_683E, 0x0102_1994, 0xF2F5_2010: true
        default: false
        }
    }
}
