// An error from the file system layer: what was attempted, on which root-relative byte path, and the errno.
// Reads as `tmp/a.dat: Permission denied (EACCES)`; the path is shown escaped, never lossy.

public struct FileSystemError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The system call that failed, e.g. `openat`, `renameat2` (typed; `operation.name` is its text).
    public var operation: Operation
    /// The path the call was about, relative to the walk or apply root where known.
    public var path: RelativePath
    package var errno: Errno

    package init(_ operation: Operation, path: RelativePath, errno: Errno) {
        self.operation = operation
        self.path = path
        self.errno = errno
    }

    /// `tmp/a.dat: Permission denied (EACCES) [openat]`; the root itself reads `the root: ...`, not `.`, which
    /// looked like the working directory (the caller, who knows the root's path, names it where it can).
    public var description: String {
        "\(path.isEmpty ? "the root" : path.escaped): \(errno) [\(operation.name)]"
    }
}
