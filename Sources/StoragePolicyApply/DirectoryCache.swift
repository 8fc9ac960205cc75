// Open directories by root-relative path, each reached one component at a time with O_NOFOLLOW from the
// root handle, so apply acts by name inside a directory it opened itself. Never enters another mount (bind
// mounts of folders on the root's own device included).

@_spi(Layers) import StoragePolicyFileSystem

package final class DirectoryCache {
    package let root: DirectoryHandle
    /// The root's status: every directory handed out is on its mount.
    package let rootStatus: FileStatus
    private var handles: [RelativePath: DirectoryHandle] = [:]
    /// Each open folder's status as it was opened (the fstat the mount check makes): a quarantined delete records
    /// the folder it leaves (FolderRecord) with no call of its own.
    private var statuses: [RelativePath: FileStatus] = [:]
    /// The last folder `directory(containing:)` handed out; dropped with the handles.
    private var lastParent: (path: RelativePath, handle: DirectoryHandle)?
    /// Bounded so a plan touching many directories never runs out of descriptors; also bounds how long a
    /// handle is trusted (the cache is cleared between groups).
    private let limit = 256

    package init(root: DirectoryHandle, rootStatus: FileStatus) {
        self.root = root
        self.rootStatus = rootStatus
    }

    /// The directory at `path`. Fails with ELOOP or ENOTDIR when a component is a symlink or not a
    /// directory (swapped since the plan), and with EXDEV when a component is a mount point (openDirectory
    /// refuses to enter one; the mount-id check is kept for a root opened on a kernel without openat2).
    /// Reached from the nearest cached ancestor one component at a time, in a loop: a path thousands of
    /// folders deep needs no recursion (and no thread stack) to open.
    package func directory(_ path: RelativePath) throws(FileSystemError) -> DirectoryHandle {
        if path.isRoot { return root }
        if let h = handles[path] { return h }
        var missing = [path]
        var current = root
        var ancestor = path.parent
        while !ancestor.isRoot {
            if let h = handles[ancestor] {
                current = h
                break
            }
            missing.append(ancestor)
            ancestor = ancestor.parent
        }
        for directory in missing.reversed() {
            let handle = try current.openDirectory(directory.lastComponent!)
            let status = try handle.status()
            guard status.isOnSameMount(as: rootStatus) else {
                throw FileSystemError(.open, path: directory, errno: .crossDevice)
            }
            if handles.count >= limit {
                handles.removeAll(keepingCapacity: true)
                statuses.removeAll(keepingCapacity: true)
            }
            handles[directory] = handle
            statuses[directory] = status
            current = handle
        }
        return current
    }

    /// The status of the folder holding `path` as it was opened (`directory(containing:)` opens it first). The
    /// last one is answered without building the parent's path or hashing it (steps come sorted by folder).
    func statusOfDirectory(containing path: RelativePath) throws(FileSystemError) -> FileStatus {
        if let last = lastParentStatus, lastParent != nil, path.isChild(of: last.path) { return last.status }
        _ = try directory(containing: path)
        let parent = path.parent
        let status: FileStatus
        if parent.isRoot {
            status = rootStatus
        } else if let known = statuses[parent] {
            status = known
        } else {
            status = try directory(parent).status()
            statuses[parent] = status
        }
        lastParentStatus = (parent, status)
        return status
    }

    /// The folder `statusOfDirectory(containing:)` answered last, with its status; dropped with the handles.
    private var lastParentStatus: (path: RelativePath, status: FileStatus)?

    /// The directory holding `path`: `directory(path.parent)`, but the folder asked for last is answered without
    /// building its path or hashing it (a run's steps come sorted, so most share the previous one's folder).
    package func directory(containing path: RelativePath) throws(FileSystemError) -> DirectoryHandle {
        if let last = lastParent, path.isChild(of: last.path) { return last.handle }
        let parent = path.parent
        let handle = try directory(parent)
        lastParent = (parent, handle)
        return handle
    }

    /// The directory holding `path`, or nil when it (or a component) does not exist or is not a directory.
    func directoryIfPresent(containing path: RelativePath) throws(FileSystemError) -> DirectoryHandle? {
        do { return try directory(containing: path) } catch where DirectoryCache.meansAbsent(error.errno) { return nil }
    }

    /// The directory at `path`, or nil when it (or a component) does not exist or is not a directory.
    func directoryIfPresent(_ path: RelativePath) throws(FileSystemError) -> DirectoryHandle? {
        do { return try directory(path) } catch where DirectoryCache.meansAbsent(error.errno) { return nil }
    }

    /// Drops handles at or below `path` (after that directory was moved, they no longer name it).
    func forget(under path: RelativePath) {
        if let last = lastParent, last.path.hasPrefix(path) { lastParent = nil }
        if let last = lastParentStatus, last.path.hasPrefix(path) { lastParentStatus = nil }
        if path.isRoot { handles.removeAll(); statuses.removeAll(); return }
        guard handles.keys.contains(where: { $0.hasPrefix(path) }) else { return }
        handles = handles.filter { !$0.key.hasPrefix(path) }
        statuses = statuses.filter { !$0.key.hasPrefix(path) }
    }

    func clear() {
        handles.removeAll(keepingCapacity: true)
        statuses.removeAll(keepingCapacity: true)
        lastParent = nil
        lastParentStatus = nil
    }

    /// Errors that mean "not there (any more) as a directory", as opposed to real I/O failures.
    static func meansAbsent(_ e: Errno) -> Bool {
        e == .noSuchFile || e == .notDirectory || e == .tooManySymbolicLinks
    }
}

extension DirectoryCache {
    /// The entry at `path` (the root itself for the root), without following a symlink; nil when it or a
    /// folder above it is missing or no longer a directory.
    func statusIfPresent(_ path: RelativePath) throws(FileSystemError) -> FileStatus? {
        if path.isRoot { return try root.status() }
        guard let parent = try directoryIfPresent(containing: path) else { return nil }
        return try parent.statusIfPresent(of: path.lastComponent!)
    }

    func exists(_ path: RelativePath) throws(FileSystemError) -> Bool { try statusIfPresent(path) != nil }

    /// Flushes the inode at `path` itself: its xattrs, mode and owner. A folder's fsync makes its entries durable,
    /// not what changed on the inodes they name (a filesystem that logs per inode, btrfs, or any that does not
    /// commit everything at once, can lose a setxattr after the commit record is durable: scripts/power-loss.py
    /// found an app trash item's stamps lost so). A directory through its handle; a regular file opened read-only
    /// without following a symlink and checked to be one again; anything else, or nothing there, is left.
    func syncEntry(_ path: RelativePath) throws(FileSystemError) {
        guard let status = try statusIfPresent(path) else { return }
        switch status.type {
        case .directory:
            try directoryIfPresent(path)?.sync()
        case .regular:
            guard let name = path.lastComponent, let parent = try directoryIfPresent(containing: path) else { return }
            let file: FileDescriptor
            do {
                file = try parent.openFile(name, options: [.readOnly, .nonBlocking, .noControllingTerminal])
            } catch where DirectoryCache.meansAbsent(error.errno) {
                return
            }
            guard try file.status().type == .regular else { return }
            try file.sync()
        default:
            return
        }
    }
}
