// `audit` is `plan` seen as findings: every pending action and every violation, with its rule, severity and
// baseline state, plus what decides pass or fail. Built from a Plan and its Policy; it never reads the disk.

@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyModel
@_spi(Layers) import StoragePolicyPlan

/// Every change a plan proposes and every violation as findings with a severity, for CI report formats.
public struct AuditReport: Sendable {
    /// The policy's name.
    public var policy: String
    /// The policy file as the user named it, when the policy came from a file.
    public var policyFile: String?
    /// The audited root, absolute.
    public var root: String
    /// When the plan was made (RFC 3339, UTC).
    public var createdAt: String
    /// Entries the walk listed.
    public var entriesScanned: Int
    /// Every rule of the policy (the layout first, when it has one), then any rule a finding names that the
    /// policy does not: reports list clean rules too.
    public var rules: [ReportRule]
    /// Sorted by path, then rule, then message.
    public private(set) var findings: [Finding]
    /// Entries the walk could not judge.
    public var skipped: [SkippedEntry]
    /// Remarks for people.
    public var notes: [String]
    /// Findings at or above this severity fail the audit, unless the baseline knows them.
    public var failOn: Rule.Severity
    /// True when a baseline was applied (reports then say which findings are new).
    public private(set) var usesBaseline: Bool
    /// Baseline entries no finding matches any more: fixed since the baseline was written.
    public private(set) var fixedSinceBaseline: [Baseline.Entry]

    /// The findings of `plan` against `policy`, with `baseline`'s known findings marked.
    public init(plan: Plan, policy: Policy, baseline: Baseline? = nil, failOn: Rule.Severity = .warning) {
        self.policy = plan.policy
        self.policyFile = policy.source?.file
        self.root = plan.root
        self.createdAt = plan.createdAt
        self.entriesScanned = plan.summary.entriesScanned
        self.skipped = plan.skipped
        self.notes = plan.notes
        self.failOn = failOn
        self.usesBaseline = false
        self.fixedSinceBaseline = []

        var rules: [ReportRule] = []
        if !policy.layout.isEmpty { rules.append(.layout(policy.layout)) }
        rules += policy.rules.map(ReportRule.init)
        let policyRules = Dictionary(policy.rules.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })

        var findings: [Finding] = []
        func add(rule name: String, path: RelativePath, message: String, source: Finding.Source,
                 plannedSeverity: Rule.Severity?) {
            let severity: Rule.Severity
            let location: PolicyLocation?
            if let rule = policyRules[name] {
                // A `severity:` in the policy is the user's word and wins. Otherwise the kind's default, unless
                // the planner marked the finding graver (a naming pattern that cannot be checked, say).
                severity = rule.severity ?? max(rule.effectiveSeverity, plannedSeverity ?? .note)
                location = rule.location
            } else if AuditReport.isLayout(name, source) {
                if !rules.contains(where: { $0.id == name }) { rules.append(.layout(policy.layout, id: name)) }
                severity = ReportRule.layoutSeverity
                location = AuditReport.layoutEntry(for: path, in: policy.layout)?.location ?? policy.layout.first?.location
            } else {
                severity = plannedSeverity ?? .warning
                location = nil
                if !rules.contains(where: { $0.id == name }) {
                    rules.append(ReportRule(id: name, kind: "policy", severity: severity,
                                            summary: "Findings of '\(name)'.", details: "Findings of '\(name)', which the policy does not define as a rule.",
                                            help: "See the policy."))
                }
            }
            findings.append(Finding(rule: name, path: path, message: message, severity: severity, source: source,
                                    ruleLocation: location))
        }
        for action in plan.actions {
            add(rule: action.rule, path: action.path, message: Finding.message(for: action),
                source: .action(action.kind), plannedSeverity: nil)
        }
        for violation in plan.violations {
            add(rule: violation.rule, path: violation.path, message: violation.message, source: .violation,
                plannedSeverity: violation.severity)
        }
        findings.sort { ($0.path, $0.rule, $0.message) < ($1.path, $1.rule, $1.message) }
        self.findings = findings
        self.rules = rules
        if let baseline { apply(baseline) }
    }

    /// Marks the findings the baseline knows; the others are new.
    public mutating func apply(_ baseline: Baseline) {
        for i in findings.indices { findings[i].isKnown = baseline.contains(findings[i]) }
        fixedSinceBaseline = baseline.entriesNotFound(in: findings)
        usesBaseline = true
    }

    /// Findings that fail the audit: new (not in the baseline) and at or above `failOn`.
    public var failing: [Finding] { findings.filter { !$0.isKnown && $0.severity >= failOn } }

    /// True when nothing fails: the audit exits 0.
    public var passes: Bool { failing.isEmpty }

    /// The findings of rule `id`.
    public func findings(ofRule id: String) -> [Finding] { findings.filter { $0.rule == id } }

    /// Totals every format's summary shows.
    public var counts: Counts { Counts(self) }

    /// How many findings of each severity, known and failing.
    public struct Counts: Sendable, Hashable {
        /// Counts.
        public var total = 0, errors = 0, warnings = 0, notes = 0, known = 0, failing = 0

        package init(_ report: AuditReport) {
            for f in report.findings {
                total += 1
                switch f.severity {
                case .error: errors += 1
                case .warning: warnings += 1
                case .note: notes += 1
                }
                if f.isKnown { known += 1 } else if f.severity >= report.failOn { failing += 1 }
            }
        }

        /// `4 findings (2 errors, 2 warnings, 0 notes)`
        public var description: String {
            "\(Counts.plural(total, "finding")) (\(Counts.plural(errors, "error")), \(Counts.plural(warnings, "warning")), \(Counts.plural(notes, "note")))"
        }

        /// `1 error`, `2 errors`; `plural` for words that do not just take an s (`entries`).
        static func plural(_ n: Int, _ word: String, _ plural: String? = nil) -> String {
            "\(n) \(n == 1 ? word : plural ?? word + "s")"
        }
    }

    /// The line every format ends with: totals, the baseline, and the verdict.
    public var summaryLine: String {
        let c = counts
        var line = c.description
        if usesBaseline {
            line += ", \(c.known) known from the baseline"
            if !fixedSinceBaseline.isEmpty {
                line += " (\(Counts.plural(fixedSinceBaseline.count, "baseline entry", "baseline entries")) no longer found)"
            }
        }
        line += passes
            ? "; passed: nothing new at or above \(failOn.rawValue)"
            : "; failed: \(Counts.plural(c.failing, "new finding")) at or above \(failOn.rawValue)"
        return line
    }

    /// Layout findings: mkdir actions, and findings named after the layout rather than a rule.
    static func isLayout(_ name: String, _ source: Finding.Source) -> Bool {
        if name.hasPrefix(ReportRule.layoutID) { return true }
        if case .action(.mkdir) = source { return true }
        return false
    }

    /// The layout entry a finding is about: the entry at that path, else one beneath it (a parent that must be
    /// created first), else the one it lies under (a marker inside the directory).
    static func layoutEntry(for path: RelativePath, in layout: [LayoutEntry]) -> LayoutEntry? {
        layout.first { $0.path == path }
            ?? layout.first { $0.path.hasPrefix(path) }
            ?? layout.first { path.hasPrefix($0.path) }
    }
}
