// The DSL's vocabulary: `LayoutDirectory(...)` and modifiers for the keys every rule shares; each kind's
// `Rule.<kind>(...)` is in its Kinds/<Kind>Syntax.swift. Components only describe; nothing is checked until `Policy(_:content:)` builds them.

@_spi(Layers) import StoragePolicyFileSystem

/// `layout:` entry: a directory that must exist.
public struct LayoutDirectory: PolicyComponent {
    package let path: String
    package let excludeFromBackup: Bool
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
