// A POSIX error number as a typed value with its symbolic name, in the style of swift-system.
// Never loses the raw value: messages show both the text and the name, e.g. "Permission denied (_EACCES)".

package struct Errno: Error, Sendable, Hashable, CustomStringConvertible {
    package let rawValue: Int32
    package init(rawValue: Int32) { self.rawValue = rawValue }

    /// The errno of the calling thread right now.
    package static var current: Errno { Errno(rawValue: system_errno) }

    package static let permissionDenied = Errno(rawValue: _EACCES)
    package static let notPermitted = Errno(rawValue: _EPERM)
    package static let noSuchFile = Errno(rawValue: _ENOENT)
    package static let fileExists = Errno(rawValue: _EEXIST)
    package static let notDirectory = Errno(rawValue: _ENOTDIR)
    package static let isDirectory = Errno(rawValue: _EISDIR)
    package static let directoryNotEmpty = Errno(rawValue: _ENOTEMPTY)
    package static let tooManySymbolicLinks = Errno(rawValue: _ELOOP)
    package static let crossDevice = Errno(rawValue: _EXDEV)
    package static let ioError = Errno(rawValue: _EIO)
    package static let noSpace = Errno(rawValue: _ENOSPC)
    package static let tooManyOpenFiles = Errno(rawValue: _EMFILE)
    package static let interrupted = Errno(rawValue: _EINTR)
    package static let invalidArgument = Errno(rawValue: _EINVAL)
    package static let nameTooLong = Errno(rawValue: _ENAMETOOLONG)
    package static let notSupported = Errno(rawValue: _EOPNOTSUPP)
    package static let noData = Errno(rawValue: _ENODATA)
    package static let range = Errno(rawValue: _ERANGE)
    package static let readOnlyFileSystem = Errno(rawValue: _EROFS)
    package static let wouldBlock = Errno(rawValue: _EWOULDBLOCK)
    package static let busy = Errno(rawValue: _EBUSY)
    package static let overflow = Errno(rawValue: _EOVERFLOW)
    package static let stale = Errno(rawValue: _ESTALE)
    package static let timedOut = Errno(rawValue: _ETIMEDOUT)

    /// The symbolic name (`EACCES`), or `E<number>` for one this table does not know.
    package var name: String {
        Errno.names[rawValue] ?? "E\(rawValue)"
    }

    /// The C library's text for this error.
    package var message: String { system_strerror(rawValue) }

    package var description: String { "\(message) (\(name))" }

    /// Parses a symbolic name such as `EIO`; used by the fault-injection seam.
    package init?(name: String) {
        guard let entry = Errno.names.first(where: { $0.value == name }) else { return nil }
        self.rawValue = entry.key
    }

    private static let names: [Int32: String] = [
        _EPERM: "EPERM", _ENOENT: "ENOENT", _EINTR: "EINTR", _EIO: "EIO", _EBADF: "EBADF", _EAGAIN: "EAGAIN",
        _ENOMEM: "ENOMEM", _EACCES: "EACCES", _EBUSY: "EBUSY", _EEXIST: "EEXIST", _EXDEV: "EXDEV",
        _ENOTDIR: "ENOTDIR", _EISDIR: "EISDIR", _EINVAL: "EINVAL", _ENFILE: "ENFILE", _EMFILE: "EMFILE",
        _ETXTBSY: "ETXTBSY", _EFBIG: "EFBIG", _ENOSPC: "ENOSPC", _EROFS: "EROFS", _EMLINK: "EMLINK",
        _ERANGE: "ERANGE", _ENAMETOOLONG: "ENAMETOOLONG", _ENOTEMPTY: "ENOTEMPTY", _ELOOP: "ELOOP",
        _ENODATA: "ENODATA", _EOPNOTSUPP: "EOPNOTSUPP", _EDQUOT: "EDQUOT", _ESTALE: "ESTALE", _ENOSYS: "ENOSYS",
        _EOVERFLOW: "EOVERFLOW", _ETIMEDOUT: "ETIMEDOUT",
    ]
}
