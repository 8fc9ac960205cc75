// The settings of each rule kind, as plain values. Their meaning is defined in Docs/policy-reference.md
// and implemented by the evaluator; nothing here reads the disk.

/// `expire: { after: 24h, by: mtime }`
public struct Expire: Sendable, Hashable {
    /// Entries older than this are deleted.
    public var after: PolicyDuration
    /// The timestamp age is judged by.
    public var by: Timestamp
    /// `keep: N`: in each directory, the N newest selected entries (or units) stay, expired or not.
    public var keep: Int
    /// What one deletion is: an entry, or (`unit: directory`) a direct child folder of the scope as a whole.
    public var unit: RetentionUnit

    /// Expire after `after`, judged by `by`, keeping the `keep` newest per directory.
    public init(after: PolicyDuration, by: Timestamp = .mtime, keep: Int = 0, unit: RetentionUnit = .entry) {
        self.after = after; self.by = by; self.keep = keep; self.unit = unit
    }

    /// Which timestamp an entry's age is measured from.
    public enum Timestamp: String, Sendable, Hashable, CaseIterable {
        case mtime, atime, ctime
        /// The newest of atime, mtime, btime (where recorded) and (for files) ctime: the safest, and
        /// systemd-tmpfiles' default (`abcmABM`).
        case newest
        /// The birth time (statx btime). Where the file system records none, entries are skipped (kept).
        case birth
    }
}

/// `unit:` of expire and quota: what is judged, and deleted, as one.
public enum RetentionUnit: String, Sendable, Hashable, CaseIterable {
    /// Every selected entry on its own (version 1.0 behaviour).
    case entry
    /// Each direct child folder of the scope, whole, dated by the newest entry inside it; files directly in
    /// the scope are units of their own.
    case directory
}

/// `trash: { retain: 30d }`
public struct TrashRetention: Sendable, Hashable {
    /// Items trashed longer ago than this are deleted.
    public var retain: PolicyDuration
    /// How the trash folder is organised.
    public var layout: Layout
    /// After retention, the items trashed longest ago go until the trash holds at most this; nil: no cap.
    public var maxSize: ByteSize?

    /// Keep trashed items for `retain`, and (with `maxSize`) the trash at most that big.
    public init(retain: PolicyDuration, layout: Layout = .automatic, maxSize: ByteSize? = nil) {
        self.retain = retain; self.layout = layout; self.maxSize = maxSize
    }

    /// The layout of a trash folder (declared with TrashFolder, in FileSystem/TrashFolder.swift).
    public typealias Layout = TrashFolder.Layout
}

/// `quota: { max: 512MiB, target: 90%, evict: oldest }`
public struct Quota: Sendable, Hashable {
    /// The most the scope's regular files may take (allocated bytes, as `du`).
    public var max: ByteSize
    /// What eviction brings the total down to.
    public var target: Target
    /// Which files go first.
    public var evict: Eviction
    /// No unit younger than this is evicted; nil: any age.
    public var minAge: PolicyDuration?
    /// The N newest units are never evicted.
    public var keep: Int
    /// What one eviction is: a file, or (`unit: directory`) a direct child folder of the scope as a whole.
    public var unit: RetentionUnit

    /// A quota of `max`, evicting down to `target`.
    public init(max: ByteSize, target: Target = .percent(100), evict: Eviction = .oldest,
                minAge: PolicyDuration? = nil, keep: Int = 0, unit: RetentionUnit = .entry) {
        self.max = max; self.target = target; self.evict = evict
        self.minAge = minAge; self.keep = keep; self.unit = unit
    }

    /// Where eviction stops: a size, or a percentage of `max`.
    public enum Target: Sendable, Hashable {
        case size(ByteSize)
        /// A percentage of `max`.
        case percent(Double)

        /// The target in bytes, for a quota of `max`.
        public func bytes(of max: ByteSize) -> Int64 {
            switch self {
            case .size(let s): return s.bytes
            case .percent(let p): return Int64((Double(max.bytes) * p / 100).rounded(.down))
            }
        }
    }

    /// The order files are evicted in (ties break by path).
    public enum Eviction: String, Sendable, Hashable, CaseIterable {
        /// Oldest modification time first.
        case oldest
        /// Least recently accessed first (atime; approximate on relatime/noatime mounts).
        case lru
    }
}

/// `naming: { case: lower }` and/or `naming: { pattern: '^[a-z0-9_]+\.txt$' }`
public struct Naming: Sendable, Hashable {
    /// `case: lower` renames names with uppercase letters; nil leaves case alone.
    public var letterCase: LetterCase?
    /// A regular expression every selected name must match in full; violations are reported, never fixed.
    public var pattern: String?

    /// A naming rule: a case to enforce, a pattern to report, or both.
    public init(letterCase: LetterCase? = nil, pattern: String? = nil) {
        self.letterCase = letterCase; self.pattern = pattern
    }

    /// The letter case names must have.
    public enum LetterCase: String, Sendable, Hashable, CaseIterable {
        case lower
    }
}

/// `backup: { exclude: true, cacheTag: true }` (or `backup: exclude`): the exclusion marker on the scope.
public struct BackupExclusion: Sendable, Hashable {
    /// Also write a CACHEDIR.TAG.
    public var cacheDirectoryTag: Bool

    /// Exclusion marker, and a CACHEDIR.TAG when `cacheDirectoryTag`.
    public init(cacheDirectoryTag: Bool = false) { self.cacheDirectoryTag = cacheDirectoryTag }
}
