// What a `FileSystemError` was doing when it failed, typed: apply sorts errors by it (FailureScope) and never by
// message text. `name` is the exact string every message, JSON line and journal record has always carried.

extension FileSystemError {
    /// The system call that failed, or, where no call failed, what the engine refused.
    public enum Operation: Sendable, Hashable, CustomStringConvertible {
        case open, openat, fdopendir, dup, readdir
        case stat, fstat, fstatat
        case mkdir, mkdirat, fchmod, mkdtemp, renameat2, unlinkat, utimensat, flock
        case fchown, symlinkat, readlinkat
        case getxattr, listxattr, setxattr, removexattr
        case read, pread, write, ftruncate, posixFallocate, fsync
        /// No call failed: the entry is a mount point (EXDEV), not entered.
        case mountPoint
        /// No call failed: the entry's timestamps do not fit in nanoseconds (EOVERFLOW).
        case timeOutOfRange
        /// No call failed: a walk ran past the run's time budget (`--max-runtime`) and stopped (ETIMEDOUT).
        case pastDeadline
        /// No call failed: the walk was cancelled (a Task, `cancel()`, SIGINT/SIGTERM) and stopped (EINTR).
        case cancelled
        /// No call failed: the state directory was refused; the problem and the fix, in place of a call's name.
        case refused(String)
        /// Anything else, named as it should read (an error from outside the file system layer).
        case other(String)

        /// Every plain system call, in the order above: what `init(name:)` recognises.
        static let calls: [Operation] = [
            .open, .openat, .fdopendir, .dup, .readdir, .stat, .fstat, .fstatat, .mkdir, .mkdirat, .fchmod, .mkdtemp,
            .renameat2, .unlinkat, .utimensat, .flock, .getxattr, .listxattr, .setxattr, .removexattr,
            .read, .pread, .write, .ftruncate, .posixFallocate, .fsync, .fchown, .symlinkat, .readlinkat,
        ]

        /// The operation a name stands for (as read back from a journal or a test); unknown names stay `.other`.
        public init(name: String) {
            if let call = Operation.calls.first(where: { $0.name == name }) {
                self = call
            } else if name == Operation.mountPoint.name {
                self = .mountPoint
            } else if name == Operation.timeOutOfRange.name {
                self = .timeOutOfRange
            } else if name == Operation.pastDeadline.name {
                self = .pastDeadline
            } else if name == Operation.cancelled.name {
                self = .cancelled
            } else {
                self = .other(name)
            }
        }

        /// The name as messages, JSON and the journal spell it (`renameat2`, `posix_fallocate`).
        public var name: String {
            switch self {
            case .open: "open"
            case .openat: "openat"
            case .fdopendir: "fdopendir"
            case .dup: "dup"
            case .readdir: "readdir"
            case .stat: "stat"
            case .fstat: "fstat"
            case .fstatat: "fstatat"
            case .mkdir: "mkdir"
            case .mkdirat: "mkdirat"
            case .fchmod: "fchmod"
            case .fchown: "fchown"
            case .symlinkat: "symlinkat"
            case .readlinkat: "readlinkat"
            case .mkdtemp: "mkdtemp"
            case .renameat2: "renameat2"
            case .unlinkat: "unlinkat"
            case .utimensat: "utimensat"
            case .flock: "flock"
            case .getxattr: "getxattr"
            case .listxattr: "listxattr"
            case .setxattr: "setxattr"
            case .removexattr: "removexattr"
            case .read: "read"
            case .pread: "pread"
            case .write: "write"
            case .ftruncate: "ftruncate"
            case .posixFallocate: "posix_fallocate"
            case .fsync: "fsync"
            case .mountPoint: "mount point; not entered"
            case .timeOutOfRange: "timestamp out of range"
            case .pastDeadline: "past the time budget"
            case .cancelled: "cancelled"
            case .refused(let reason): "refused: \(reason)"
            case .other(let text): text
            }
        }

        public var description: String { name }
    }
}
