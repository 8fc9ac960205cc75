import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Testing

@Suite("policyctl audit: exit codes for broken input") struct AuditBrokenInputTests {
    @Test("a missing option or a bad value is a usage error (64)")
    func usage() throws {
        let tree = try AuditTree()
        let policy = try tree.policy(AuditSupport.policy)
        // No --policy and no ROOT/.policyctl.yaml (the root defaults to the current directory).
        let missing = try PolicyctlBinary.run(["audit", "--root", tree.root])
        #expect(missing.status == 64)
        #expect(missing.stderr.hasPrefix("Error: No --policy given and there is no \(tree.root)/.policyctl.yaml (No such file or directory (ENOENT)); pass --policy <file> or create it\n"))
        #expect(missing.stderr.contains("\nUsage: policyctl audit [--policy <file>] [--root <dir>]"))
        let format = try PolicyctlBinary.run(["audit", "--policy", policy, "--root", tree.root, "--format", "xml"])
        #expect(format.status == 64)
        #expect(format.stderr.contains("The value 'xml' is invalid for '--format <format>' (values: text, json, sarif, junit, github)"))
        let failOn = try PolicyctlBinary.run(["audit", "--policy", policy, "--root", tree.root, "--fail-on", "note"])
        #expect(failOn.status == 64)
    }

    @Test("an invalid policy is 65 with every diagnostic at file:line:col")
    func invalidPolicy() throws {
        let tree = try AuditTree()
        let policy = try tree.policy("""
            version: 1
            name: broken
            rules:
              - name: tmp-expiry
                path: tmp
                expire: { afer: 24h }
            """)
        let r = try PolicyctlBinary.run(["audit", "--policy", policy, "--root", tree.root])
        #expect(r.status == 65)
        #expect(r.stdout == "")
        #expect(r.stderr.contains("\(policy):6:"))
        #expect(r.stderr.contains(": error: "))
        #expect(r.stderr.contains("'afer'"))
    }

    @Test("a policy that cannot be read is an I/O error (74)")
    func unreadablePolicy() throws {
        let tree = try AuditTree()
        let r = try PolicyctlBinary.run(["audit", "--policy", tree.directory + "/missing.yaml", "--root", tree.root])
        #expect(r.status == 74)
        #expect(r.stderr.contains("missing.yaml"))
    }

    @Test("a baseline that is not one is 65, one that cannot be read is 74, both before any walk")
    func badBaseline() throws {
        let tree = try AuditTree()
        let policy = try tree.policy(AuditSupport.policy)
        let bad = tree.directory + "/baseline.json"
        try "{\"version\": 9, \"findings\": []}".write(toFile: bad, atomically: true, encoding: .utf8)
        let malformed = try PolicyctlBinary.run(["audit", "--policy", policy, "--root", tree.root, "--baseline", bad])
        #expect(malformed.status == 65)
        #expect(malformed.stderr == "Error: \(bad): baseline version 9 is not supported (this policyctl reads version 1)\n")
        let missing = try PolicyctlBinary.run(["audit", "--policy", policy, "--root", tree.root, "--baseline", tree.directory + "/nope.json"])
        #expect(missing.status == 74)
        #expect(missing.stderr.hasPrefix("Error: cannot read \(tree.directory)/nope.json: "))
        // A device or a FIFO is refused at once (65), never read.
        let fifo = tree.directory + "/fifo.json"
        #expect(mkfifo(fifo, 0o644) == 0)
        for path in ["/dev/zero", fifo] {
            let odd = try PolicyctlBinary.run(["audit", "--policy", policy, "--root", tree.root, "--baseline", path])
            #expect(odd.status == 65, "\(path): \(odd.stderr)")
            #expect(odd.stderr.contains("not a regular file"), "\(odd.stderr)")
        }
    }

    @Test("a root that does not exist is an I/O error (74), never 'clean'")
    func missingRoot() throws {
        let tree = try AuditTree()
        let policy = try tree.policy(AuditSupport.policy)
        let r = try PolicyctlBinary.run(["audit", "--policy", policy, "--root", tree.directory + "/absent"])
        #expect(r.status == 74)
        #expect(r.stdout == "")
    }
}

