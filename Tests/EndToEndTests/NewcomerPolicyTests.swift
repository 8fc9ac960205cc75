// Issue 29's first-mistake traps in writing a policy (binary): control bytes in a policy reach the terminal only
// escaped; an unquoted glob gets the fix, not libyaml's words; explain says when a glob only matches at the top of
// its scope; `policyctl schema` is Docs/policy.schema.json byte for byte and `init`'s modeline points at a schema
// that exists; a zero quota says "must be above zero"; `demo --step` stops before apply with the commands to run.
import Foundation
import TreeFixture
import Testing

@Suite("newcomer traps in writing a policy (binary)", .serialized)
struct NewcomerPolicyTests {
    static let packageRoot = String(#filePath).components(separatedBy: "/Tests/")[0]

    static func write(_ text: String, _ name: String = "policy.yaml") throws -> (dir: String, path: String) {
        let dir = TestScratch.path("newcomer")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try text.write(toFile: dir + "/" + name, atomically: true, encoding: .utf8)
        return (dir, dir + "/" + name)
    }

    @Test("a policy's control bytes are escaped in diagnostics, with the caret still under the column")
    func controlBytes() throws {
        let (_, path) = try Self.write("version: 1\nname: \"\u{1b}]0;PWNED\u{07} x\"\nrules: []\n")
        let r = try PolicyctlBinary.run(["validate", path])
        #expect(r.status == 65)
        #expect(!r.stderr.contains("\u{1b}") && !r.stderr.contains("\u{07}"), "\(r.stderr.debugDescription)")
        #expect(r.stderr.contains("\n  name: \"\\x1b]0;PWNED\\x07 x\"\n         ^\n"), "\(r.stderr.debugDescription)")
    }

    @Test("an unquoted glob gets 'quote the glob: match: \"*.tmp\"' (also in a list), not the parser's words alone")
    func unquotedGlob() throws {
        let (_, path) = try Self.write("version: 1\nname: p\nrules:\n  - name: t\n    path: tmp\n    match: *.tmp\n    expire: { after: 1h }\n")
        let r = try PolicyctlBinary.run(["validate", path])
        #expect(r.status == 65)
        #expect(r.stderr.contains(":6:13: error: invalid YAML: quote the glob: match: \"*.tmp\" (the parser said: "), "\(r.stderr)")
        let (_, list) = try Self.write("version: 1\nname: p\nrules:\n  - name: t\n    path: tmp\n    forbid:\n      - **/*.db # no\n")
        let l = try PolicyctlBinary.run(["validate", list])
        #expect(l.stderr.contains("quote the glob: - \"**/*.db\""), "\(l.stderr)")
    }

    @Test("explain: a glob without '/' or '**' that would match deeper says to use '**/' for any depth")
    func shallowGlob() throws {
        let tree = try AuditTree()
        tree.file("tmp/a/b.tmp")
        tree.file("tmp/top.tmp")
        let policy = try tree.policy("version: 1\nname: p\nrules:\n  - {name: t, path: tmp, match: \"*.tmp\", expire: {after: 1h}}\n")
        let deep = try PolicyctlBinary.run(["explain", "--policy", policy, "--root", tree.root, "tmp/a/b.tmp"])
        #expect(deep.status == 0, "\(deep.stderr)")
        #expect(deep.stdout.contains("  '*.tmp' matches only at the top of the scope; use '**/*.tmp' for any depth\n"), "\(deep.stdout)")
        let top = try PolicyctlBinary.run(["explain", "--policy", policy, "--root", tree.root, "tmp/top.tmp"])
        #expect(!top.stdout.contains("for any depth"), "\(top.stdout)")
    }

    @Test("policyctl schema prints Docs/policy.schema.json byte for byte (run scripts/embed-schema.py)")
    func schema() throws {
        let r = try PolicyctlBinary.run(["schema"])
        #expect(r.status == 0)
        #expect(r.stdoutData == (try Data(contentsOf: URL(fileURLWithPath: Self.packageRoot + "/Docs/policy.schema.json"))))
    }

    @Test("init's modeline points at a schema file that exists and is the schema, by an absolute path")
    func initModeline() throws {
        let dir = TestScratch.path("init-schema")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let r = try PolicyctlBinary.run(["init", "--template", "linux-user-cache"], cwd: dir)
        #expect(r.status == 0)
        let text = try String(contentsOfFile: dir + "/policy.yaml", encoding: .utf8)
        let first = String(text.split(separator: "\n")[0])
        let prefix = "# yaml-language-server: $schema="
        #expect(first.hasPrefix(prefix + "/"), "\(first)")
        let schema = String(first.dropFirst(prefix.count))
        #expect(FileManager.default.contents(atPath: schema) == FileManager.default.contents(atPath: Self.packageRoot + "/Docs/policy.schema.json"))
        #expect(!text.contains("../Docs/policy.schema.json"))
    }

    @Test("quota: { max: 0 } says it must be above zero; a malformed size is still 'invalid size'")
    func zeroQuota() throws {
        let (_, path) = try Self.write("version: 1\nname: q\nrules:\n  - name: q\n    path: tmp\n    quota: { max: 0 }\n")
        let r = try PolicyctlBinary.run(["validate", path])
        #expect(r.status == 65)
        #expect(r.stderr.contains(":6:19: error: rule 'q': 'quota': 'max': must be above zero, but '0' is 0 bytes (e.g. 512MiB)"), "\(r.stderr)")
        let (_, bad) = try Self.write("version: 1\nname: q\nrules:\n  - name: q\n    path: tmp\n    quota: { max: lots }\n")
        #expect(try PolicyctlBinary.run(["validate", bad]).stderr.contains("invalid size 'lots'"))
    }

    @Test("demo --step builds the container, shows the plan, prints the apply/journal/undo commands and stops")
    func demoStep() throws {
        let base = TestScratch.path("demo-step")
        defer { try? FileManager.default.removeItem(atPath: base) }
        let r = try PolicyctlBinary.run(["demo", "--step", "--keep", base])
        #expect(r.status == 0, "\(r.stderr)")
        let root = base + "/container", policy = base + "/ios-app-sandbox.yaml"
        #expect(r.stdout.contains("$ policyctl plan --policy \(policy) --root \(root)"))
        for line in ["  policyctl apply --policy \(policy) --root \(root)\n", "  policyctl journal --root \(root)\n",
                     "  policyctl undo --root \(root) ID\n"] {
            #expect(r.stdout.contains(line), "\(line) in \(r.stdout)")
        }
        #expect(!r.stdout.contains("$ policyctl apply"), "\(r.stdout)")
        // Nothing was applied: the expired tmp file is still there and no journal exists.
        #expect(FileManager.default.fileExists(atPath: root + "/tmp/upload-staging-1.dat"))
        #expect(!FileManager.default.fileExists(atPath: root + "/.policyctl"))
        // The printed apply works as printed.
        let apply = try PolicyctlBinary.run(["apply", "--policy", policy, "--root", root, "--yes"])
        #expect(apply.status == 0, "\(apply.stderr)")
        #expect(!FileManager.default.fileExists(atPath: root + "/tmp/upload-staging-1.dat"))
    }
}
