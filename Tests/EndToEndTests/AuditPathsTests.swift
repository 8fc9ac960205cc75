// The path-scoped audit (binary): named paths report only their own findings while the rest of the tree has
// some; --changed-since in a temporary git repository sees only what changed; the policy found by convention;
// the pre-commit hook run as pre-commit runs it; baselines with named paths.
import Foundation
import Testing

@Suite("policyctl audit PATH... and --changed-since (binary)", .serialized)
struct AuditPathsTests {
    static let policy = """
        version: 1
        name: scoped
        rules:
          - name: no-tmp
            path: .
            forbid: ["**/*.tmp"]
            mode: audit
          - name: lower
            path: docs
            naming: { case: lower }
            mode: audit

        """

    /// A tree with findings everywhere but on docs/readme.md and src/ok.swift.
    static func tree() throws -> AuditTree {
        let tree = try AuditTree()
        tree.file("docs/readme.md")
        tree.file("docs/BAD.md")
        tree.file("src/ok.swift")
        tree.file("src/a.tmp")
        tree.file("big/deep/x.tmp")
        tree.file("big/other/y.tmp")
        return tree
    }

    /// (rule, path) of every finding in a JSON report, sorted.
    static func findings(_ stdout: String) throws -> [String] {
        let object = try JSONSerialization.jsonObject(with: Data(stdout.utf8)) as? [String: Any]
        let findings = object?["findings"] as? [[String: Any]] ?? []
        return findings.map { "\($0["rule"] as? String ?? "?") \($0["path"] as? String ?? "?")" }.sorted()
    }

    @Test("named clean paths exit 0 with no findings although the rest of the tree has findings")
    func cleanPaths() throws {
        let tree = try Self.tree()
        let policy = try tree.policy(Self.policy)
        let whole = try PolicyctlBinary.run(["audit", "--policy", policy, "--root", tree.root, "--format", "json"])
        #expect(whole.status == 1)
        #expect(try Self.findings(whole.stdout) == ["lower docs/BAD.md", "no-tmp big/deep/x.tmp", "no-tmp big/other/y.tmp", "no-tmp src/a.tmp"])

        let scoped = try PolicyctlBinary.run(["audit", "--policy", policy, "--root", tree.root, "--format", "json", "--",
                                              "docs/readme.md", "src/ok.swift"], cwd: tree.root)
        #expect(scoped.status == 0, "\(scoped.stderr)")
        #expect(try Self.findings(scoped.stdout) == [])
    }

    @Test("named paths report only their own findings; a named directory is walked whole; absolute paths work")
    func dirtyPaths() throws {
        let tree = try Self.tree()
        let policy = try tree.policy(Self.policy)
        let scoped = try PolicyctlBinary.run(["audit", "--policy", policy, "--root", tree.root, "--format", "json",
                                              "src/a.tmp", tree.root + "/big/deep", "docs/readme.md"], cwd: tree.root)
        #expect(scoped.status == 1)
        #expect(try Self.findings(scoped.stdout) == ["no-tmp big/deep/x.tmp", "no-tmp src/a.tmp"])
        let outside = try PolicyctlBinary.run(["audit", "--policy", policy, "--root", tree.root, "/etc/passwd"], cwd: tree.root)
        // Nothing named lies inside the root: a usage error, never a pass that audited nothing.
        #expect(outside.status == 64)
        #expect(outside.stderr.contains("audit: /etc/passwd is outside the root \(tree.root); not audited"))
    }

    @Test("without --root the root is the current directory; without --policy it is ROOT/.policyctl.yaml, else 64")
    func conventions() throws {
        let tree = try Self.tree()
        let missing = try PolicyctlBinary.run(["audit", "src/a.tmp"], cwd: tree.root)
        #expect(missing.status == 64)
        #expect(missing.stderr.hasPrefix("Error: No --policy given and there is no ./.policyctl.yaml (No such file or directory (ENOENT)); pass --policy <file> or create it\n"))
        try Self.policy.write(toFile: tree.root + "/.policyctl.yaml", atomically: true, encoding: .utf8)
        let found = try PolicyctlBinary.run(["audit", "--format", "json", "src/a.tmp", "src/ok.swift"], cwd: tree.root)
        #expect(found.status == 1, "\(found.stderr)")
        #expect(try Self.findings(found.stdout) == ["no-tmp src/a.tmp"])
        // A symlink is never followed to a policy.
        try FileManager.default.removeItem(atPath: tree.root + "/.policyctl.yaml")
        let elsewhere = try tree.policy(Self.policy, name: "elsewhere.yaml")
        try FileManager.default.createSymbolicLink(atPath: tree.root + "/.policyctl.yaml", withDestinationPath: elsewhere)
        let linked = try PolicyctlBinary.run(["audit", "src/a.tmp"], cwd: tree.root)
        #expect(linked.status == 64)
        #expect(linked.stderr.contains("is not a regular file with a single link"))
    }

