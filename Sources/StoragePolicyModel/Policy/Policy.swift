// A storage policy (language version 1): the layout that must exist and the rules evaluated over a root.
// A value: it holds no file handles and never touches the disk.

@_spi(Layers) import StoragePolicyFileSystem

/// A storage policy (language version 1): the layout that must exist and the rules evaluated over a root.
///
/// Load one with `PolicyLoader`, or build one with the DSL: `try Policy("app") { LayoutDirectory("tmp"); Rule.expire(...) }`.
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
    /// The top-level `pressure:` list (Pressure.swift).
    public var pressure: [PressureRule] = []
    /// The top-level `roots:` list (PolicyRoots.swift): empty for a policy over the one root `--root` names.
    public var roots: [PolicyRoot] = []
    /// `quarantine: 7d`: deletes are moved into the quarantine for this long, undoable until purged (Quarantine.swift);
    /// nil: deletes are plain deletes unless a rule says otherwise.
    public var quarantine: PolicyDuration? = nil
    /// `journal: { keep: N, history: SIZE }` (Quarantine.swift).
    public var journal = JournalRetention()
    /// The `trash: { discover: true }` rules, kept out of `rules` (PolicyRoots.swift): each runs on every trash
    /// folder discovery finds, as a root of its own, and never over a root a run names.
    public var discoveringTrash: [Rule] = []
    /// The file the policy was loaded from, if any.
    public var source: PolicyLocation?
    /// The exact bytes it was loaded from: plans fingerprint them to detect a changed policy.
    package var sourceBytes: [UInt8]?
    /// Every file `extends:` pulled in, in the order they were read (empty without `extends`).
    public var inherited: [InheritedSource] = []

    /// A policy from its parts; the DSL and the loader validate, this initializer does not.
    public init(version: Int = 1, name: String, description: String? = nil, layout: [LayoutEntry] = [],
                rules: [Rule] = [], maxDelete: DeleteLimit? = nil, source: PolicyLocation? = nil,
                sourceBytes: [UInt8]? = nil) {
        self.version = version; self.name = name; self.description = description; self.layout = layout
        self.rules = rules; self.maxDelete = maxDelete; self.source = source; self.sourceBytes = sourceBytes
    }

    /// What a plan's fingerprint hashes: the policy's own bytes, then (with `extends`) each inherited file's
    /// name and bytes, so changing any file in the chain makes a saved plan stale. Nil for a policy built in code.
    package var fingerprintBytes: [UInt8]? {
        guard var bytes = sourceBytes else { return nil }
        for source in inherited {
            // Lengths frame each part, so no two different chains hash the same bytes.
            bytes += Array("\0extends \(source.name.utf8.count):\(source.name)\(source.bytes.count)\0".utf8)
            bytes += source.bytes
        }
        return bytes
    }

    /// The folder soft-deleted items go to: the scope of the first `trash` rule, if the policy has one.
    public var trashFolder: RelativePath? {
        rules.lazy.compactMap { if case .trash = $0.kind { $0.path } else { nil } }.first
    }
}

/// What a layout entry makes: a directory (tmpfiles `d`), a file (`f`) or a symlink (`L`).
public enum LayoutType: String, Sendable, Hashable, CaseIterable {
    case directory, file, symlink
}

/// A directory that must exist under the root.
public struct LayoutEntry: Sendable, Hashable {
    /// The directory, relative to the root.
    public var path: RelativePath
    /// `backup: exclude`: the directory carries the backup-exclusion marker.
    public var excludeFromBackup: Bool
    /// Also write a CACHEDIR.TAG (for tar, borg, restic).
    public var cacheDirectoryTag: Bool
    /// `backup: include`: markers this engine writes are removed where present (and audit reports them).
    public var includeInBackup: Bool = false
    /// Where the entry is written in the policy file, when it came from one.
    public var location: PolicyLocation?
    /// `mode: "0750"`: the permission bits (0 to 07777) the directory must have; nil leaves them alone.
    public var mode: UInt32?
    /// `owner:`: the user that must own the directory; nil leaves it alone.
    public var owner: PrincipalFilter?
    /// `group:`: the group the directory must have; nil leaves it alone.
    public var group: PrincipalFilter?
    /// `fix: true`: repair the mode and ownership of a directory that exists. Without it a directory the run
    /// did not create is never chmodded or chowned: its drift is only reported.
    public var fix: Bool = false
    /// `type:`: what must be at the path, as tmpfiles' `d`, `f` and `L` lines say.
    public var type: LayoutType = .directory
    /// `target:` of a `type: symlink` entry: what the link must point to, byte for byte.
    public var target: [UInt8]?
    /// `content:` of a `type: file` entry: what a file the layout creates holds (empty when not given).
    public var content: [UInt8] = []

