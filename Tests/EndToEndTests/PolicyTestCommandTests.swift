// `policyctl test` (binary): every bundled policy's tests pass; a broken expectation prints the diff and exits 1;
// a malformed test file is named at file:line:col (65); owners and xattrs reach the fixture (root), and a test
// that names an owner is skipped, not failed, for anyone else.
import TreeFixture
import Foundation
import Testing

@Suite("policyctl test (binary)", .serialized)
struct PolicyTestCommandTests {
    static let packageRoot = String(#filePath).components(separatedBy: "/Tests/")[0]
    static let bundled = ["ci-layout-audit", "download-manager", "ios-app-sandbox", "ios-photo-app", "linux-user-cache"]

    static let policy = """
        version: 1
        name: scratch
        rules:
          - name: scratch-expiry
            path: scratch
            expire: 2d
          - name: mine
            path: owned
            expire: 1d
            owner: 12345

        """

    /// A scratch folder with the policy above and `tests` as its test file (in the `tests/` folder when asked).
    static func world(_ tests: String, inFolder: Bool = false) throws -> (ScratchDirectory, String) {
        let scratch = ScratchDirectory("policy-test")
        chmod(scratch.path, 0o755)
        let policyPath = scratch.path + "/scratch.yaml"
        try writePolicy(policyPath, policy)
        if inFolder { mkdir(scratch.path + "/tests", 0o755) }
        try Data(tests.utf8).write(to: URL(fileURLWithPath: scratch.path + (inFolder ? "/tests" : "") + "/scratch.test.yaml"))
        return (scratch, policyPath)
    }

    @Test("every bundled policy has tests in Policies/tests, and they all pass")
    func bundledPolicies() throws {
        let run = try policyctl(["test"] + Self.bundled.map { "\(Self.packageRoot)/Policies/\($0).yaml" })
        #expect(run.status == 0, "\(run)")
        for name in Self.bundled {
            #expect(run.stdout.contains("ok    \(Self.packageRoot)/Policies/tests/\(name).test.yaml:"), "\(name): \(run.stdout)")
        }
        #expect(!run.stdout.contains("FAIL"), "\(run.stdout)")
        #expect(run.stdout.hasSuffix(" failed, 0 skipped\n") && run.stdout.contains(" passed, 0 failed"), "\(run.stdout)")
    }

    @Test("a broken expectation: the unified diff of expected and planned, exit 1; the passing test still passes")
    func brokenExpectation() throws {
        let (scratch, policyPath) = try Self.world("""
            tests:
              - name: old scratch goes
                at: 2027-01-01T00:00Z
                tree:
                  - { path: scratch/old.log, age: 3d, size: 10 }
                expect:
                  actions: [delete scratch/old.log]
              - name: wrong on purpose
                at: 2027-01-01T00:00Z
                tree:
                  - { path: scratch/old.log, age: 3d }
                  - { path: scratch/new.log, age: 1d }
                expect:
                  actions:
                    - delete scratch/new.log

            """, inFolder: true)
        let run = try policyctl(["test", policyPath])
        #expect(run.status == 1, "\(run)")
        let file = scratch.path + "/tests/scratch.test.yaml"
        #expect(run.stdout == """
            ok    \(file):2:5  old scratch goes
            FAIL  \(file):8:5  wrong on purpose
                  --- expected
                  +++ planned at 2027-01-01T00:00:00Z
                  -action delete scratch/new.log
                  +action delete scratch/old.log
            2 tests: 1 passed, 1 failed, 0 skipped

            """, "\(run.stdout)")
    }

    @Test("a malformed test file is named at file:line:col with what is valid, exit 65")
    func malformed() throws {
        let (scratch, policyPath) = try Self.world("""
            tests:
              - name: typo
                at: 2027-01-01T00:00Z
                tree:
                  - { path: scratch/a, agee: 3d }

            """)
        let run = try policyctl(["test", policyPath])
        #expect(run.status == 65, "\(run)")
        #expect(run.stderr == "\(scratch.path)/scratch.test.yaml:5:28: error: unknown key 'agee' in a tree entry; expected one of: path, type, age, size, content, target, owner, group, xattrs\n", "\(run)")
        let badAt = try Self.world("tests:\n  - name: when\n    at: next tuesday\n")
        let second = try policyctl(["test", badAt.1])
        #expect(second.status == 65)
        #expect(second.stderr.hasPrefix("\(badAt.0.path)/scratch.test.yaml:3:9: error: 'at': 'next tuesday' is not an instant; give YYYY-MM-DD"), "\(second)")
    }

    @Test("xattrs reach the fixture: a folder already excluded from backup plans no setxattr, one without does")
    func xattrs() throws {
        let scratch = ScratchDirectory("policy-test")
        let policyPath = scratch.path + "/backup.yaml"
        try writePolicy(policyPath, "version: 1\nname: backup\nlayout:\n  - path: cache\n    backup: exclude\n")
        try Data("""
            tests:
              - name: already excluded
                at: 2027-01-01T00:00Z
                tree:
                  - { path: cache, type: directory, xattrs: { user.xdg.robots.backup: "false" } }
                expect:
                  actions: []
              - name: not yet
                at: 2027-01-01T00:00Z
                tree:
                  - { path: cache, type: directory }
                expect:
                  actions: [setxattr cache]

            """.utf8).write(to: URL(fileURLWithPath: scratch.path + "/backup.test.yaml"))
        let run = try policyctl(["test", policyPath])
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.hasSuffix("2 tests: 2 passed, 0 failed, 0 skipped\n"), "\(run.stdout)")
    }

    @Test("a policy without a test file fails, naming where the tests go")
    func noTests() throws {
        let scratch = ScratchDirectory("policy-test")
        let policyPath = scratch.path + "/lonely.yaml"
        try writePolicy(policyPath, Self.policy)
        let run = try policyctl(["test", policyPath])
        #expect(run.status == 1, "\(run)")
        #expect(run.stdout.hasPrefix("FAIL  \(policyPath): no tests: write them in \(scratch.path)/lonely.test.yaml or \(scratch.path)/tests/lonely.test.yaml"), "\(run)")
    }

    static let ownedTests = """
        tests:
          - name: only uid 12345's old files go, by the owner filter
            at: 2027-01-01T00:00Z
            tree:
              - { path: owned/theirs, age: 2d, owner: 12345, group: 12345, xattrs: { user.note: kept } }
              - { path: owned/root-s, age: 2d }
            expect:
              actions: [delete owned/theirs]

        """

    @Test("owners and xattrs reach the fixture: the owner filter takes only uid 12345's file", .enabled(if: getuid() == 0))
    func ownersAsRoot() throws {
        let (scratch, policyPath) = try Self.world(Self.ownedTests)
        let run = try policyctl(["test", policyPath])
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.hasSuffix("1 test: 1 passed, 0 failed, 0 skipped\n"), "\(run.stdout)")
        // Without the owner the filter takes nothing: the test fails, so it is the owner that made it pass.
        try Data(Self.ownedTests.replacingOccurrences(of: "owner: 12345, ", with: "").utf8)
            .write(to: URL(fileURLWithPath: scratch.path + "/scratch.test.yaml"))
        let without = try policyctl(["test", policyPath])
        #expect(without.status == 1, "\(without)")
        #expect(without.stdout.contains("      -action delete owned/theirs\n"), "\(without.stdout)")
    }

    @Test("for anyone but root a test naming an owner is skipped, saying why, and does not fail the run",
          .enabled(if: CoTenant.isAvailable))
    func ownersSkippedWithoutRoot() throws {
        let (scratch, _) = try Self.world(Self.ownedTests)
        // The co-tenant may read the policy and tests (its own files, as TrustedFile asks), in a folder it owns.
        let own = scratch.sub("cotenant")
        for name in ["scratch.yaml", "scratch.test.yaml"] {
            try FileManager.default.copyItem(atPath: scratch.path + "/" + name, toPath: own + "/" + name)
        }
        chown(own, CoTenant.uid, CoTenant.uid)
        for name in ["scratch.yaml", "scratch.test.yaml"] { chown(own + "/" + name, CoTenant.uid, CoTenant.uid) }
        let run = try CoTenant.policyctl(["test", own + "/scratch.yaml"])
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout == """
            skip  \(own)/scratch.test.yaml:2:5  only uid 12345's old files go, by the owner filter: skipped: needs root (the tree names an owner or group)
            1 test: 0 passed, 0 failed, 1 skipped

            """, "\(run)")
    }
}
