// Setting an entry's atime and mtime by name relative to a directory, without following a symlink.
// Used to build demo and test trees and to restore times; never used to hide a change from a plan.

extension DirectoryHandle {
    /// Sets atime and mtime of `name` (nanoseconds since the epoch) with utimensat(AT_SYMLINK_NOFOLLOW).
    package func setTimes(of name: FileName, accessNs: Int64, modificationNs: Int64) throws(FileSystemError) {
        var times = [EntryTimes.spec(accessNs), EntryTimes.spec(modificationNs)]
        let r = name.withCString { n in systemCall(.write) { system_utimensat(descriptor, n, &times, _AT_SYMLINK_NOFOLLOW) } }
        if case .failure(let e) = r { throw FileSystemError(.utimensat, path: path.appending(name), errno: e) }
    }
}

package enum EntryTimes {
    /// Nanoseconds since the epoch as a timespec, the nanoseconds always in 0..<10^9 (times before 1970
    /// round the seconds down), so any Int64 converts without trapping.
    package static func spec(_ ns: Int64) -> CInterop.TimeSpec {
        var seconds = ns / 1_000_000_000, rest = ns % 1_000_000_000
        if rest < 0 { seconds -= 1; rest += 1_000_000_000 }
        return CInterop.TimeSpec(tv_sec: .init(seconds), tv_nsec: .init(rest))
    }
}

extension FileDescriptor {
    /// Reserves `length` bytes of real disk blocks (so `du` counts them) without writing data.
    package func allocate(_ length: Int64) throws(FileSystemError) {
        let r = system_posix_fallocate(rawValue, 0, CInterop.Offset(length))
        if r != 0 { throw FileSystemError(.posixFallocate, path: path, errno: Errno(rawValue: r)) }
    }
}
