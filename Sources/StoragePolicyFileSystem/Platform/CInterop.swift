// The C types and constants the rest of the library names, under platform-neutral spellings, and the one
// conversion of a C `struct stat` into a FileStatus. Never exposed: nothing here is public.
// The one `package import` of libc: the aliases below name its types for the layers above (a `tm` for the
// trash's dates, an `off_t` for the journal's reads), which `internal` would hide; a client outside the package
// sees neither the aliases nor the import.
#if canImport(Glibc)
package import Glibc
#elseif canImport(Darwin)
package import Darwin
#endif

/// C types by role, so that code outside Platform/ never spells a libc type (whose name or shape differs
/// between Glibc and Darwin: `pthread_t` is an integer on one and a pointer on the other).
package enum CInterop {
    package typealias Stat = stat
    package typealias TimeSpec = timespec
    package typealias BrokenDownTime = tm
    package typealias Time = time_t
    package typealias Mode = mode_t
    package typealias Offset = off_t
    package typealias Microseconds = useconds_t
    package typealias ClockID = clockid_t
    package typealias DirectoryEntry = dirent
    package typealias Mutex = pthread_mutex_t
    package typealias Condition = pthread_cond_t
    package typealias Thread = pthread_t
}

/// True on Apple platforms, for the few conventions that differ by platform rather than by call
/// (the backup-exclusion attribute, see Markers).
#if canImport(Darwin)
package let system_isDarwin = true
#else
package let system_isDarwin = false
#endif

// Convention (swift-system's): `_FOO` is the C constant `FOO`.

// MARK: errno values
package let _EPERM = EPERM, _ENOENT = ENOENT, _EINTR = EINTR, _EIO = EIO, _EBADF = EBADF, _EAGAIN = EAGAIN
package let _ENOMEM = ENOMEM, _EACCES = EACCES, _EBUSY = EBUSY, _EEXIST = EEXIST, _EXDEV = EXDEV
package let _ENOTDIR = ENOTDIR, _EISDIR = EISDIR, _EINVAL = EINVAL, _ENFILE = ENFILE, _EMFILE = EMFILE
package let _ETXTBSY = ETXTBSY, _EFBIG = EFBIG, _ENOSPC = ENOSPC, _EROFS = EROFS, _EMLINK = EMLINK
package let _ERANGE = ERANGE, _ENAMETOOLONG = ENAMETOOLONG, _ENOTEMPTY = ENOTEMPTY, _ELOOP = ELOOP
package let _EOPNOTSUPP = EOPNOTSUPP, _EDQUOT = EDQUOT, _ESTALE = ESTALE, _ENOSYS = ENOSYS
package let _EOVERFLOW = EOVERFLOW, _EWOULDBLOCK = EWOULDBLOCK, _ETIMEDOUT = ETIMEDOUT
/// "No such attribute": Linux's ENODATA; Darwin has no ENODATA for xattrs and reports ENOATTR.
#if canImport(Darwin)
package let _ENODATA = ENOATTR
#else
package let _ENODATA = ENODATA
#endif

// MARK: open(2) and fcntl(2)
package let _O_RDONLY = O_RDONLY, _O_WRONLY = O_WRONLY, _O_RDWR = O_RDWR, _O_CREAT = O_CREAT, _O_EXCL = O_EXCL
package let _O_APPEND = O_APPEND, _O_TRUNC = O_TRUNC, _O_NONBLOCK = O_NONBLOCK, _O_NOFOLLOW = O_NOFOLLOW
package let _O_CLOEXEC = O_CLOEXEC, _O_NOCTTY = O_NOCTTY
package let _F_GETFL = F_GETFL, _F_SETFL = F_SETFL
package let _AT_SYMLINK_NOFOLLOW = AT_SYMLINK_NOFOLLOW, _AT_REMOVEDIR = AT_REMOVEDIR, _AT_FDCWD = AT_FDCWD
package let _LOCK_EX = LOCK_EX, _LOCK_SH = LOCK_SH, _LOCK_NB = LOCK_NB, _LOCK_UN = LOCK_UN

// MARK: file types (st_mode and d_type)
package let _S_IFMT = UInt32(S_IFMT), _S_IFREG = UInt32(S_IFREG), _S_IFDIR = UInt32(S_IFDIR), _S_IFLNK = UInt32(S_IFLNK)
package let _S_IFIFO = UInt32(S_IFIFO), _S_IFSOCK = UInt32(S_IFSOCK), _S_IFCHR = UInt32(S_IFCHR), _S_IFBLK = UInt32(S_IFBLK)
package let _DT_REG = UInt8(DT_REG), _DT_DIR = UInt8(DT_DIR), _DT_LNK = UInt8(DT_LNK), _DT_FIFO = UInt8(DT_FIFO)
package let _DT_SOCK = UInt8(DT_SOCK), _DT_CHR = UInt8(DT_CHR), _DT_BLK = UInt8(DT_BLK)

// MARK: signals, clocks, standard descriptors
package let _SIGKILL = SIGKILL
package let _CLOCK_REALTIME = CLOCK_REALTIME, _CLOCK_MONOTONIC = CLOCK_MONOTONIC
package let _PATH_MAX = PATH_MAX
package let _STDIN_FILENO = STDIN_FILENO, _STDOUT_FILENO = STDOUT_FILENO, _STDERR_FILENO = STDERR_FILENO

extension FileStatus {
    /// From fstat(2)/stat(2). The time fields are `st_atim` on Linux and `st_atimespec` on Darwin; Darwin's
    /// stat carries no mount id (0: unknown).
    package init(_ s: CInterop.Stat) {
        #if canImport(Darwin)
        let a = s.st_atimespec, m = s.st_mtimespec, c = s.st_ctimespec
        #else
        let a = s.st_atim, m = s.st_mtim, c = s.st_ctim
        #endif
        let at = FileStatus.nanoseconds(Int64(a.tv_sec), Int64(a.tv_nsec))
        let mt = FileStatus.nanoseconds(Int64(m.tv_sec), Int64(m.tv_nsec))
        let ct = FileStatus.nanoseconds(Int64(c.tv_sec), Int64(c.tv_nsec))
        self.init(
            device: UInt64(truncatingIfNeeded: s.st_dev), inode: UInt64(truncatingIfNeeded: s.st_ino),
            type: FileType(mode: UInt32(s.st_mode)), permissions: UInt32(s.st_mode) & 0o7777,
            linkCount: UInt64(truncatingIfNeeded: s.st_nlink), userID: UInt32(s.st_uid),
            size: Int64(s.st_size), allocatedSize: FileStatus.bytes(blocks: UInt64(truncatingIfNeeded: s.st_blocks)),
            accessTimeNs: at.ns, modificationTimeNs: mt.ns, changeTimeNs: ct.ns,
            hasTimeOutOfRange: at.clamped || mt.clamped || ct.clamped)
        // Not an init parameter: without this, every fstat-ed status said gid 0 (a layout file's group compared
        // on its descriptor, and the previous group journalled for rollback, were wrong).
        groupID = UInt32(s.st_gid)
    }

    /// The st_mode file type bits of a C stat, for callers that only need the type.
    package static func type(of s: CInterop.Stat) -> FileType { FileType(mode: UInt32(s.st_mode)) }
}
