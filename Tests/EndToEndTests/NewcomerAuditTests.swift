// Issue 29's audit and plan traps for a newcomer (binary): named paths none of which is inside the root exit 64
// instead of passing having audited nothing, and root-relative paths are accepted when they exist there; a scope
// typo is named with the closest name (a warning, an error under --strict); GitHub annotations carry the path
// from the working directory (the checkout), not from the root; a missing root is named, never '.'.
import Foundation
import Testing
import TreeFixture

@Suite("newcomer traps in audit and plan (binary)", .serialized)
struct NewcomerAuditTests {
    static let policy = """
        version: 1
        name: app
        rules:
          - name: lower
            path: Documents/UserFiles
            naming: { case: lower }
            mode: audit

        """

    /// A tree whose root is DIR/root, with one finding in Documents/UserFiles and one elsewhere.
    static func tree() throws -> (AuditTree, String) {
        let tree = try AuditTree()
        tree.file("Documents/UserFiles/BAD.md")
        tree.file("Documents/UserFiles/ok.md")
        tree.file("Other/x")
        return (tree, try tree.policy(policy))
    }

    @Test("from the parent folder: a root-relative path that exists is audited, a typo is named; none inside is 64")
    func auditPathsFromParent() throws {
        let (tree, policy) = try Self.tree()
        // The command: run from the folder that holds the root, paths written from the root.
        let mixed = try PolicyctlBinary.run(["audit", "--policy", policy, "--root", "root", "--format", "json",
                                             "Documents/UserFiles", "typo/path"], cwd: tree.directory)
        #expect(mixed.status == 1, "\(mixed.stderr)")
        #expect(try AuditPathsTests.findings(mixed.stdout) == ["lower Documents/UserFiles/BAD.md"])
        #expect(mixed.stderr.contains("audit: typo/path is outside the root root; not audited"))
        // The same path written from the working directory is audited the same way.
        let fromCwd = try PolicyctlBinary.run(["audit", "--policy", policy, "--root", "root", "--format", "json",
                                               "root/Documents/UserFiles"], cwd: tree.directory)
        #expect(fromCwd.status == 1)
        #expect(try AuditPathsTests.findings(fromCwd.stdout) == ["lower Documents/UserFiles/BAD.md"])
        // Nothing named is inside the root: never "passed".
        let none = try PolicyctlBinary.run(["audit", "--policy", policy, "--root", "root", "typo/path", "/etc/passwd"],
                                           cwd: tree.directory)
        #expect(none.status == 64)
        #expect(!none.stdout.contains("passed"), "\(none.stdout)")
        #expect(none.stderr.contains("Error: none of the paths lies inside the root 'root', so nothing would be audited"), "\(none.stderr)")
        #expect(none.stderr.contains("audit: typo/path is outside the root root; not audited"))
        // --help says how paths are read.
        let help = try PolicyctlBinary.run(["audit", "--help"])
        let words = help.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(words.contains("relative to the current directory as pre-commit and linters pass them (or relative to the root when they exist there, or absolute)"), "\(words)")
    }

    @Test("a scope typo is a warning naming the closest folder in plan and audit; --strict is exit 65 before any walk")
    func scopeTypo() throws {
        let tree = try AuditTree()
        tree.file("Documents/a.tmp", ageHours: 48)
        tree.file("Documents/cache/deep/b", ageHours: 48)
        let policy = try tree.policy("""
            version: 1
            name: typo
            layout:
              - path: Made/By/Layout
            rules:
              - name: docs
                path: Documnets
                expire: { after: 1h }
              - name: made
                path: Made/By
                expire: { after: 1h }
              - name: pattern
                path: Documents/*/deep
                expire: { after: 1h }
              - name: gone
                path: Nowhere/Near
                expire: { after: 1h }

            """)
        let warning = "warning: rule 'docs': scope 'Documnets' does not exist (did you mean 'Documents'?)"
        let plan = try PolicyctlBinary.run(["plan", "--policy", policy, "--root", tree.root])
        #expect(plan.status == 0, "\(plan.stderr)")
        #expect(plan.stderr.contains(policy + ":6:5: " + warning), "\(plan.stderr)")
        #expect(plan.stderr.contains("warning: rule 'gone': scope 'Nowhere/Near' does not exist\n"), "\(plan.stderr)")
        // A scope the layout creates, and one with a wildcard past its literal prefix, are not reported.
        #expect(!plan.stderr.contains("'made'") && !plan.stderr.contains("'pattern'"), "\(plan.stderr)")

        let strict = try PolicyctlBinary.run(["plan", "--policy", policy, "--root", tree.root, "--strict", "--format", "json"])
        #expect(strict.status == 65)
        #expect(strict.stdout.isEmpty)
        #expect(strict.stderr.contains("error: rule 'docs': scope 'Documnets' does not exist (did you mean 'Documents'?)"))
        #expect(strict.stderr.contains("2 errors in the policy (--strict); nothing was done."), "\(strict.stderr)")

        let audit = try PolicyctlBinary.run(["audit", "--policy", policy, "--root", tree.root])
        #expect(audit.stderr.contains(warning), "\(audit.stderr)")
        let strictAudit = try PolicyctlBinary.run(["audit", "--policy", policy, "--root", tree.root, "--strict"])
        #expect(strictAudit.status == 65)
        #expect(!strictAudit.stdout.contains("passed"))
        // The check never followed anything: the tree is as it was, and a correct policy says nothing.
        let fine = try tree.policy("version: 1\nname: fine\nrules:\n  - {name: docs, path: Documents, expire: {after: 1h}}\n", name: "fine.yaml")
        let clean = try PolicyctlBinary.run(["plan", "--policy", fine, "--root", tree.root, "--strict"])
        #expect(clean.status == 0)
        #expect(!clean.stderr.contains("does not exist"), "\(clean.stderr)")
    }

    @Test("--format github: file= is the path from the working directory, as the checkout has it")
    func githubPaths() throws {
        let (tree, policy) = try Self.tree()
        let nested = try PolicyctlBinary.run(["audit", "--policy", policy, "--root", "root", "--format", "github"], cwd: tree.directory)
        #expect(nested.status == 1)
        #expect(nested.stdout.contains("::warning file=root/Documents/UserFiles/BAD.md,title=lower::Documents/UserFiles/BAD.md: "), "\(nested.stdout)")
        let here = try PolicyctlBinary.run(["audit", "--policy", policy, "--root", ".", "--format", "github"], cwd: tree.root)
        #expect(here.stdout.contains("::warning file=Documents/UserFiles/BAD.md,title=lower::"), "\(here.stdout)")
        // A root outside the working directory is named by its absolute path.
        let elsewhere = TestScratch.path("elsewhere")
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: elsewhere) }
        let away = try PolicyctlBinary.run(["audit", "--policy", policy, "--root", tree.root, "--format", "github"], cwd: elsewhere)
        #expect(away.stdout.contains("::warning file=\(tree.root)/Documents/UserFiles/BAD.md,"), "\(away.stdout)")
    }

    @Test("a missing root is named in audit, not reported as '.'")
    func missingRoot() throws {
        let (tree, policy) = try Self.tree()
        let r = try PolicyctlBinary.run(["audit", "--policy", policy, "--root", "no-such-root"], cwd: tree.directory)
        #expect(r.status == 74)
        #expect(r.stderr == "Error: cannot audit: the root 'no-such-root': No such file or directory (ENOENT)\n", "\(r.stderr)")
    }
}
