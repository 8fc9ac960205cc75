import Testing
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyModel
@testable import StoragePolicyPlan
@testable import StoragePolicyReports

@Suite("Text report") struct TextReportTests {
    @Test("golden: the fixture with a baseline")
    func golden() {
        #expect(TextReport().render(ReportFixture.report(baseline: ReportFixture.baseline)) == """
            Audit of /srv/snapshots/app data against policy 'app-sandbox' (42 entries scanned)
            Documents/UserFiles: error: would create the directory: required by the layout [layout]
            Documents/UserFiles/My Notes.txt: note: name does not match /^[a-z0-9_]+\\.txt$/ [snake-case]
            Documents/UserFiles/Notes.sqlite: error: forbidden: matches '**/*.sqlite' [no-private-data]
            Library/Caches/Thumbnails: error: would set user.xdg.robots.backup: backup exclusion marker missing [layout]
            tmp/a.dat: warning: would delete: mtime 2d3h ago > 24h [tmp-expiry] (known)
            tmp/we"ird <&> name\\n.dat: warning: would delete: mtime 3d ago > 24h [tmp-expiry]
            tmp/\\xff\\x01%:,#.bin: warning: would delete: mtime 5d ago > 24h [tmp-expiry]
            skipped: tmp/fifo: not a regular file (FIFO)
            fixed: tmp/gone.dat [tmp-expiry] is in the baseline but no longer found

            7 findings (3 errors, 3 warnings, 1 note), 1 known from the baseline (1 baseline entry no longer found); failed: 5 new findings at or above warning

            """)
    }

    @Test("golden: a clean audit")
    func goldenClean() {
        #expect(TextReport().render(ReportFixture.cleanReport) == """
            Audit of /srv/clean against policy 'app-sandbox' (7 entries scanned)

            0 findings (0 errors, 0 warnings, 0 notes); passed: nothing new at or above warning

            """)
    }

    @Test("a message cannot move the cursor or colour the terminal")
    func controls() {
        let plan = Plan(policy: "p", root: "/r", createdAt: "t", evaluatedAtNs: 0, violations: [
            Violation(rule: "r", path: RelativePath("a")!, message: "\u{1B}[2Jgone\u{7}", severity: .error),
        ])
        #expect(TextReport().render(AuditReport(plan: plan, policy: Policy(name: "p"))).contains("a: error: \\x1b[2Jgone\\x07 [r]\n"))
    }
}
