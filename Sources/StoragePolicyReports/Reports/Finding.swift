// One audit finding: a pending action or a violation, seen as something a CI build should know about,
// with the rule that raised it, its severity and a fingerprint that stays the same from run to run.
// A value: building one never touches the disk, and its message never holds the raw (unescaped) path.

@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyModel
@_spi(Layers) import StoragePolicyPlan

public struct Finding: Sendable, Hashable {
    /// What the planner produced for this finding.
    public enum Source: Sendable, Hashable {
        /// A change `apply` would make (the tree has drifted from the policy).
        case action(Action.Kind)
        /// Something no action fixes, or an audit-mode rule's report.
        case violation

        /// `delete`, `rename`, ... for actions; `violation` otherwise. The `finding` field of the JSON report.
        public var name: String {
            switch self {
            case .action(let kind): kind.name
            case .violation: "violation"
            }
        }
    }

    /// The rule's name, or the layout's id for findings about required directories.
    public var rule: String
    public var path: RelativePath
    /// What is wrong, for people, without the path: `would delete: mtime 2d3h ago > 24h`.
    public var message: String
    public var severity: Rule.Severity
    public var source: Source
    /// Where the rule (or layout entry) is written in the policy file, when it came from a file.
    public var ruleLocation: PolicyLocation?
    /// True when the finding is in the baseline: reported, but it never fails the audit.
    public var isKnown: Bool
    /// Hex SHA-256 of the rule name, the kind of finding and the path bytes: the same finding on the next
    /// run has the same one, while its message (which holds ages and sizes) may change. The kind keeps two
    /// findings of one rule on one path apart (a layout directory to create and to mark).
    package let fingerprint: String

    package init(rule: String, path: RelativePath, message: String, severity: Rule.Severity, source: Source,
                ruleLocation: PolicyLocation? = nil, isKnown: Bool = false) {
        self.rule = rule; self.path = path; self.message = message; self.severity = severity
        self.source = source; self.ruleLocation = ruleLocation; self.isKnown = isKnown
        self.fingerprint = Finding.fingerprint(rule: rule, source: source, path: path)
    }

    /// The fingerprint of a (rule, kind of finding, path) triple. NULs separate them: a NUL occurs in none,
    /// so no two triples share the bytes that are hashed.
    package static func fingerprint(rule: String, source: Source, path: RelativePath) -> String {
        SHA256.hex(Array(rule.utf8) + [0] + Array(source.name.utf8) + [0] + path.bytes)
    }

    /// The finding for a pending action: `would delete: <reason>`, `would rename to <to>: <reason>`...
    package static func message(for action: Action) -> String {
        let verb: String
        switch action.kind {
        case .delete: verb = "would delete"
        case .rename(let to): verb = "would rename to \(to.escaped)"
        case .trash(let to): verb = "would move to the trash (\(to.escaped))"
        case .mkdir: verb = "would create the directory"
        case .setxattr(let name, _): verb = "would set \(name)"
        case .writeTag: verb = "would write CACHEDIR.TAG"
        case .unmark(let name): verb = "would remove \(name)"
        case .untag: verb = "would remove CACHEDIR.TAG"
        case .mkfile: verb = "would create the file"
        case .symlink(let target): verb = "would create the symlink to \(PathEscaping.escape(target))"
        case .setPermissions(let mode, let owner, let group):
            verb = "would set " + PlanRenderer.permissions(mode: mode, owner: owner, group: group)
        }
        return action.reason.isEmpty ? verb : "\(verb): \(action.reason)"
    }
}
