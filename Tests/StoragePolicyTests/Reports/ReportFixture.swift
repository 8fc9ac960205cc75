// A policy and a plan shaped like the reference app-sandbox policy, with hostile names (a newline, markup
// characters, bytes that are not UTF-8, control characters), for every report format's tests.
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyModel
@testable import StoragePolicyPlan
@testable import StoragePolicyReports

enum ReportFixture {
    static let file = "policies/app-sandbox.yaml"

    static func location(_ line: Int, _ column: Int = 5) -> PolicyLocation {
        PolicyLocation(file: file, line: line, column: column)
    }

    static let policy = Policy(
        name: "app-sandbox",
        layout: [
            LayoutEntry(path: RelativePath("Documents/UserFiles")!, location: location(4, 5)),
            LayoutEntry(path: RelativePath("Library/Caches/Thumbnails")!, excludeFromBackup: true, location: location(5, 5)),
        ],
        rules: [
            Rule(name: "tmp-expiry", path: RelativePath("tmp")!, kind: .expire(Expire(after: .hours(24))), location: location(9)),
            Rule(name: "no-private-data", path: RelativePath("Documents/UserFiles")!, mode: .audit,
                 kind: .forbid([try! Glob("**/*.sqlite")]), location: location(12)),
            Rule(name: "lowercase-names", path: RelativePath("Documents/UserFiles")!, match: [try! Glob("**/*.txt")],
                 kind: .naming(Naming(letterCase: .lower)), location: location(16)),
            Rule(name: "snake-case", path: RelativePath("Documents/UserFiles")!, severity: .note,
                 kind: .naming(Naming(pattern: "^[a-z0-9_]+\\.txt$")), location: location(20)),
        ],
        source: PolicyLocation(file: file, line: 1, column: 1)
    )

    /// `tmp/we"ird <&> name` + LF + `.dat`
    static let hostile = RelativePath(Array("tmp/we\"ird <&> name\n.dat".utf8))!
    /// `tmp/` + 0xFF 0x01 `%:,#.bin`: not UTF-8, with a control byte and characters URIs and commands reserve.
    static let invalidUTF8 = RelativePath([0x74, 0x6D, 0x70, 0x2F, 0xFF, 0x01] + Array("%:,#.bin".utf8))!

    static let plan = Plan(
        policy: "app-sandbox", root: "/srv/snapshots/app data", createdAt: "2026-11-29T13:22:43Z",
        evaluatedAtNs: 1_795_000_000_000_000_000,
        actions: [
            Action(kind: .mkdir, path: RelativePath("Documents/UserFiles")!, rule: "layout", reason: "required by the layout"),
            Action(kind: .setxattr(name: "user.xdg.robots.backup", value: Array("false".utf8)),
                   path: RelativePath("Library/Caches/Thumbnails")!, rule: "layout", reason: "backup exclusion marker missing"),
            Action(kind: .delete, path: RelativePath("tmp/a.dat")!, rule: "tmp-expiry", reason: "mtime 2d3h ago > 24h", bytes: 4096),
            Action(kind: .delete, path: hostile, rule: "tmp-expiry", reason: "mtime 3d ago > 24h", bytes: 8192),
            Action(kind: .delete, path: invalidUTF8, rule: "tmp-expiry", reason: "mtime 5d ago > 24h", bytes: 512),
        ],
        violations: [
            Violation(rule: "no-private-data", path: RelativePath("Documents/UserFiles/Notes.sqlite")!,
                      message: "forbidden: matches '**/*.sqlite'"),
            Violation(rule: "snake-case", path: RelativePath("Documents/UserFiles/My Notes.txt")!,
                      message: "name does not match /^[a-z0-9_]+\\.txt$/"),
        ],
        skipped: [SkippedEntry(path: RelativePath("tmp/fifo")!, reason: "not a regular file (FIFO)")],
        entriesScanned: 42
    )

    static func report(baseline: Baseline? = nil, failOn: Rule.Severity = .warning) -> AuditReport {
        var plan = plan
        plan.sort()
        return AuditReport(plan: plan, policy: policy, baseline: baseline, failOn: failOn)
    }

    /// Knows `tmp/a.dat`, and one finding that is gone since.
    static var baseline: Baseline {
        Baseline(policy: "app-sandbox", entries: [
            Baseline.Entry(fingerprint: Finding.fingerprint(rule: "tmp-expiry", source: .action(.delete), path: RelativePath("tmp/a.dat")!),
                           rule: "tmp-expiry", path: "tmp/a.dat"),
            Baseline.Entry(fingerprint: Finding.fingerprint(rule: "tmp-expiry", source: .action(.delete), path: RelativePath("tmp/gone.dat")!),
                           rule: "tmp-expiry", path: "tmp/gone.dat"),
        ])
    }

    /// A policy with nothing to report.
    static var cleanReport: AuditReport {
        AuditReport(plan: Plan(policy: "app-sandbox", root: "/srv/clean", createdAt: "2026-11-29T13:22:43Z",
                               evaluatedAtNs: 0, entriesScanned: 7),
                    policy: policy)
    }
}