@Suite("policyctl audit on generated trees", .enabled(if: AuditSupport.plannerAvailable))
struct AuditTreeTests {
    /// A drifted container: an expired tmp file (warning), a database where user files live (error), and
    /// the required folder present.
    private func drifted() throws -> (AuditTree, String) {
        let tree = try AuditTree()
        tree.folder("Documents/UserFiles")
        tree.file("tmp/old.dat", ageHours: 50)
        tree.file("tmp/fresh.dat", ageHours: 1)
        tree.file("Documents/UserFiles/Notes.sqlite", ageHours: 1)
        return (tree, try tree.policy(AuditSupport.policy))
    }

    @Test("a clean tree exits 0 and says so")
    func clean() throws {
        let tree = try AuditTree()
        tree.folder("Documents/UserFiles")
        tree.file("tmp/fresh.dat", ageHours: 1)
        let policy = try tree.policy(AuditSupport.policy)
        let r = try PolicyctlBinary.run(["audit", "--policy", policy, "--root", tree.root])
        #expect(r.status == 0)
        #expect(r.stdout.hasSuffix("\n0 findings (0 errors, 0 warnings, 0 notes); passed: nothing new at or above warning\n"))
    }

    @Test("a drifted tree exits 1 with each finding on a line")
    func drift() throws {
        let (tree, policy) = try drifted()
        let r = try PolicyctlBinary.run(["audit", "--policy", policy, "--root", tree.root])
        #expect(r.status == 1)
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("Documents/UserFiles/Notes.sqlite: error: ") && $0.hasSuffix(" [no-private-data]") })
        #expect(lines.contains { $0.hasPrefix("tmp/old.dat: warning: would delete: ") && $0.hasSuffix(" [tmp-expiry]") })
        #expect(!lines.contains { $0.hasPrefix("tmp/fresh.dat") })
        #expect(lines.last == "2 findings (1 error, 1 warning, 0 notes); failed: 2 new findings at or above warning")
    }

    @Test("--fail-on error lets warnings pass")
    func failOnError() throws {
        let tree = try AuditTree()
        tree.folder("Documents/UserFiles")
        tree.file("tmp/old.dat", ageHours: 50)
        let policy = try tree.policy(AuditSupport.policy)
        #expect(try PolicyctlBinary.run(["audit", "--policy", policy, "--root", tree.root]).status == 1)
        #expect(try PolicyctlBinary.run(["audit", "--policy", policy, "--root", tree.root, "--fail-on", "error"]).status == 0)
    }

    @Test("a missing layout directory is an error finding")
    func layout() throws {
        let tree = try AuditTree()
        let policy = try tree.policy(AuditSupport.policy)
        let r = try PolicyctlBinary.run(["audit", "--policy", policy, "--root", tree.root, "--format", "json"])
        #expect(r.status == 1)
        let json = try #require(try JSONSerialization.jsonObject(with: r.stdoutData) as? [String: Any])
        let findings = try #require(json["findings"] as? [[String: Any]])
        let mkdir = try #require(findings.first { $0["finding"] as? String == "mkdir" && $0["path"] as? String == "Documents/UserFiles" })
        #expect(mkdir["rule"] as? String == "layout")
        #expect(mkdir["severity"] as? String == "error")
        #expect(mkdir["path"] as? String == "Documents/UserFiles")
        #expect((mkdir["ruleLocation"] as? [String: Any])?["line"] as? Int == 4)
    }

    @Test("audit changes nothing on disk, not even atimes, in any format")
    func readOnly() throws {
        let (tree, policy) = try drifted()
        let before = tree.snapshot()
        for format in ["text", "json", "sarif", "junit", "github"] {
            _ = try PolicyctlBinary.run(["audit", "--policy", policy, "--root", tree.root, "--format", format])
        }
        #expect(tree.snapshot() == before)
    }

    @Test("SARIF from a real tree decodes, with results at root-relative URIs and the policy line")
    func sarif() throws {
        let (tree, policy) = try drifted()
        let r = try PolicyctlBinary.run(["audit", "--policy", policy, "--root", tree.root, "--format", "sarif"])
        #expect(r.status == 1)
        let log = try #require(try JSONSerialization.jsonObject(with: r.stdoutData) as? [String: Any])
        #expect(log["version"] as? String == "2.1.0")
        let run = try #require((log["runs"] as? [[String: Any]])?.first)
        let results = try #require(run["results"] as? [[String: Any]])
        let uris = results.compactMap { result -> String? in
            let location = (result["locations"] as? [[String: Any]])?.first?["physicalLocation"] as? [String: Any]
            return (location?["artifactLocation"] as? [String: Any])?["uri"] as? String
        }
        #expect(uris.sorted() == ["Documents/UserFiles/Notes.sqlite", "tmp/old.dat"])
        let forbidden = try #require(results.first { $0["ruleId"] as? String == "no-private-data" })
        let related = try #require((forbidden["relatedLocations"] as? [[String: Any]])?.first?["physicalLocation"] as? [String: Any])
        #expect((related["region"] as? [String: Any])?["startLine"] as? Int == 9)
    }

    @Test("hostile names in the tree still give parseable SARIF, JUnit and GitHub output")
    func hostileNames() throws {
        let tree = try AuditTree()
        tree.folder("Documents/UserFiles")
        tree.file(Array("tmp/line\nbreak <&\">.dat".utf8), ageHours: 50)
        tree.file([0x74, 0x6D, 0x70, 0x2F, 0xFF, 0xFE, 0x01, 0x2E, 0x64], ageHours: 50)
        let policy = try tree.policy(AuditSupport.policy)

        let sarif = try PolicyctlBinary.run(["audit", "--policy", policy, "--root", tree.root, "--format", "sarif"])
        #expect(sarif.status == 1)
        let log = try #require(try JSONSerialization.jsonObject(with: sarif.stdoutData) as? [String: Any])
        let results = try #require((log["runs"] as? [[String: Any]])?.first?["results"] as? [[String: Any]])
        #expect(results.count == 2)
        #expect(sarif.stdout.contains("tmp/line%0Abreak%20%3C%26%22%3E.dat"))
        #expect(sarif.stdout.contains("tmp/%FF%FE%01.d"))

        let junit = try PolicyctlBinary.run(["audit", "--policy", policy, "--root", tree.root, "--format", "junit"])
        let parser = XMLParser(data: junit.stdoutData)
        #expect(parser.parse(), "JUnit output is not well-formed: \(String(describing: parser.parserError))")

        // Run from the root, so file= (the path from the working directory) is the root-relative path.
        let github = try PolicyctlBinary.run(["audit", "--policy", policy, "--root", tree.root, "--format", "github"], cwd: tree.root)
        let lines = github.stdout.split(separator: "\n")
        #expect(lines.count == 3)
        #expect(lines.allSatisfy { $0.hasPrefix("::warning file=tmp/") || $0.hasPrefix("::notice title=") })
    }

    @Test("--write-baseline makes the drift known; a new finding still fails")
    func baseline() throws {
        let (tree, policy) = try drifted()
        let baseline = tree.directory + "/baseline.json"
        let write = try PolicyctlBinary.run(["audit", "--policy", policy, "--root", tree.root, "--write-baseline", baseline])
        #expect(write.status == 0)
        #expect(write.stderr.contains("Wrote a baseline of 2 findings to \(baseline)."))
        let known = try PolicyctlBinary.run(["audit", "--policy", policy, "--root", tree.root, "--baseline", baseline])
        #expect(known.status == 0)
        #expect(known.stdout.contains("tmp/old.dat: warning: would delete: "))
        #expect(known.stdout.hasSuffix("2 findings (1 error, 1 warning, 0 notes), 2 known from the baseline; passed: nothing new at or above warning\n"))

        tree.file("tmp/older.dat", ageHours: 70)
        let drifted = try PolicyctlBinary.run(["audit", "--policy", policy, "--root", tree.root, "--baseline", baseline])
        #expect(drifted.status == 1)
        #expect(drifted.stdout.hasSuffix("3 findings (1 error, 2 warnings, 0 notes), 2 known from the baseline; failed: 1 new finding at or above warning\n"))
    }

    @Test("--output writes the report whole and prints the summary for the log")
    func output() throws {
        let (tree, policy) = try drifted()
        let out = tree.directory + "/reports/audit.xml"
        try FileManager.default.createDirectory(atPath: tree.directory + "/reports", withIntermediateDirectories: true)
        let r = try PolicyctlBinary.run(["audit", "--policy", policy, "--root", tree.root, "--format", "junit", "--output", out])
        #expect(r.status == 1)
        #expect(r.stdout == "2 findings (1 error, 1 warning, 0 notes); failed: 2 new findings at or above warning\n")
        let xml = try String(contentsOfFile: out, encoding: .utf8)
        #expect(xml.hasPrefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"policyctl audit: app-sandbox\""))
        let unwritable = try PolicyctlBinary.run(["audit", "--policy", policy, "--root", tree.root, "--output", tree.directory + "/no/such/dir/x"])
        #expect(unwritable.status == 74)
    }
}
