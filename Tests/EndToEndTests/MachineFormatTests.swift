// Machine formats stay clean and odd scopes are never silent: on a tree with a symlinked scope
// (`tmp -> ../elsewhere`), a FIFO, a finding known from a baseline, a note and a remark, stdout of
// `audit --format json|sarif|junit|github` and `plan --format json` parses whole; plan, audit and explain
// name the symlinked scope and say why.
import TreeFixture
import Foundation
import FoundationXML
import Testing

@Suite("machine formats and odd scopes (binary)")
struct MachineFormatTests {
    static let policy = """
        version: 1
        name: formats
        rules:
          - name: tmp-expiry
            path: tmp
            expire: 24h
          - name: logs-expiry
            path: logs
            expire: 24h
          - name: style
            path: logs
            severity: note
            naming: { pattern: '^[a-z.]+$' }
          - name: missing-cache
            path: cache
            backup: exclude

        """

    /// root/tmp -> ../elsewhere (a real directory beside the root, holding an old file), root/logs with an
    /// old file, a FIFO and a badly named file.
    static func tree() throws -> (AuditTree, String) {
        let tree = try AuditTree()
        let elsewhere = tree.directory + "/elsewhere"
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: elsewhere + "/old.dat", contents: Data("x".utf8))
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -3 * 86400)], ofItemAtPath: elsewhere + "/old.dat")
        #expect(symlink("../elsewhere", tree.root + "/tmp") == 0)
        tree.file("logs/old.log", ageHours: 50)
        tree.file("logs/Bad_Name.log", ageHours: 1)
        #expect(mkfifo(tree.root + "/logs/pipe", 0o644) == 0)
        return (tree, try tree.policy(Self.policy))
    }

    @Test("plan, audit and explain name the symlinked scope and say why; nothing outside is planned")
    func symlinkedScope() throws {
        let (tree, policy) = try Self.tree()
        let plan = try PolicyctlBinary.run(["plan", "--policy", policy, "--root", tree.root])
        #expect(plan.status == 0, "\(plan.stderr)")
        #expect(plan.stdout.contains("the scope tmp is a symlink: never followed; the rule judged nothing there"), "\(plan.stdout)")
        #expect(!plan.stdout.contains("old.dat"))
        let audit = try PolicyctlBinary.run(["audit", "--policy", policy, "--root", tree.root])
        #expect(audit.status == 1)
        #expect(audit.stdout.contains("tmp: warning: the scope tmp is a symlink: never followed; the rule judged nothing there [tmp-expiry]"), "\(audit.stdout)")
        let explain = try PolicyctlBinary.run(["explain", "--policy", policy, "--root", tree.root, "tmp/old.dat"])
        #expect(explain.status == 0, "\(explain.stderr)")
        #expect(explain.stdout.contains("but tmp is a symlink: never followed: the rule judges nothing in its scope"), "\(explain.stdout)")
        #expect(explain.stdout.contains("warning: tmp-expiry: the scope tmp is a symlink"), "\(explain.stdout)")
        #expect(FileManager.default.fileExists(atPath: tree.directory + "/elsewhere/old.dat"))
    }

    @Test("stdout of every machine format parses whole: JSON, SARIF, JUnit XML, GitHub workflow commands only")
    func cleanStdout() throws {
        let (tree, policy) = try Self.tree()
        let baseline = tree.directory + "/baseline.json"
        // A baseline that knows the old log: a known finding in every report below.
        let all = try PolicyctlBinary.run(["audit", "--policy", policy, "--root", tree.root, "--write-baseline", baseline])
        #expect(all.status == 0, "\(all.stderr)")
        tree.file("logs/older.log", ageHours: 70)
        let common = ["audit", "--policy", policy, "--root", tree.root, "--baseline", baseline, "--format"]

        let json = try PolicyctlBinary.run(common + ["json"])
        #expect(json.status == 1, "\(json.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: json.stdoutData) as? [String: Any])
        #expect((report["skipped"] as? [Any])?.count == 1)

        let sarif = try PolicyctlBinary.run(common + ["sarif"])
        let log = try #require(try JSONSerialization.jsonObject(with: sarif.stdoutData) as? [String: Any])
        #expect(log["version"] as? String == "2.1.0")

        let junit = try PolicyctlBinary.run(common + ["junit"])
        let parser = XMLParser(data: junit.stdoutData)
        #expect(parser.parse(), "JUnit stdout is not well-formed: \(String(describing: parser.parserError))\n\(junit.stdout)")

        let github = try PolicyctlBinary.run(common + ["github"])
        #expect(github.status == 1)
        let lines = github.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(github.stdout.hasSuffix("\n"))
        #expect(!lines.isEmpty && lines.allSatisfy { $0.hasPrefix("::") }, "\(github.stdout)")
        // file= is the path from the working directory; this root is outside it, so absolute (GitHubReport).
        let root = tree.root  // no ':' or ',' to escape in a scratch path
        #expect(lines.contains { $0.hasPrefix("::notice file=\(root)/logs/pipe,title=skipped::logs/pipe: skipped: ") }, "\(github.stdout)")
        #expect(lines.contains { $0.hasPrefix("::warning file=\(root)/logs/older.log,title=logs-expiry::logs/older.log: would delete: ") })
        #expect(github.stderr.contains("known (in the baseline): tmp: the scope tmp is a symlink: never followed; the rule judged nothing there [tmp-expiry]"))
        #expect(lines.contains { $0.hasPrefix("::notice title=note::rule 'missing-cache': cache does not exist") }, "\(github.stdout)")
        #expect(github.stderr.contains("known (in the baseline): logs/old.log: would delete: "), "\(github.stderr)")

        let plan = try PolicyctlBinary.run(["plan", "--policy", policy, "--root", tree.root, "--format", "json",
                                            "--out", tree.directory + "/plan.json"])
        #expect(plan.status == 0, "\(plan.stderr)")
        let planObject = try #require(try JSONSerialization.jsonObject(with: plan.stdoutData) as? [String: Any])
        #expect((planObject["violations"] as? [[String: Any]])?.contains { $0["rule"] as? String == "tmp-expiry" } == true)
        #expect(plan.stderr.contains("Saved the plan to"))
    }
}