    @Test("a baseline keeps working with named paths: known findings pass, entries elsewhere are not 'no longer found'")
    func baseline() throws {
        let tree = try Self.tree()
        let policy = try tree.policy(Self.policy)
        let file = tree.directory + "/baseline.json"
        let written = try PolicyctlBinary.run(["audit", "--policy", policy, "--root", tree.root, "--write-baseline", file])
        #expect(written.status == 0)
        tree.file("src/new.tmp")
        let known = try PolicyctlBinary.run(["audit", "--policy", policy, "--root", tree.root, "--baseline", file, "src/a.tmp"], cwd: tree.root)
        #expect(known.status == 0, "\(known.stdout)")
        #expect(!known.stdout.contains("no longer found"), "\(known.stdout)")
        let new = try PolicyctlBinary.run(["audit", "--policy", policy, "--root", tree.root, "--baseline", file, "--format", "json",
                                           "src/a.tmp", "src/new.tmp"], cwd: tree.root)
        #expect(new.status == 1)
        #expect(try Self.findings(new.stdout) == ["no-tmp src/a.tmp", "no-tmp src/new.tmp"])
        let refused = try PolicyctlBinary.run(["audit", "--policy", policy, "--root", tree.root, "--write-baseline", file, "src/a.tmp"], cwd: tree.root)
        #expect(refused.status == 64)
    }

    static func git(_ arguments: [String], in directory: String) throws {
        let r = try ChildProcess.run("/usr/bin/git", ["-C", directory, "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"] + arguments)
        #expect(r.status == 0, "git \(arguments): \(r.stderr)")
    }

    @Test("--changed-since in a temporary git repository sees only the changed and untracked files (odd names too)",
          .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/git")))
    func changedSince() throws {
        let tree = try Self.tree()
        tree.file("src/gone.tmp")
        try Self.policy.write(toFile: tree.root + "/.policyctl.yaml", atomically: true, encoding: .utf8)
        try "ignored.tmp\n".write(toFile: tree.root + "/.gitignore", atomically: true, encoding: .utf8)
        try Self.git(["init", "-q"], in: tree.root)
        try Self.git(["add", "-A"], in: tree.root)
        try Self.git(["commit", "-q", "-m", "base"], in: tree.root)
        tree.file("docs/readme.md", size: 99)      // changed, clean
        tree.file("src/new file.tmp")             // untracked, a space in its name
        tree.file("docs/line\nbreak.tmp")          // untracked, a newline in its name
        tree.file("docs/NEW.md")                   // untracked, upper case
        tree.file("ignored.tmp")                   // ignored by git
        try FileManager.default.removeItem(atPath: tree.root + "/src/gone.tmp")   // deleted: nothing to audit
        let r = try PolicyctlBinary.run(["audit", "--format", "json", "--changed-since", "HEAD"], cwd: tree.root)
        #expect(r.status == 1, "\(r.stderr)")
        #expect(try Self.findings(r.stdout) == ["lower docs/NEW.md", "no-tmp docs/line\nbreak.tmp", "no-tmp src/new file.tmp"], "\(r.stdout)")

        let bad = try PolicyctlBinary.run(["audit", "--changed-since", "no-such-ref"], cwd: tree.root)
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("--changed-since: 'git diff"))
        let both = try PolicyctlBinary.run(["audit", "--changed-since", "HEAD", "src/a.tmp"], cwd: tree.root)
        #expect(both.status == 64)
    }

    @Test("the pre-commit hook, run as pre-commit runs it (entry, args, then the filenames, in the repository root)")
    func preCommitHook() throws {
        let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let text = try String(contentsOf: package.appendingPathComponent(".pre-commit-hooks.yaml"), encoding: .utf8)
        #expect(text.contains("- id: policyctl-audit\n"))
        #expect(text.contains("  pass_filenames: true\n"))
        let entry = try #require(text.split(separator: "\n").first { $0.hasPrefix("  entry: ") }).dropFirst("  entry: ".count)
        #expect(entry == "policyctl audit")
        #expect(text.contains("  args: ['--']\n"))
        let arguments = Array(entry.split(separator: " ").dropFirst().map(String.init)) + ["--"]

        let tree = try Self.tree()
        tree.file("-dash.md")
        try Self.policy.write(toFile: tree.root + "/.policyctl.yaml", atomically: true, encoding: .utf8)
        let clean = try PolicyctlBinary.run(arguments + ["docs/readme.md", "src/ok.swift", "-dash.md"], cwd: tree.root)
        #expect(clean.status == 0, "\(clean.stdout)\(clean.stderr)")
        let dirty = try PolicyctlBinary.run(arguments + ["docs/readme.md", "src/a.tmp"], cwd: tree.root)
        #expect(dirty.status == 1)
        #expect(dirty.stdout.contains("src/a.tmp"))
        #expect(!dirty.stdout.contains("big/"))
    }
}
