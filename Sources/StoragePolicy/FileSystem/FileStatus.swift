// What fstatat(AT_SYMLINK_NOFOLLOW) says about one entry, as plain Swift values.
// Timestamps are nanoseconds since the epoch; sizes are bytes. Never describes a symlink's target.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

public enum FileType: String, Sendable, Hashable, Codable {
    case regular = "file", directory, symlink, fifo, socket, characterDevice = "char-device",
         blockDevice = "block-device", unknown

    init(mode: UInt32) {
        switch mode & UInt32(S_IFMT) {
        case UInt32(S_IFREG): self = .regular
        case UInt32(S_IFDIR): self = .directory
        case UInt32(S_IFLNK): self = .symlink
        case UInt32(S_IFIFO): self = .fifo
        case UInt32(S_IFSOCK): self = .socket
        case UInt32(S_IFCHR): self = .characterDevice
        case UInt32(S_IFBLK): self = .blockDevice
        default: self = .unknown
        }
    }

    /// From a dirent d_type; nil for DT_UNKNOWN (the caller must stat).
    init?(directoryEntryType t: UInt8) {
        switch Int32(t) {
        case Int32(DT_REG): self = .regular
        case Int32(DT_DIR): self = .directory
        case Int32(DT_LNK): self = .symlink
        case Int32(DT_FIFO): self = .fifo
        case Int32(DT_SOCK): self = .socket
        case Int32(DT_CHR): self = .characterDevice
        case Int32(DT_BLK): self = .blockDevice
        default: return nil
        }
    }
}

public struct FileStatus: Sendable, Hashable {
    public var device: UInt64
    public var inode: UInt64
    public var type: FileType
    public var permissions: UInt32
    public var linkCount: UInt64
    public var userID: UInt32
    public var size: Int64
    /// Allocated bytes (st_blocks * 512), what `du` counts.
    public var allocatedSize: Int64
    public var accessTimeNs: Int64
    public var modificationTimeNs: Int64
    public var changeTimeNs: Int64

    public init(device: UInt64, inode: UInt64, type: FileType, permissions: UInt32 = 0o644, linkCount: UInt64 = 1,
                userID: UInt32 = 0, size: Int64, allocatedSize: Int64, accessTimeNs: Int64,
                modificationTimeNs: Int64, changeTimeNs: Int64) {
        self.device = device; self.inode = inode; self.type = type; self.permissions = permissions
        self.linkCount = linkCount; self.userID = userID; self.size = size; self.allocatedSize = allocatedSize
        self.accessTimeNs = accessTimeNs; self.modificationTimeNs = modificationTimeNs; self.changeTimeNs = changeTimeNs
    }

    init(_ s: stat) {
        #if canImport(Darwin)
        let a = s.st_atimespec, m = s.st_mtimespec, c = s.st_ctimespec
        #else
        let a = s.st_atim, m = s.st_mtim, c = s.st_ctim
        #endif
        self.init(
            device: UInt64(truncatingIfNeeded: s.st_dev), inode: UInt64(truncatingIfNeeded: s.st_ino),
            type: FileType(mode: UInt32(s.st_mode)), permissions: UInt32(s.st_mode) & 0o7777,
            linkCount: UInt64(truncatingIfNeeded: s.st_nlink), userID: UInt32(s.st_uid),
            size: Int64(s.st_size), allocatedSize: Int64(s.st_blocks) * 512,
            accessTimeNs: Int64(a.tv_sec) * 1_000_000_000 + Int64(a.tv_nsec),
            modificationTimeNs: Int64(m.tv_sec) * 1_000_000_000 + Int64(m.tv_nsec),
            changeTimeNs: Int64(c.tv_sec) * 1_000_000_000 + Int64(c.tv_nsec))
    }

    /// The identity a plan records and apply re-checks before touching the entry.
    public var identity: EntryIdentity {
        EntryIdentity(device: device, inode: inode, size: size, modificationTimeNs: modificationTimeNs)
    }
}

/// (dev, ino, size, mtime): enough to tell that an entry is still the one a plan was made for.
public struct EntryIdentity: Sendable, Hashable, Codable {
    public var device: UInt64
    public var inode: UInt64
    public var size: Int64
    public var modificationTimeNs: Int64

    public init(device: UInt64, inode: UInt64, size: Int64, modificationTimeNs: Int64) {
        self.device = device; self.inode = inode; self.size = size; self.modificationTimeNs = modificationTimeNs
    }

    enum CodingKeys: String, CodingKey {
        case device = "dev", inode = "ino", size, modificationTimeNs = "mtimeNs"
    }
}
