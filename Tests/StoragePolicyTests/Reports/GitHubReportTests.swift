import Testing
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyModel
@testable import StoragePolicyPlan
@testable import StoragePolicyReports

@Suite("GitHub workflow commands") struct GitHubReportTests {
    @Test("data is escaped as the Actions toolkit's escapeData", arguments: [
        ("plain text", "plain text"),
        ("100%", "100%25"),
        ("a\rb\nc", "a%0Db%0Ac"),
        ("%0A is not a newline", "%250A is not a newline"),
        ("a:b,c", "a:b,c"),
        ("\r\n::error::x", "%0D%0A::error::x"),
    ])
    func data(input: String, escaped: String) {
        #expect(GitHubReport.escapeData(input) == escaped)
    }

    @Test("properties are escaped as the toolkit's escapeProperty", arguments: [
        ("tmp/a.dat", "tmp/a.dat"),
        ("100%", "100%25"),
        ("a\rb\nc", "a%0Db%0Ac"),
        ("a:b,c", "a%3Ab%2Cc"),
        ("title=x,file=y::z", "title=x%2Cfile=y%3A%3Az"),
    ])
    func property(input: String, escaped: String) {
        #expect(GitHubReport.escapeProperty(input) == escaped)
    }

    @Test("golden: the fixture with a baseline")
    func golden() {
        #expect(GitHubReport().render(ReportFixture.report(baseline: ReportFixture.baseline)) == """
            ::error file=Documents/UserFiles,title=layout::Documents/UserFiles: would create the directory: required by the layout
            ::notice file=Documents/UserFiles/My Notes.txt,title=snake-case::Documents/UserFiles/My Notes.txt: name does not match /^[a-z0-9_]+\\.txt$/
            ::error file=Documents/UserFiles/Notes.sqlite,title=no-private-data::Documents/UserFiles/Notes.sqlite: forbidden: matches '**/*.sqlite'
            ::error file=Library/Caches/Thumbnails,title=layout::Library/Caches/Thumbnails: would set user.xdg.robots.backup: backup exclusion marker missing
            ::warning file=tmp/we"ird <&> name\\n.dat,title=tmp-expiry::tmp/we"ird <&> name\\n.dat: would delete: mtime 3d ago > 24h
            ::warning file=tmp/\\xff\\x01%25%3A%2C#.bin,title=tmp-expiry::tmp/\\xff\\x01%25:,#.bin: would delete: mtime 5d ago > 24h
            ::notice file=tmp/fifo,title=skipped::tmp/fifo: skipped: not a regular file (FIFO)
            ::notice title=policyctl audit of 'app-sandbox'::7 findings (3 errors, 3 warnings, 1 note), 1 known from the baseline (1 baseline entry no longer found); failed: 5 new findings at or above warning

            """)
        #expect(GitHubReport().logLines(ReportFixture.report(baseline: ReportFixture.baseline)) == [
            "known (in the baseline): tmp/a.dat: would delete: mtime 2d3h ago > 24h [tmp-expiry]",
        ])
    }

    @Test("golden: a clean audit is just the summary notice")
    func goldenClean() {
        #expect(GitHubReport().render(ReportFixture.cleanReport) == """
            ::notice title=policyctl audit of 'app-sandbox'::0 findings (0 errors, 0 warnings, 0 notes); passed: nothing new at or above warning

            """)
    }

    @Test("no name can start a command of its own: one line per finding, each starting as intended")
    func injection() {
        let plan = Plan(policy: "p", root: "/r", createdAt: "t", evaluatedAtNs: 0, violations: [
            Violation(rule: "r", path: RelativePath(Array("x\n::error file=evil::pwned".utf8))!, message: "m\r\n::stop-commands::t", severity: .error),
            Violation(rule: "r", path: RelativePath(Array("y\r\n::warning::z".utf8))!, message: "m", severity: .error),
        ])
        let lines = GitHubReport().render(AuditReport(plan: plan, policy: Policy(name: "p"))).split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 4)
        #expect(lines[0] == "::error file=x\\n%3A%3Aerror file=evil%3A%3Apwned,title=r::x\\n::error file=evil::pwned: m\\x0d\\x0a::stop-commands::t")
        #expect(lines[1] == "::error file=y\\r\\n%3A%3Awarning%3A%3Az,title=r::y\\r\\n::warning::z: m")
        #expect(lines[2].hasPrefix("::notice title=policyctl audit of 'p'::"))
        #expect(lines[3] == "")
    }

    @Test("at most 9 notes are annotations, so the 10th notice is always the summary")
    func noticeLimit() {
        let plan = Plan(policy: "p", root: "/r", createdAt: "t", evaluatedAtNs: 0, violations: (10...21).map {
            Violation(rule: "style", path: RelativePath("f\($0)")!, message: "m", severity: .note)
        })
        let report = AuditReport(plan: plan, policy: Policy(name: "p"))
        let lines = GitHubReport().render(report).split(separator: "\n")
        #expect(lines.filter { $0.hasPrefix("::notice ") }.count == 10)
        #expect(lines.allSatisfy { $0.hasPrefix("::") })
        #expect(GitHubReport().logLines(report) == (19...21).map { "note: f\($0): m [style]" })
        #expect(lines.last == "::notice title=policyctl audit of 'p'::12 findings (0 errors, 0 warnings, 12 notes); passed: nothing new at or above warning")
    }

    @Test("skipped entries and the plan's remarks are notices within the budget, the rest log lines; stdout is only commands")
    func skippedAndNotes() {
        let plan = Plan(policy: "p", root: "/r", createdAt: "t", evaluatedAtNs: 0,
                        violations: (1...7).map { Violation(rule: "style", path: RelativePath("f\($0)")!, message: "m", severity: .note) },
                        skipped: [SkippedEntry(path: RelativePath("a/fifo")!, reason: "fifo: not a regular file, directory or symlink; left alone"),
                                  SkippedEntry(path: RelativePath("b")!, reason: "cannot read directory: Permission denied (EACCES)")],
                        notes: ["tmp is a symlink (to ../elsewhere): not followed; rule 'x' was not evaluated"])
        let report = AuditReport(plan: plan, policy: Policy(name: "p"))
        let lines = GitHubReport().render(report).split(separator: "\n")
        #expect(lines.allSatisfy { $0.hasPrefix("::") })
        #expect(lines[7] == "::notice file=a/fifo,title=skipped::a/fifo: skipped: fifo: not a regular file, directory or symlink; left alone")
        #expect(lines[8] == "::notice file=b,title=skipped::b: skipped: cannot read directory: Permission denied (EACCES)")
        #expect(lines.count == 10)
        #expect(GitHubReport().logLines(report) == ["note: tmp is a symlink (to ../elsewhere): not followed; rule 'x' was not evaluated"])
    }

    @Test("file= is the path from the working directory: below it, the same, outside it, '/' and no working directory")
    func fileFromWorkingDirectory() {
        let path = RelativePath("Documents/a.txt")!
        #expect(GitHubReport(workingDirectory: "/repo").file(for: path, root: "/repo/fixtures/container") == "fixtures/container/Documents/a.txt")
        #expect(GitHubReport(workingDirectory: "/repo/").file(for: path, root: "/repo") == "Documents/a.txt")
        #expect(GitHubReport(workingDirectory: "/repo").file(for: .root, root: "/repo/fixtures") == "fixtures")
        #expect(GitHubReport(workingDirectory: "/repo").file(for: .root, root: "/repo") == ".")
        #expect(GitHubReport(workingDirectory: "/repo").file(for: path, root: "/repository") == "/repository/Documents/a.txt")
        #expect(GitHubReport(workingDirectory: "/").file(for: path, root: "/srv/c") == "srv/c/Documents/a.txt")
        #expect(GitHubReport().file(for: path, root: "/srv/c") == "Documents/a.txt")
    }
}
