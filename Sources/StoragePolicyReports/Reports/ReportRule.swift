// What a report says about one rule: its id, kind, default severity and a description people can act on
// (SARIF's rule entries, JUnit's test suites). Derived from the policy; it never invents a location.

@_spi(Layers) import StoragePolicyModel
@_spi(Layers) import StoragePolicyEvaluation

public struct ReportRule: Sendable, Hashable {
    /// The id findings refer to: the rule's name, or `layout` for the directories the layout requires.
    public var id: String
    /// The rule kind's keyword (`expire`, `forbid`, ...), or `layout`.
    public var kind: String
    public var mode: Rule.Mode
    /// The severity its findings carry.
    public var severity: Rule.Severity
    /// One line: what the rule keeps true.
    public var summary: String
    /// The rule in full: scope, patterns, mode.
    public var details: String
    /// What to do about a finding.
    public var help: String
    public var location: PolicyLocation?

    package init(id: String, kind: String, mode: Rule.Mode = .enforce, severity: Rule.Severity, summary: String,
                details: String, help: String, location: PolicyLocation? = nil) {
        self.id = id; self.kind = kind; self.mode = mode; self.severity = severity; self.summary = summary
        self.details = details; self.help = help; self.location = location
    }

    /// The id layout findings carry when the planner names them after the layout as a whole.
    package static let layoutID = "layout"

    /// The default severity of layout findings: a missing required directory is an error, as forbid is.
    package static let layoutSeverity = Rule.Severity.error

    /// The descriptor of a policy rule.
    package init(_ rule: Rule) {
        let scope = rule.path.isRoot ? "the root" : "'\(rule.path.escaped)'"
        let behavior = rule.kind.behavior
        let summary = behavior.summary(of: rule, scope: scope)
        let help = behavior.help(for: rule)
        var details = "Rule '\(rule.name)' (\(rule.kind.keyword), \(rule.mode.rawValue) mode): \(summary)"
        if !rule.match.isEmpty { details += " Applies to \(rule.match.map { "'\($0.pattern)'" }.joined(separator: ", "))." }
        if !rule.exclude.isEmpty { details += " Never to \(rule.exclude.map { "'\($0.pattern)'" }.joined(separator: ", "))." }
        if let location = rule.location { details += " Defined at \(location)." }
        self.init(id: rule.name, kind: rule.kind.keyword, mode: rule.mode, severity: rule.effectiveSeverity,
                  summary: summary, details: details, help: help, location: rule.location)
    }

    /// The descriptor of the policy's layout (the directories that must exist).
    package static func layout(_ entries: [LayoutEntry], id: String = layoutID) -> ReportRule {
        let paths = entries.map { "'\($0.path.escaped)'" }
        let summary = paths.isEmpty
            ? "The directories the policy's layout requires exist."
            : "The directories \(paths.joined(separator: ", ")) exist\(entries.contains(where: \.excludeFromBackup) ? ", excluded from backup where the layout says so" : "")."
        var details = "The policy's layout: \(summary)"
        if let location = entries.first?.location { details += " Defined from \(location)." }
        return ReportRule(id: id, kind: "layout", severity: layoutSeverity, summary: summary, details: details,
                          help: "`policyctl apply` creates missing directories and sets missing markers; a file where a directory must be is never replaced: move it away.",
                          location: entries.first?.location)
    }
}
