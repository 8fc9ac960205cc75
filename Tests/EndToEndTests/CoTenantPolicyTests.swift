// Policies and `extends:` files as orders root takes: read only under the trust rule (Docs/safety.md, "Inputs").
// uid 12345 plants a ROOT/.policyctl.yaml, or writes the folder a root-owned policy extends from; root is never
// steered by it, and nothing of a file that is no policy (/etc/shadow, /proc/self/environ) reaches any output.
import TreeFixture
import Foundation
import Testing

@Suite("policies and extends: files under the trust rule (binary)")
struct CoTenantPolicyTests {
    /// uid 12345's rule: delete everything under the root older than an hour.
    static let attackerRules = "version: 1\nname: team\nrules:\n  - name: all\n    path: .\n    expire: 1h\n"

    /// A 1777 root with a victim's (uid 12346) 3-hour-old file in their own 0700 folder.
    struct Setup {
        let scratch = ScratchDirectory("cotenant-policy")
        let root: String
        let victim: String

        init() throws {
            chmod(scratch.path, 0o755)
            root = scratch.sub("root")
            chmod(root, 0o1777)
            try buildTree(at: root, [.dir("victim", ageHours: 3), .file("victim/notes.txt", ageHours: 3)])
            victim = root + "/victim/notes.txt"
            #expect(chown(root + "/victim", 12346, 12346) == 0 && chown(victim, 12346, 12346) == 0)
            chmod(root + "/victim", 0o700)
        }

        var victimIntact: Bool { FileManager.default.contents(atPath: victim) != nil }
    }

    @Test("a .policyctl.yaml uid 12345 planted is refused before it is read (65); nothing of it is quoted",
          .enabled(if: CoTenant.isAvailable))
    func plantedDiscoveredPolicy() throws {
        let s = try Setup()
        let planted = s.root + "/.policyctl.yaml"
        try writePolicy(planted, Self.attackerRules + "# MARKER-7f3a\n")
        #expect(chown(planted, CoTenant.uid, CoTenant.uid) == 0)
        let run = try policyctl(["audit", "--root", s.root])
        #expect(run.status == 65, "\(run)")
        #expect(run.stderr.contains(".policyctl.yaml: refused: it is owned by uid 12345, not by root or uid 0 that runs policyctl"), "\(run.stderr)")
        #expect(!(run.stdout + run.stderr).contains("MARKER-7f3a"))
        #expect(s.victimIntact)
    }

    @Test("a discovered policy may not extend an absolute path or leave its folder; nothing of /etc/shadow is shown")
    func discoveredPolicyConfined() throws {
        let s = try Setup()
        let discovered = s.root + "/.policyctl.yaml"
        for (reference, expected) in [("/etc/shadow", "may not extend an absolute path"),
                                      ("/proc/self/environ", "may not extend an absolute path"),
                                      ("../outside.yaml", "may not extend a file outside its folder")] {
            try writePolicy(discovered, "version: 1\nname: found\nextends: [\(reference)]\n")
            let run = try policyctl(["audit", "--root", s.root], environment: ["POLICYCTL_TEST_SECRET": "s3cr3t-value"])
            #expect(run.status == 65, "\(reference): \(run)")
            #expect(run.stderr.contains(expected), "\(reference): \(run.stderr)")
            #expect(!(run.stdout + run.stderr).contains("s3cr3t-value"))
            #expect(!(run.stdout + run.stderr).contains("root:"), "\(reference): \(run.stderr)")
        }
    }

    @Test("a named policy extending a file that is no policy gets one error with nothing of that file in it")
    func notAPolicyNeverQuoted() throws {
        let s = try Setup()
        let policy = s.scratch.path + "/policy.yaml"
        for reference in ["/etc/shadow", "/proc/self/environ", "/etc/passwd"] {
            try writePolicy(policy, "version: 1\nname: p\nextends: [\(reference)]\n")
            let run = try policyctl(["validate", policy], environment: ["POLICYCTL_TEST_SECRET": "s3cr3t-value"])
            #expect(run.status == 65, "\(reference): \(run)")
            let output = run.stdout + run.stderr
            #expect(output.contains("a file without it is not a policy, and nothing of it is shown or read further")
                    || output.contains("invalid YAML") || output.contains("expected a mapping, found a string"), "\(reference): \(output)")
            #expect(!output.contains("s3cr3t-value"), "\(reference)")
            #expect(!output.contains("root:"), "\(reference): \(output)")
            #expect(!output.contains("/bin/"), "\(reference): \(output)")
        }
    }

    @Test("a root-owned policy extending from a folder uid 12345 can write is refused (65); the victim's file stays",
          .enabled(if: CoTenant.isAvailable))
    func extendsFromWritableFolder() throws {
        let s = try Setup()
        let team = s.scratch.sub("team")
        #expect(chown(team, CoTenant.uid, CoTenant.uid) == 0)
        let policy = s.scratch.path + "/policy.yaml"
        try writePolicy(policy, "version: 1\nname: host\nextends: [./team/rules.yaml]\n")
        // The co-tenant writes the file the root-owned policy extends.
        #expect(try CoTenant.sh("printf 'version: 1\\nname: team\\nrules:\\n  - name: all\\n    path: .\\n    expire: 1h\\n' > \(team)/rules.yaml").status == 0)
        for command in [["plan"], ["apply", "--yes"]] {
            let run = try policyctl(command + ["--policy", policy, "--root", s.root])
            #expect(run.status == 65, "\(command): \(run)")
            #expect(run.stderr.contains("extends './team/rules.yaml': \(s.scratch.path)/./team/rules.yaml: refused: its folder \(team) is owned by uid 12345"),
                    "\(command): \(run.stderr)")
        }
        #expect(s.victimIntact)
        // A group-writable policy of root's own is refused the same way.
        try writePolicy(policy, Self.attackerRules)
        chmod(policy, 0o664)
        let writable = try policyctl(["apply", "--yes", "--policy", policy, "--root", s.root])
        #expect(writable.status == 65, "\(writable)")
        #expect(writable.stderr.contains("policy.yaml: refused: it is writable by its group (mode 0664)"), "\(writable.stderr)")
        #expect(s.victimIntact)
    }
}
