import Testing
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyModel
@testable import StoragePolicyPlan
@testable import StoragePolicyReports

@Suite("Audit findings from a plan") struct AuditReportTests {
    @Test("every action and every violation is a finding, sorted by path then rule")
    func everyFinding() {
        let report = ReportFixture.report()
        #expect(report.findings.map(\.path.escaped) == [
            "Documents/UserFiles",
            "Documents/UserFiles/My Notes.txt",
            "Documents/UserFiles/Notes.sqlite",
            "Library/Caches/Thumbnails",
            "tmp/a.dat",
            "tmp/we\"ird <&> name\\n.dat",
            "tmp/\\xff\\x01%:,#.bin",
        ])
        #expect(report.findings.map(\.source.name) == ["mkdir", "violation", "violation", "setxattr", "delete", "delete", "delete"])
    }

    @Test("an action reads as what apply would do, with the planner's reason", arguments: [
        (Action.Kind.delete, "would delete: why"),
        (.rename(to: RelativePath("a/b c")!), "would rename to a/b c: why"),
        (.trash(to: RelativePath(".Trash/x")!), "would move to the trash (.Trash/x): why"),
        (.mkdir, "would create the directory: why"),
        (.setxattr(name: "user.xdg.robots.backup", value: []), "would set user.xdg.robots.backup: why"),
        (.writeTag, "would write CACHEDIR.TAG: why"),
    ])
    func actionMessages(kind: Action.Kind, message: String) {
        #expect(Finding.message(for: Action(kind: kind, path: RelativePath("x")!, rule: "r", reason: "why")) == message)
        #expect(Finding.message(for: Action(kind: .delete, path: RelativePath("x")!, rule: "r", reason: "")) == "would delete")
    }

    @Test("severity: the rule's own, else error for forbid, backup and layout, warning for the rest")
    func severities() {
        let bySeverity = Dictionary(grouping: ReportFixture.report().findings, by: \.rule).mapValues { Set($0.map(\.severity)) }
        #expect(bySeverity["layout"] == [.error])
        #expect(bySeverity["no-private-data"] == [.error])
        #expect(bySeverity["tmp-expiry"] == [.warning])
        #expect(bySeverity["snake-case"] == [.note])
        let backup = Rule(name: "cache-backup", path: RelativePath("Caches")!, kind: .backup(BackupExclusion()))
        #expect(ReportRule(backup).severity == .error)
    }

    @Test("a severity in the policy wins; without one the planner may raise, never lower, the kind's default")
    func plannerSeverity() {
        let plan = Plan(policy: "p", root: "/r", createdAt: "t", evaluatedAtNs: 0, violations: [
            Violation(rule: "tmp-expiry", path: RelativePath("tmp/x")!, message: "raised", severity: .error),
            Violation(rule: "tmp-expiry", path: RelativePath("tmp/y")!, message: "lowered", severity: .note),
            Violation(rule: "snake-case", path: RelativePath("u/x")!, message: "explicit", severity: .error),
            Violation(rule: "mystery", path: RelativePath("z")!, message: "unknown rule", severity: .note),
        ])
        let report = AuditReport(plan: plan, policy: ReportFixture.policy)
        #expect(report.findings.map(\.message) == ["raised", "lowered", "explicit", "unknown rule"])
        #expect(report.findings.map(\.severity) == [.error, .warning, .note, .note])
        #expect(report.rules.last?.id == "mystery")
        #expect(report.rules.last?.severity == .note)
    }

    @Test("layout findings point at their layout entry's line")
    func layoutLocations() {
        let report = ReportFixture.report()
        #expect(report.findings(ofRule: "layout").map { $0.ruleLocation?.line } == [4, 5])
        #expect(report.rules.first?.id == "layout")
        #expect(report.rules.map(\.id) == ["layout", "tmp-expiry", "no-private-data", "lowercase-names", "snake-case"])
    }

    @Test("an mkdir named after no rule is a layout finding, located at the entry it creates first")
    func unnamedMkdir() {
        let plan = Plan(policy: "p", root: "/r", createdAt: "t", evaluatedAtNs: 0, actions: [
            Action(kind: .mkdir, path: RelativePath("Library")!, rule: "layout:Library/Caches/Thumbnails", reason: "parent"),
        ])
        let report = AuditReport(plan: plan, policy: ReportFixture.policy)
        #expect(report.findings.first?.severity == .error)
        #expect(report.findings.first?.ruleLocation?.line == 5)
        #expect(report.rules.contains { $0.id == "layout:Library/Caches/Thumbnails" && $0.kind == "layout" })
    }

    @Test("fingerprints hash rule, kind and path bytes only: stable when ages change")
    func fingerprints() {
        let a = Finding(rule: "tmp-expiry", path: RelativePath("tmp/a.dat")!, message: "would delete: mtime 2d ago",
                        severity: .warning, source: .action(.delete))
        let b = Finding(rule: "tmp-expiry", path: RelativePath("tmp/a.dat")!, message: "would delete: mtime 3d ago",
                        severity: .warning, source: .action(.delete))
        #expect(a.fingerprint == b.fingerprint)
        #expect(a.fingerprint == SHA256.hex(Array("tmp-expiry\u{0}delete\u{0}tmp/a.dat".utf8)))
        #expect(Finding.fingerprint(rule: "layout", source: .action(.mkdir), path: RelativePath("Caches")!)
                != Finding.fingerprint(rule: "layout", source: .action(.setxattr(name: "user.x", value: [])), path: RelativePath("Caches")!))
        #expect(ReportFixture.report().findings.map(\.fingerprint) == ReportFixture.report().findings.map(\.fingerprint))
    }

    @Test("--fail-on decides which findings fail", arguments: [
        (Rule.Severity.warning, 6, false), (.error, 3, false),
    ])
    func failOn(threshold: Rule.Severity, failing: Int, passes: Bool) {
        let report = ReportFixture.report(failOn: threshold)
        #expect(report.failing.count == failing)
        #expect(report.passes == passes)
        #expect(ReportFixture.cleanReport.passes)
    }

    @Test("counts and the summary line")
    func summary() {
        let report = ReportFixture.report(baseline: ReportFixture.baseline)
        let c = report.counts
        #expect([c.total, c.errors, c.warnings, c.notes, c.known, c.failing] == [7, 3, 3, 1, 1, 5])
        #expect(report.summaryLine == "7 findings (3 errors, 3 warnings, 1 note), 1 known from the baseline (1 baseline entry no longer found); failed: 5 new findings at or above warning")
        #expect(ReportFixture.cleanReport.summaryLine == "0 findings (0 errors, 0 warnings, 0 notes); passed: nothing new at or above warning")
    }
}
