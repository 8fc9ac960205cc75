// Sorts an error met while applying one step into "this entry" (skip the step and what depends on it) or
// "this run" (roll everything back). Decided by the failed call and the errno, typed; never by message text.

@_spi(Layers) import StoragePolicyFileSystem

/// The system call behind a `FileSystemError`, as apply classifies it.
package enum FailedCall: Sendable, Hashable {
    /// Calls that look at, move, create or label one entry (or the folder holding it).
    case rename, mkdir, open, stat, readDirectory, unlink, getxattr, setxattr, removexattr
    /// Calls that make data durable or read it: a failure there is about the disk, not the entry.
    case read, write, sync
    case other

    package init(_ error: FileSystemError) {
        switch error.operation {
        case .renameat2: self = .rename
        case .mkdirat, .mkdir, .fchmod, .fchown, .symlinkat: self = .mkdir
        case .openat, .open, .fdopendir, .dup: self = .open
        case .fstatat, .fstat, .stat, .readlinkat: self = .stat
        case .readdir: self = .readDirectory
        case .unlinkat: self = .unlink
        case .getxattr, .listxattr: self = .getxattr
        case .setxattr: self = .setxattr
        case .removexattr: self = .removexattr
        case .read, .pread: self = .read
        case .write, .ftruncate, .posixFallocate: self = .write
        case .fsync: self = .sync
        case .mkdtemp, .utimensat, .flock, .mountPoint, .timeOutOfRange, .pastDeadline, .cancelled, .refused, .other: self = .other
        }
    }

    /// True for a call that acts on one entry by name; write, read and fsync act on the disk's data.
    var touchesOneEntry: Bool {
        switch self {
        case .rename, .mkdir, .open, .stat, .readDirectory, .unlink, .getxattr, .setxattr, .removexattr: true
        case .read, .write, .sync, .other: false
        }
    }
}

/// Whether an error stops one step or the whole run.
package enum FailureScope: Sendable, Hashable {
    /// The entry is gone (ENOENT, ENOTDIR on the way): a race, skipped as vanished.
    case vanished
    /// Something took the name meanwhile (EEXIST, ENOTEMPTY on a no-replace move): a race, nothing replaced.
    case appeared
    /// The entry cannot be changed by this run (EACCES, EPERM, ENAMETOOLONG, EBUSY, ELOOP, EROFS, EXDEV):
    /// skipped with the errno; the rest of the transaction goes on.
    case entry
    /// I/O errors, ENOSPC, EMFILE, anything unknown, and every write, read or fsync: the run rolls back.
    case run

    package init(_ error: FileSystemError) {
        let call = FailedCall(error)
        guard call.touchesOneEntry else {
            self = .run
            return
        }
        switch error.errno {
        case .noSuchFile, .notDirectory:
            self = .vanished
        case .fileExists:
            self = call == .rename || call == .mkdir || call == .open ? .appeared : .run
        case .directoryNotEmpty:
            self = call == .rename ? .appeared : .entry
        case .permissionDenied, .notPermitted, .nameTooLong, .busy, .tooManySymbolicLinks, .readOnlyFileSystem,
             .crossDevice:
            self = .entry
        default:
            self = .run
        }
    }

    /// True when the step alone is skipped; false when the run must roll back.
    var isItemLevel: Bool { self != .run }
}
