// Setting an entry's atime and mtime by name relative to a directory, without following a symlink.
// Used to build demo and test trees and to restore times; never used to hide a change from a plan.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension DirectoryHandle {
    /// Sets atime and mtime of `name` (nanoseconds since the epoch) with utimensat(AT_SYMLINK_NOFOLLOW).
    public func setTimes(of name: FileName, accessNs: Int64, modificationNs: Int64) throws(FileSystemError) {
        var times = [EntryTimes.spec(accessNs), EntryTimes.spec(modificationNs)]
        let r = name.withCString { n in systemCall(.write) { utimensat(descriptor, n, &times, AT_SYMLINK_NOFOLLOW) } }
        if case .failure(let e) = r { throw FileSystemError("utimensat", path: path.appending(name), errno: e) }
    }
}

enum EntryTimes {
    /// Nanoseconds since the epoch as a timespec, the nanoseconds always in 0..<10^9 (times before 1970
    /// round the seconds down), so any Int64 converts without trapping.
    static func spec(_ ns: Int64) -> timespec {
        var seconds = ns / 1_000_000_000, rest = ns % 1_000_000_000
        if rest < 0 { seconds -= 1; rest += 1_000_000_000 }
        return timespec(tv_sec: Int(seconds), tv_nsec: Int(rest))
    }
}

extension FileDescriptor {
    /// Reserves `length` bytes of real disk blocks (so `du` counts them) without writing data.
    public func allocate(_ length: Int64) throws(FileSystemError) {
        let r = posix_fallocate(rawValue, 0, off_t(length))
        if r != 0 { throw FileSystemError("posix_fallocate", path: path, errno: Errno(rawValue: r)) }
    }
}
