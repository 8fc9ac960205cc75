// What a report says about one rule: its id, kind, default severity and a description people can act on
// (SARIF's rule entries, JUnit's test suites). Derived from the policy; it never invents a location.

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
        let summary: String
        let help: String
        switch rule.kind {
        case .expire(let e):
            summary = "Entries under \(scope) expire once their \(e.by.rawValue) is more than \(e.after) ago."
            help = "Entries past their age are deleted by `policyctl apply`; delete or move them, or adjust the rule's `after`."
        case .trash(let t):
            summary = "Items in the trash \(scope) are kept for \(t.retain) after they were trashed."
            help = "Items trashed longer ago are deleted by `policyctl apply`; empty the trash, or adjust `retain`."
        case .quota(let q):
            summary = "Files under \(scope) take at most \(q.max), evicting the \(q.evict == .oldest ? "oldest" : "least recently used") first."
            help = "The folder is over its quota: `policyctl apply` evicts the files listed; free space, or raise `max`."
        case .naming(let n):
            var parts: [String] = []
            if n.letterCase == .lower { parts.append("are lowercase") }
            if let p = n.pattern { parts.append("match /\(p)/") }
            summary = "Names under \(scope) \(parts.joined(separator: " and "))."
            help = n.letterCase != nil
                ? "`policyctl apply` renames them (Finder-style `name (2).ext` when the target is taken); rename them, or adjust the rule."
                : "Rename the entries so they match the pattern; patterns are reported, never fixed automatically."
        case .backup:
            summary = "\(scope.prefix(1).uppercased() + scope.dropFirst()) is excluded from backup."
            help = "Set the exclusion marker (`policyctl apply` does; on macOS `tmutil addexclusion`), so re-downloadable data stays out of backups."
        case .forbid(let globs):
            summary = "Nothing under \(scope) matches \(globs.map { "'\($0.pattern)'" }.joined(separator: ", "))."
            help = rule.mode == .audit
                ? "Move the entries where they belong (private data to Application Support, caches to Caches); the rule only reports."
                : "`policyctl apply` moves them to the trash; move them where they belong, or adjust the rule."
        case .custom(let custom):
            summary = custom.summary
            help = rule.mode == .audit
                ? "A rule written in Swift reported this entry; fix it, or adjust the rule."
                : "A rule written in Swift plans this change; `apply` makes it through the journal like any other."
        }
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
