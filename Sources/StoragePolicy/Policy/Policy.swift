// A storage policy (language version 1): the layout that must exist and the rules evaluated over a root.
// A value: it holds no file handles and never touches the disk.

/// A storage policy (language version 1): the layout that must exist and the rules evaluated over a root.
///
/// Load one with `PolicyLoader`, or build one with the DSL: `try Policy("app") { Layout("tmp"); Rule.expire(...) }`.
public struct Policy: Sendable, Hashable {
    /// The policy language version (`version: 1`).
    public var version: Int
    /// The policy's name: recorded in plans, journals and reports.
    public var name: String
    /// What the policy is for, for people.
    public var description: String?
    /// Directories that must exist under the root.
    public var layout: [LayoutEntry]
    /// The rules, in policy order: earlier rules win ties.
    public var rules: [Rule]
    /// The policy's default blast-radius cap; `--max-delete` overrides it.
    public var maxDelete: DeleteLimit?
    /// The file the policy was loaded from, if any.
    public var source: PolicyLocation?
    /// The exact bytes it was loaded from: plans fingerprint them to detect a changed policy.
    public var sourceBytes: [UInt8]?

    /// A policy from its parts; the DSL and the loader validate, this initializer does not.
    public init(version: Int = 1, name: String, description: String? = nil, layout: [LayoutEntry] = [],
                rules: [Rule] = [], maxDelete: DeleteLimit? = nil, source: PolicyLocation? = nil,
                sourceBytes: [UInt8]? = nil) {
        self.version = version; self.name = name; self.description = description; self.layout = layout
        self.rules = rules; self.maxDelete = maxDelete; self.source = source; self.sourceBytes = sourceBytes
    }

    /// The folder soft-deleted items go to: the scope of the first `trash` rule, if the policy has one.
    public var trashFolder: RelativePath? {
        rules.lazy.compactMap { if case .trash = $0.kind { $0.path } else { nil } }.first
    }
}

/// A directory that must exist under the root.
public struct LayoutEntry: Sendable, Hashable {
    /// The directory, relative to the root.
    public var path: RelativePath
    /// `backup: exclude`: the directory carries the backup-exclusion marker.
    public var excludeFromBackup: Bool
    /// Also write a CACHEDIR.TAG (for tar, borg, restic).
    public var cacheDirectoryTag: Bool
    /// Where the entry is written in the policy file, when it came from one.
    public var location: PolicyLocation?

    /// A layout entry.
    public init(path: RelativePath, excludeFromBackup: Bool = false, cacheDirectoryTag: Bool = false,
                location: PolicyLocation? = nil) {
        self.path = path; self.excludeFromBackup = excludeFromBackup
        self.cacheDirectoryTag = cacheDirectoryTag; self.location = location
    }
}

/// `--max-delete N` or `N%` (of the entries scanned under the rules' scopes).
public enum DeleteLimit: Sendable, Hashable, CustomStringConvertible {
    case count(Int)
    case percent(Double)

    /// Parses `N` or `N%`; nil for anything else.
    public init?(parsing text: String) {
        if text.hasSuffix("%") {
            guard let p = Double(text.dropLast()), p >= 0, p <= 100 else { return nil }
            self = .percent(p)
        } else {
            guard let n = Int(text), n >= 0 else { return nil }
            self = .count(n)
        }
    }

    /// The number of deletions allowed out of `total` candidates.
    public func allowed(outOf total: Int) -> Int {
        switch self {
        case .count(let n): return n
        case .percent(let p): return Int((Double(total) * p / 100).rounded(.down))
        }
    }

    /// `N` or `N%`, as written.
    public var description: String {
        switch self {
        case .count(let n): return "\(n)"
        case .percent(let p): return p == p.rounded() ? "\(Int(p))%" : "\(p)%"
        }
    }
}
