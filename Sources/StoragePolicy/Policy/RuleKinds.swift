// The settings of each rule kind, as plain values. Their meaning is defined in Docs/policy-reference.md
// and implemented by the evaluator; nothing here reads the disk.

/// `expire: { after: 24h, by: mtime }`
public struct Expire: Sendable, Hashable {
    public var after: PolicyDuration
    public var by: Timestamp

    public init(after: PolicyDuration, by: Timestamp = .mtime) {
        self.after = after; self.by = by
    }

    public enum Timestamp: String, Sendable, Hashable, CaseIterable {
        case mtime, atime, ctime
        /// The newest of atime, mtime and (for files) ctime: the systemd-tmpfiles default, the safest.
        case newest
    }
}

/// `trash: { retain: 30d }`
public struct TrashRetention: Sendable, Hashable {
    public var retain: PolicyDuration
    public var layout: Layout

    public init(retain: PolicyDuration, layout: Layout = .automatic) {
        self.retain = retain; self.layout = layout
    }

    public enum Layout: String, Sendable, Hashable, CaseIterable {
        /// FreeDesktop when the folder has `files/` and `info/`, else app.
        case automatic = "auto"
        /// `files/NAME` with `info/NAME.trashinfo` (the XDG trash specification).
        case freedesktop
        /// Items directly in the folder, stamped by `policyctl trash` with an xattr.
        case app
    }
}

/// `quota: { max: 512MiB, target: 90%, evict: oldest }`
public struct Quota: Sendable, Hashable {
    public var max: ByteSize
    public var target: Target
    public var evict: Eviction

    public init(max: ByteSize, target: Target = .percent(100), evict: Eviction = .oldest) {
        self.max = max; self.target = target; self.evict = evict
    }

    public enum Target: Sendable, Hashable {
        case size(ByteSize)
        /// A percentage of `max`.
        case percent(Double)

        public func bytes(of max: ByteSize) -> Int64 {
            switch self {
            case .size(let s): return s.bytes
            case .percent(let p): return Int64((Double(max.bytes) * p / 100).rounded(.down))
            }
        }
    }

    public enum Eviction: String, Sendable, Hashable, CaseIterable {
        /// Oldest modification time first.
        case oldest
        /// Least recently accessed first (atime; approximate on relatime/noatime mounts).
        case lru
    }
}

/// `naming: { case: lower }` and/or `naming: { pattern: '^[a-z0-9_]+\.txt$' }`
public struct Naming: Sendable, Hashable {
    public var letterCase: LetterCase?
    /// A regular expression every selected name must match in full; violations are reported, never fixed.
    public var pattern: String?

    public init(letterCase: LetterCase? = nil, pattern: String? = nil) {
        self.letterCase = letterCase; self.pattern = pattern
    }

    public enum LetterCase: String, Sendable, Hashable, CaseIterable {
        case lower
    }
}

/// `backup: { exclude: true, cacheTag: true }` (or `backup: exclude`): the exclusion marker on the scope.
public struct BackupExclusion: Sendable, Hashable {
    /// Also write a CACHEDIR.TAG.
    public var cacheDirectoryTag: Bool

    public init(cacheDirectoryTag: Bool = false) { self.cacheDirectoryTag = cacheDirectoryTag }
}
