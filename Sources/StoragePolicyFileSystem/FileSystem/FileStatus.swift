// What statx(AT_SYMLINK_NOFOLLOW) says about one entry, as plain Swift values, with the id of its mount.
// Timestamps are nanoseconds since the epoch, clamped (and flagged) when the file's own seconds do not fit;
// sizes are bytes. Never describes a symlink's target; never traps on any value a file system returns.
internal import CPosix

public enum FileType: String, Sendable, Hashable, Codable {
    case regular = "file", directory, symlink, fifo, socket, characterDevice = "char-device",
         blockDevice = "block-device", unknown

    /// `rawValue` as a literal, for records written without a String (JSONWriter.literalString).
    package var literalName: StaticString {
        switch self {
        case .regular: "file"
        case .directory: "directory"
        case .symlink: "symlink"
        case .fifo: "fifo"
        case .socket: "socket"
        case .characterDevice: "char-device"
        case .blockDevice: "block-device"
        case .unknown: "unknown"
        }
    }

    package init(mode: UInt32) {
        switch mode & _S_IFMT {
        case _S_IFREG: self = .regular
        case _S_IFDIR: self = .directory
        case _S_IFLNK: self = .symlink
        case _S_IFIFO: self = .fifo
        case _S_IFSOCK: self = .socket
        case _S_IFCHR: self = .characterDevice
        case _S_IFBLK: self = .blockDevice
        default: self = .unknown
        }
    }

    /// From a dirent d_type; nil for DT_UNKNOWN (the caller must stat).
    package init?(directoryEntryType t: UInt8) {
        switch t {
        case _DT_REG: self = .regular
        case _DT_DIR: self = .directory
        case _DT_LNK: self = .symlink
        case _DT_FIFO: self = .fifo
        case _DT_SOCK: self = .socket
        case _DT_CHR: self = .characterDevice
        case _DT_BLK: self = .blockDevice
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
    package var accessTimeNs: Int64
    package var modificationTimeNs: Int64
    package var changeTimeNs: Int64
    /// The id of the mount holding the entry (statx STATX_MNT_ID, else name_to_handle_at); 0 when unknown.
    /// A bind mount of another folder has the device of its source but a mount id of its own.
    public var mountID: UInt64
    /// True when a timestamp's seconds lie outside what nanoseconds since the epoch can hold (before
    /// 1677-09-21 or after 2262-04-11): the times above are clamped to Int64.min/max, and the entry is not
    /// judged by them (the walk reports it as skipped; apply sees it as changed and keeps it).
    public var hasTimeOutOfRange: Bool
    /// The birth time (statx btime) in ns since the epoch; nil where the file system records none.
    package var birthTimeNs: Int64?
    /// The owning group (st_gid), for rules' `group:` filters.
    public var groupID: UInt32 = 0

    package init(device: UInt64, inode: UInt64, type: FileType, permissions: UInt32 = 0o644, linkCount: UInt64 = 1,
                userID: UInt32 = 0, size: Int64, allocatedSize: Int64, accessTimeNs: Int64,
                modificationTimeNs: Int64, changeTimeNs: Int64, mountID: UInt64 = 0, hasTimeOutOfRange: Bool = false,
                birthTimeNs: Int64? = nil) {
        self.birthTimeNs = birthTimeNs
        self.device = device; self.inode = inode; self.type = type; self.permissions = permissions
        self.linkCount = linkCount; self.userID = userID; self.size = size; self.allocatedSize = allocatedSize
        self.accessTimeNs = accessTimeNs; self.modificationTimeNs = modificationTimeNs; self.changeTimeNs = changeTimeNs
        self.mountID = mountID; self.hasTimeOutOfRange = hasTimeOutOfRange
    }

    init(_ s: cposix_stat) {
        let at = FileStatus.nanoseconds(s.atime_sec, Int64(s.atime_nsec))
        let mt = FileStatus.nanoseconds(s.mtime_sec, Int64(s.mtime_nsec))
        let ct = FileStatus.nanoseconds(s.ctime_sec, Int64(s.ctime_nsec))
        self.init(
            device: s.dev, inode: s.ino, type: FileType(mode: s.mode), permissions: s.mode & 0o7777,
            linkCount: s.nlink, userID: s.uid, size: s.size, allocatedSize: FileStatus.bytes(blocks: s.blocks),
            accessTimeNs: at.ns, modificationTimeNs: mt.ns, changeTimeNs: ct.ns, mountID: s.mnt_id,
            hasTimeOutOfRange: at.clamped || mt.clamped || ct.clamped,
            // A birth time out of range is no birth time: rules by birth keep the entry.
            birthTimeNs: s.has_btime != 0 ? FileStatus.birth(s.btime_sec, Int64(s.btime_nsec)) : nil)
        groupID = s.gid
    }

    /// `seconds` and `nanoseconds` as nanoseconds since the epoch, clamped to Int64's range when they do not fit:
    /// any user can set a file's time to ±2^63 seconds (utimensat), and tmpfs keeps it.
    package static func nanoseconds(_ seconds: Int64, _ nanoseconds: Int64) -> (ns: Int64, clamped: Bool) {
        let (scaled, o1) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let (sum, o2) = scaled.addingReportingOverflow(nanoseconds)
        if o1 || o2 { return (seconds < 0 ? .min : .max, true) }
        return (sum, false)
    }

    package static func birth(_ seconds: Int64, _ fraction: Int64) -> Int64? {
        let (ns, clamped) = FileStatus.nanoseconds(seconds, fraction)
        return clamped ? nil : ns
    }

    /// st_blocks in bytes (512-byte units), saturating rather than trapping.
    package static func bytes(blocks: UInt64) -> Int64 {
        let (b, o) = Int64(clamping: blocks).multipliedReportingOverflow(by: 512)
        return o ? .max : b
    }

    /// True when `other` is on the same mount as this entry: the same device and, where both mount ids are
    /// known, the same mount id. Every "never cross a mount" check asks this, not the device alone, since
    /// a bind mount of an outside folder has the device of the folder it shows.
    public func isOnSameMount(as other: FileStatus) -> Bool {
        device == other.device && (mountID == 0 || other.mountID == 0 || mountID == other.mountID)
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
    package var modificationTimeNs: Int64

    package init(device: UInt64, inode: UInt64, size: Int64, modificationTimeNs: Int64) {
        self.device = device; self.inode = inode; self.size = size; self.modificationTimeNs = modificationTimeNs
    }

    package enum CodingKeys: String, CodingKey {
        case device = "dev", inode = "ino", size, modificationTimeNs = "mtimeNs"
    }
}