    /// `0750`: permission bits as the policy writes them (four octal digits).
    public static func octal(_ bits: UInt32) -> String {
        let digits = String(bits, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    /// The most a layout file's `content:` may hold: it is written in one step, journalled whole.
    public static let contentLimit = 64 * 1024

    /// `mode:`'s text as permission bits: 3 or 4 octal digits ("0750"), else nil. YAML and the Swift DSL both
    /// take it as text, so both go through this, and through `invalidMode` when it is nil.
    package static func modeBits(_ text: String) -> UInt32? {
        guard (3...4).contains(text.count), text.allSatisfy({ ("0"..."7").contains($0) }), let bits = UInt32(text, radix: 8),
              bits <= 0o7777 else { return nil }
        return bits
    }

    /// What is said of a `mode:` that `modeBits` refuses.
    package static func invalidMode(_ text: String) -> String {
        "invalid mode '\(text)' (expected 3 or 4 octal digits, e.g. \"0750\")"
    }

    /// What is wrong with a symlink's `target:` (empty, longer than PATH_MAX - 1 bytes, or holding a NUL), or nil.
    package static func targetProblem(_ target: String) -> String? {
        target.isEmpty || target.utf8.count > 4095 || target.utf8.contains(0)
            ? "a symlink's target must be 1 to 4095 bytes with no NUL" : nil
    }

    /// What is wrong with a file's `content:` (more than `contentLimit` bytes), or nil.
    package static func contentProblem(_ content: String) -> String? {
        content.utf8.count > contentLimit
            ? "'content' is \(content.utf8.count) bytes; a layout file holds at most \(contentLimit)" : nil
    }

    /// `directory`, `file` or `symlink`, as messages name the entry.
    public var noun: String { type == .directory ? "layout directory" : "layout \(type.rawValue)" }

    /// True when the entry says anything about mode or ownership.
    public var hasAttributes: Bool { mode != nil || owner != nil || group != nil }

    /// A layout entry.
    public init(path: RelativePath, excludeFromBackup: Bool = false, cacheDirectoryTag: Bool = false,
                location: PolicyLocation? = nil) {
        self.path = path; self.excludeFromBackup = excludeFromBackup
        self.cacheDirectoryTag = cacheDirectoryTag; self.location = location
    }
}

/// `--max-delete N` or `N%` (of the entries scanned under the rules' scopes). A percentage has a floor,
/// `atLeast`, so a cap still lets a small tree be cleaned: the policy's bare `25%` and the DSL's `.percent(25)`
/// both mean `atLeast: 10`. Only the command line's `--max-delete N%` (``init(parsing:)``) has none.
public enum DeleteLimit: Sendable, Hashable, CustomStringConvertible {
    case count(Int)
    /// `percent` of the entries scanned, but never fewer than `atLeast` (10 unless given: without a floor a
    /// small container, where one file is already 25%, would be refused at every launch).
    case percent(Double, atLeast: Int = DeleteLimit.defaultFloor)

    /// The floor a bare percentage gets (`{ percent: N%, atLeast: 10 }`), in YAML and in the DSL alike.
    public static let defaultFloor = 10

    /// Parses `N` or `N%` (a percentage without a floor, as `--max-delete` takes it: the operator states the
    /// exact cap for one run); nil for anything else.
    public init?(parsing text: String) {
        if text.hasSuffix("%") {
            guard let p = DeleteLimit.percentage(text) else { return nil }
            self = .percent(p, atLeast: 0)
        } else {
            guard let n = Int(text), n >= 0 else { return nil }
            self = .count(n)
        }
    }

    /// `N%` with 0 <= N <= 100, as a number.
    static func percentage(_ text: String) -> Double? {
        guard text.hasSuffix("%"), let p = Double(text.dropLast()), p >= 0, p <= 100 else { return nil }
        return p
    }

    /// The number of deletions allowed out of `total` candidates.
    package func allowed(outOf total: Int) -> Int {
        switch self {
        case .count(let n): return n
        case .percent(let p, let floor): return Swift.max(floor, Int((Double(total) * p / 100).rounded(.down)))
        }
    }

    /// `N`, `N%`, or `N% (at least M)`.
    public var description: String {
        switch self {
        case .count(let n): return "\(n)"
        case .percent(let p, let floor):
            let percent = p == p.rounded() ? "\(Int(p))%" : "\(p)%"
            return floor > 0 ? "\(percent) (at least \(floor))" : percent
        }
    }
}

/// One file (or bundled policy) that `extends:` pulled into a policy.
public struct InheritedSource: Sendable, Hashable {
    /// A bundled policy's name (`bundled:NAME`), or the file's path as the extending policy resolved it.
    public var name: String
    /// The bytes it was read from.
    public var bytes: [UInt8]
    /// An inherited source.
    public init(name: String, bytes: [UInt8]) { self.name = name; self.bytes = bytes }
}
