// A POSIX error number as a typed value with its symbolic name, in the style of swift-system.
// Never loses the raw value: messages show both the text and the name, e.g. "Permission denied (_EACCES)".

public struct Errno: Error, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The errno of the calling thread right now.
    static var current: Errno { Errno(rawValue: system_errno) }

    public static let permissionDenied = Errno(rawValue: _EACCES)
    public static let notPermitted = Errno(rawValue: _EPERM)
    public static let noSuchFile = Errno(rawValue: _ENOENT)
    public static let fileExists = Errno(rawValue: _EEXIST)
    public static let notDirectory = Errno(rawValue: _ENOTDIR)
    public static let isDirectory = Errno(rawValue: _EISDIR)
    public static let directoryNotEmpty = Errno(rawValue: _ENOTEMPTY)
    public static let tooManySymbolicLinks = Errno(rawValue: _ELOOP)
    public static let crossDevice = Errno(rawValue: _EXDEV)
    public static let ioError = Errno(rawValue: _EIO)
    public static let noSpace = Errno(rawValue: _ENOSPC)
    public static let tooManyOpenFiles = Errno(rawValue: _EMFILE)
    public static let interrupted = Errno(rawValue: _EINTR)
    public static let invalidArgument = Errno(rawValue: _EINVAL)
    public static let nameTooLong = Errno(rawValue: _ENAMETOOLONG)
    public static let notSupported = Errno(rawValue: _EOPNOTSUPP)
    public static let noData = Errno(rawValue: _ENODATA)
    public static let range = Errno(rawValue: _ERANGE)
    public static let readOnlyFileSystem = Errno(rawValue: _EROFS)
    public static let wouldBlock = Errno(rawValue: _EWOULDBLOCK)
    public static let busy = Errno(rawValue: _EBUSY)
    public static let overflow = Errno(rawValue: _EOVERFLOW)

    /// The symbolic name (`EACCES`), or `E<number>` for one this table does not know.
    public var name: String {
        Errno.names[rawValue] ?? "E\(rawValue)"
    }

    /// The C library's text for this error.
    public var message: String { system_strerror(rawValue) }

    public var description: String { "\(message) (\(name))" }

    /// Parses a symbolic name such as `EIO`; used by the fault-injection seam.
    public init?(name: String) {
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
        _EOVERFLOW: "EOVERFLOW",
    ]
}
