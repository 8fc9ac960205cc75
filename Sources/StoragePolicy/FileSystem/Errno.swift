// A POSIX error number as a typed value with its symbolic name, in the style of swift-system.
// Never loses the raw value: messages show both the text and the name, e.g. "Permission denied (EACCES)".
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

public struct Errno: Error, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The errno of the calling thread right now.
    static var current: Errno { Errno(rawValue: errno) }

    public static let permissionDenied = Errno(rawValue: EACCES)
    public static let notPermitted = Errno(rawValue: EPERM)
    public static let noSuchFile = Errno(rawValue: ENOENT)
    public static let fileExists = Errno(rawValue: EEXIST)
    public static let notDirectory = Errno(rawValue: ENOTDIR)
    public static let isDirectory = Errno(rawValue: EISDIR)
    public static let directoryNotEmpty = Errno(rawValue: ENOTEMPTY)
    public static let tooManySymbolicLinks = Errno(rawValue: ELOOP)
    public static let crossDevice = Errno(rawValue: EXDEV)
    public static let ioError = Errno(rawValue: EIO)
    public static let noSpace = Errno(rawValue: ENOSPC)
    public static let tooManyOpenFiles = Errno(rawValue: EMFILE)
    public static let interrupted = Errno(rawValue: EINTR)
    public static let invalidArgument = Errno(rawValue: EINVAL)
    public static let nameTooLong = Errno(rawValue: ENAMETOOLONG)
    public static let notSupported = Errno(rawValue: EOPNOTSUPP)
    public static let noData = Errno(rawValue: ENODATA)
    public static let range = Errno(rawValue: ERANGE)
    public static let readOnlyFileSystem = Errno(rawValue: EROFS)
    public static let wouldBlock = Errno(rawValue: EWOULDBLOCK)
    public static let busy = Errno(rawValue: EBUSY)
    public static let overflow = Errno(rawValue: EOVERFLOW)

    /// The symbolic name (`EACCES`), or `E<number>` for one this table does not know.
    public var name: String {
        Errno.names[rawValue] ?? "E\(rawValue)"
    }

    /// The C library's text for this error.
    public var message: String { String(cString: strerror(rawValue)) }

    public var description: String { "\(message) (\(name))" }

    /// Parses a symbolic name such as `EIO`; used by the fault-injection seam.
    public init?(name: String) {
        guard let entry = Errno.names.first(where: { $0.value == name }) else { return nil }
        self.rawValue = entry.key
    }

    private static let names: [Int32: String] = [
        EPERM: "EPERM", ENOENT: "ENOENT", EINTR: "EINTR", EIO: "EIO", EBADF: "EBADF", EAGAIN: "EAGAIN",
        ENOMEM: "ENOMEM", EACCES: "EACCES", EBUSY: "EBUSY", EEXIST: "EEXIST", EXDEV: "EXDEV",
        ENOTDIR: "ENOTDIR", EISDIR: "EISDIR", EINVAL: "EINVAL", ENFILE: "ENFILE", EMFILE: "EMFILE",
        ETXTBSY: "ETXTBSY", EFBIG: "EFBIG", ENOSPC: "ENOSPC", EROFS: "EROFS", EMLINK: "EMLINK",
        ERANGE: "ERANGE", ENAMETOOLONG: "ENAMETOOLONG", ENOTEMPTY: "ENOTEMPTY", ELOOP: "ELOOP",
        ENODATA: "ENODATA", EOPNOTSUPP: "EOPNOTSUPP", EDQUOT: "EDQUOT", ESTALE: "ESTALE", ENOSYS: "ENOSYS",
        EOVERFLOW: "EOVERFLOW",
    ]
}
