// The DSL's vocabulary: `LayoutDirectory(...)` and one `Rule.<kind>(...)` per YAML kind, with modifiers for the
// keys every rule shares. Components only describe; nothing is checked until `Policy(_:content:)` builds them.

/// `layout:` entry: a directory that must exist.
public struct LayoutDirectory: PolicyComponent {
    let path: String
    let excludeFromBackup: Bool
    let cacheTag: Bool

    /// A directory that must exist; `excludeFromBackup` marks it, `cacheTag` also writes a CACHEDIR.TAG.
    public init(_ path: String, excludeFromBackup: Bool = false, cacheTag: Bool = false) {
        self.path = path; self.excludeFromBackup = excludeFromBackup; self.cacheTag = cacheTag
    }

    /// The layout entry.
    public var policyParts: [PolicyPart] { [.layout(path: path, excludeFromBackup: excludeFromBackup, cacheTag: cacheTag)] }
}

extension RuleDraft: PolicyComponent {
    /// The rule.
    public var policyParts: [PolicyPart] { [.rule(self)] }

    /// `match:` — only entries matching one of these globs (scope-relative).
    public func matching(_ patterns: String...) -> RuleDraft { with { $0.match += patterns } }
    /// `exclude:` — never entries matching one of these globs.
    public func excluding(_ patterns: String...) -> RuleDraft { with { $0.exclude += patterns } }
    /// `type:` — only entries of this type.
    public func type(_ type: EntryTypeFilter) -> RuleDraft { with { $0.type = type } }
    /// `mode: audit` — report, never change.
    public func audit() -> RuleDraft { with { $0.mode = .audit } }
    /// `severity:` of this rule's findings.
    public func severity(_ severity: Rule.Severity) -> RuleDraft { with { $0.severity = severity } }

    private func with(_ change: (inout RuleDraft) -> Void) -> RuleDraft {
        var copy = self
        change(&copy)
        return copy
    }
}

extension Rule {
    /// `expire: { after:, by: }` — delete entries older than `after`.
    public static func expire(_ name: String, in path: String, after: PolicyDuration,
                              by: Expire.Timestamp = .mtime) -> RuleDraft {
        RuleDraft(name: name, path: path, kind: .ready(.expire(Expire(after: after, by: by))))
    }

    /// `trash: { retain: }` — empty a trash folder of items trashed longer ago than `retain`.
    public static func trash(_ name: String, in path: String, retain: PolicyDuration,
                             layout: TrashRetention.Layout = .automatic) -> RuleDraft {
        RuleDraft(name: name, path: path, kind: .ready(.trash(TrashRetention(retain: retain, layout: layout))))
    }

    /// `quota: { max:, target:, evict: }` — keep a folder's files under `max`, evicting down to `target`.
    public static func quota(_ name: String, in path: String, max: ByteSize, target: Quota.Target = .percent(100),
                             evict: Quota.Eviction = .oldest) -> RuleDraft {
        RuleDraft(name: name, path: path, kind: .ready(.quota(Quota(max: max, target: target, evict: evict))))
    }

    /// `naming: { case:, pattern: }` — lowercase names, or report names that do not match `pattern`.
    public static func naming(_ name: String, in path: String, case letterCase: Naming.LetterCase? = nil,
                              pattern: String? = nil) -> RuleDraft {
        RuleDraft(name: name, path: path, kind: .ready(.naming(Naming(letterCase: letterCase, pattern: pattern))))
    }

    /// `backup: exclude` — the scope carries the backup-exclusion marker (and optionally a CACHEDIR.TAG).
    public static func excludeFromBackup(_ name: String, in path: String, cacheTag: Bool = false) -> RuleDraft {
        RuleDraft(name: name, path: path, kind: .ready(.backup(BackupExclusion(cacheDirectoryTag: cacheTag))))
    }

    /// `forbid: [...]` — entries that must not exist.
    public static func forbid(_ name: String, in path: String, _ patterns: String...) -> RuleDraft {
        RuleDraft(name: name, path: path, kind: .forbid(patterns))
    }
}

extension ByteSize {
    /// `n` bytes.
    public static func bytes(_ n: Int64) -> ByteSize { ByteSize(bytes: n) }
    /// `n` KiB (1,024 bytes each).
    public static func kibibytes(_ n: Int64) -> ByteSize { ByteSize(bytes: n << 10) }
    /// `n` MiB.
    public static func mebibytes(_ n: Int64) -> ByteSize { ByteSize(bytes: n << 20) }
    /// `n` GiB.
    public static func gibibytes(_ n: Int64) -> ByteSize { ByteSize(bytes: n << 30) }
}
