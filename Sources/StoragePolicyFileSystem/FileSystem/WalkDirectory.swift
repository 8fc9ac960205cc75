// An open directory stream the walker reads once and then keeps, for a while, as the anchor its
// subdirectories are opened from. Never follows a symlink; counts itself so the walker can bound open fds.
internal import CPosix
import Synchronization

/// Where a directory was opened from: an ancestor's name and identity, re-checked when the walker has to
/// reopen a path whose descriptors it already closed.
package struct WalkLink: Sendable {
    package var name: FileName
    package var device: UInt64
    package var inode: UInt64

    package init(name: FileName, device: UInt64, inode: UInt64) { self.name = name; self.device = device; self.inode = inode }
}

/// The closed ancestors between an open anchor and a directory, as a list shared from the bottom up: siblings
/// and descendants share their ancestors' links.
package final class WalkChain: Sendable {
    package let link: WalkLink
    package let parent: WalkChain?
    package init(_ link: WalkLink, parent: WalkChain?) { self.link = link; self.parent = parent }
}

package final class WalkDirectory: Sendable {
    /// The directory stream, reached only under its mutex (a DIR* is not safe to share): the walker reads it
    /// once, right after opening, on one thread, and the mutex makes that so for one uncontended lock per
    /// directory. Afterwards only the descriptor is used, by *at calls, which the kernel makes safe to share.
    private let stream: Mutex<OpaquePointer>
    package let descriptor: Int32
    package let path: RelativePath
    package let status: FileStatus
    private let counter: WalkDirectory.Counter

    /// Live streams across the whole walk; compared with the budget before keeping one open.
    package final class Counter: Sendable {
        package let live = Atomic<Int>(0)
        package init() {}
    }

    /// O_RDONLY|O_DIRECTORY|O_NOFOLLOW|O_CLOEXEC, plus O_NOATIME so a dry run leaves directory atimes alone.
    static let flags = cposix_o_directory_flags() | cposix_o_noatime()
    static let flagsWithoutNoAtime = cposix_o_directory_flags()

    private init(stream: sending OpaquePointer, descriptor: Int32, path: RelativePath, status: FileStatus, counter: Counter) {
        self.stream = Mutex(stream); self.descriptor = descriptor; self.path = path; self.status = status
        self.counter = counter
        counter.live.add(1, ordering: .relaxed)
    }

    deinit {
        stream.withLock { _ = system_closedir($0) }
        counter.live.subtract(1, ordering: .relaxed)
    }

    /// Runs `body` with the directory stream, holding its mutex.
    func withStream(_ body: (OpaquePointer) throws(FileSystemError) -> Void) throws(FileSystemError) {
        try stream.withLock { (stream: inout OpaquePointer) throws(FileSystemError) in try body(stream) }
    }

    /// Opens `name` inside the directory `parent` (a descriptor) as a directory, without following a
    /// symlink and without touching its atime where the kernel lets us.
    package static func open(_ name: FileName, in parent: Int32, path: RelativePath,
                     counter: Counter) throws(FileSystemError) -> WalkDirectory {
        let fd = try openDescriptor(name, in: parent, path: path)
        return try wrap(fd, path: path, counter: counter)
    }

    /// Opens the root given as a path string: its folders chased (PathChase), its last component never a symlink.
    package static func open(root: String, counter: Counter) throws(FileSystemError) -> WalkDirectory {
        let (folder, name) = try PathChase.parent(of: root)
        let last = name ?? FileName(unchecked: [0x2E])
        let parent = folder.handle.descriptor
        var r = last.withCString { n in systemCall(.open) { system_openat(parent, n, flags) } }
        if case .failure(let e) = r, e == .notPermitted {
            r = last.withCString { n in systemCall(.open) { system_openat(parent, n, flagsWithoutNoAtime) } }
        }
        switch r {
        case .success(let fd): return try wrap(fd, path: .root, counter: counter)
        case .failure(let e): throw FileSystemError(.open, path: .root, errno: e)
        }
    }

    /// openat with the directory flags; O_NOATIME is refused (EPERM) on directories we do not own.
    package static func openDescriptor(_ name: FileName, in parent: Int32, path: RelativePath) throws(FileSystemError) -> Int32 {
        var r = name.withCString { n in systemCall(.open) { system_openat(parent, n, flags) } }
        if case .failure(let e) = r, e == .notPermitted {
            r = name.withCString { n in systemCall(.open) { system_openat(parent, n, flagsWithoutNoAtime) } }
        }
        switch r {
        case .success(let fd): return fd
        case .failure(let e): throw FileSystemError(.openat, path: path, errno: e)
        }
    }

    /// The directory's status with its mount id: one statx on the descriptor, as cheap as the fstat it replaces.
    package static func status(of fd: Int32, path: RelativePath) throws(FileSystemError) -> FileStatus {
        var s = cposix_stat()
        if case .failure(let e) = systemCall(.stat, { cposix_stat_at(fd, nil, &s) }) {
            throw FileSystemError(.fstat, path: path, errno: e)
        }
        return FileStatus(s)
    }

    private static func wrap(_ fd: Int32, path: RelativePath, counter: Counter) throws(FileSystemError) -> WalkDirectory {
        let status: FileStatus
        do { status = try self.status(of: fd, path: path) } catch { _ = system_close(fd); throw error }
        guard let stream = system_fdopendir(fd) else {
            let e = Errno.current
            _ = system_close(fd)
            throw FileSystemError(.fdopendir, path: path, errno: e)
        }
        return WalkDirectory(stream: stream, descriptor: fd, path: path, status: status, counter: counter)
    }
}
