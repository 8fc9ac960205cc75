// One rule: a scope under the root, optional globs that narrow it, and exactly one kind of behaviour.
// A rule never names anything outside the root: its scope is a RelativePath.

@_spi(Layers) import StoragePolicyFileSystem

/// One rule of a policy: a scope under the root, optional globs narrowing it, and one kind of behaviour.
public struct Rule: Sendable, Hashable {
    /// The rule's name, unique in the policy: findings, actions and journal entries name it.
    public var name: String
    /// The rule's scope, relative to the root; the empty path is the root itself.
    public var path: RelativePath
    /// Entries (scope-relative) the rule applies to; empty means every entry in the scope.
    public var match: [Glob]
    /// Entries (scope-relative) the rule never applies to, even when `match` selects them.
    public var exclude: [Glob]
    /// Which entry types the rule considers; nil means the kind's default.
    public var type: EntryTypeFilter?
    /// Enforce (plan changes) or audit (report only).
    public var mode: Mode
    /// Severity of findings in `audit`; nil means the kind's default.
    public var severity: Severity?
    /// What the rule does.
    public var kind: Kind
    /// Where the rule is written in the policy file, when it came from one.
    public var location: PolicyLocation?
    /// `inUse:` whether the rule's deletes skip entries open in a process or flocked.
    public var inUse: InUseHandling = .skip
    /// `size:`, `owner:`, `group:` and `case:` beside `match`: what the rule selects beyond its globs.
    public var filters = EntryFilters()
    /// `regenerable: true`: what the rule evicts can be fetched or rebuilt again, so pressure rules may name it.
    public var regenerable = false
    /// `quarantine:` its own window (or `none`) for its deletes; nil: the policy's (Quarantine.swift).
    public var quarantine: QuarantineSetting? = nil

    /// A rule; `PolicyValidator` (run by the loader and the DSL) checks it.
    public init(name: String, path: RelativePath, match: [Glob] = [], exclude: [Glob] = [],
                type: EntryTypeFilter? = nil, mode: Mode = .enforce, severity: Severity? = nil,
                kind: Kind, location: PolicyLocation? = nil) {
        self.name = name; self.path = path; self.match = match; self.exclude = exclude; self.type = type
        self.mode = mode; self.severity = severity; self.kind = kind; self.location = location
    }

    /// Whether a rule changes the tree or only reports.
    public enum Mode: String, Sendable, Hashable, CaseIterable {
        /// Plan and apply the changes.
        case enforce
        /// Report only; never change anything.
        case audit
    }

    /// How serious a rule's findings are in `audit`.
    public enum Severity: String, Sendable, Hashable, CaseIterable, Comparable, Codable {
        case note, warning, error
        /// note < warning < error.
        public static func < (a: Severity, b: Severity) -> Bool {
            let order: [Severity] = [.note, .warning, .error]
            return order.firstIndex(of: a)! < order.firstIndex(of: b)!
        }
    }

    /// The severity findings of this rule carry: the rule's own, else its kind's default.
    public var effectiveSeverity: Severity {
        severity ?? kind.syntaxType.defaultSeverity
    }

    /// True when a scope-relative path is selected by `match` and not removed by `exclude`.
    package func selects(_ relative: RelativePath) -> Bool {
        if exclude.contains(where: { $0.matches(relative) }) { return false }
        return match.isEmpty || match.contains { $0.matches(relative) }
    }
}

/// `inUse:` on a rule of a kind that deletes (RuleKindSyntax.honoursInUse).
public enum InUseHandling: String, Sendable, Hashable, CaseIterable {
    /// Keep (and report) an entry open in some process or holding a BSD flock: the default.
    case skip
    /// Delete it all the same.
    case ignore
}

/// `type:` on a rule.
public enum EntryTypeFilter: String, Sendable, Hashable, CaseIterable {
    case file, directory, symlink, any

    /// True when entries of type `t` pass this filter.
    public func admits(_ t: FileType) -> Bool {
        switch self {
        case .any: return true
        case .file: return t == .regular
        case .directory: return t == .directory
        case .symlink: return t == .symlink
        }
    }
}
