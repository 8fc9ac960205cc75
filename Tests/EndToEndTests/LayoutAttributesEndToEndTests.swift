// Layout `mode:`, `owner:`, `group:` and `fix:` through the built binary: apply creates a directory with them,
// repairs an existing one only with `fix: true`, audit reports drift (SARIF, JUnit, GitHub), recover undoes a
// creation killed between its mkdir and its chmod, and a co-tenant's symlink where a `fix: true` directory should
// be is named and never followed (the victim it points at keeps its mode and owner).
import TreeFixture
import Foundation
import Testing

@Suite("layout mode, owner and group (end to end)")
struct LayoutAttributesEndToEndTests {
    /// mode (permission bits), uid and gid of `path` itself (lstat).
    static func attributes(_ path: String) -> (mode: UInt32, uid: UInt32, gid: UInt32)? {
        var s = stat()
        guard lstat(path, &s) == 0 else { return nil }
        return (UInt32(s.st_mode) & 0o7777, s.st_uid, s.st_gid)
    }

    struct Setup {
        let scratch = ScratchDirectory("layout-attrs")
        let root: String, policy: String

        init(_ layout: String) throws {
            chmod(scratch.path, 0o755)
            root = scratch.sub("root")
            policy = scratch.path + "/p.yaml"
            try writePolicy(policy, "version: 1\nname: l\nlayout:\n" + layout + "rules: []\n")
        }
    }

    @Test("apply creates a missing layout directory with its mode, owner and group; plan shows it as set-perms")
    func creates() throws {
        let s = try Setup("  - { path: spool/in, mode: \"0750\", owner: 12345, group: 12346 }\n")
        let plan = try policyctl(["plan", "--policy", s.policy, "--root", s.root])
        #expect(plan.status == 0, "\(plan)")
        #expect(plan.stdout.contains("* set-perms spool/in  mode 0750 owner 12345 group 12346  mode and owner of a new layout directory"), "\(plan)")
        #expect(plan.stdout.contains(", 2 to create, 0 markers to set, 0 cache tags to write, 1 mode or owner to set; 0 violations"), "\(plan)")
        let json = try policyctl(["plan", "--policy", s.policy, "--root", s.root, "--format", "json"])
        #expect(json.stdout.contains("\"action\" : \"set-perms\",\n      \"bytes\" : 0,\n      \"group\" : 12346,\n      \"mode\" : \"0750\",\n      \"owner\" : 12345,\n      \"path\" : \"spool/in\""), "\(json)")
        let run = try policyctl(["apply", "--policy", s.policy, "--root", s.root, "--yes"])
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.contains("applied: 2 mkdir, 1 set-perms;"), "\(run)")
        let made = try #require(Self.attributes(s.root + "/spool/in"))
        #expect(made.mode == 0o750 && made.uid == 12345 && made.gid == 12346)
        // The parent the layout only leads through is created as mkdir always made it, root's.
        #expect(Self.attributes(s.root + "/spool")?.uid == 0)
        let again = try policyctl(["plan", "--policy", s.policy, "--root", s.root])
        #expect(again.stdout.contains("No changes."), "\(again)")
    }

    @Test("drift of an existing directory: a violation without fix (never chmodded), repaired with fix: true")
    func driftAndFix() throws {
        let s = try Setup("  - { path: shared, mode: \"0700\", group: 12346 }\n")
        mkdir(s.root + "/shared", 0o755)
        chmod(s.root + "/shared", 0o755)
        let audit = try policyctl(["audit", "--policy", s.policy, "--root", s.root])
        #expect(audit.status == 1, "\(audit)")
        let message = "layout directory 'shared' drifted: mode 0755, not 0700, group gid 0, not gid 12346; add 'fix: true' to the entry to repair it, or chmod/chown it by hand"
        #expect(audit.stdout.contains("shared: error: " + message + " [layout]"), "\(audit)")
        let sarif = try policyctl(["audit", "--policy", s.policy, "--root", s.root, "--format", "sarif"])
        #expect(sarif.stdout.contains("\"text\" : \"shared: " + message + "\""), "\(sarif)")
        let junit = try policyctl(["audit", "--policy", s.policy, "--root", s.root, "--format", "junit"])
        #expect(junit.stdout.contains("<failure type=\"error\" message=\"layout directory &apos;shared&apos; drifted: mode 0755"), "\(junit)")
        let github = try policyctl(["audit", "--policy", s.policy, "--root", s.root, "--format", "github"])
        #expect(github.stdout.contains("::error file=\(s.root)/shared,title=layout::shared: " + message), "\(github)")
        let run = try policyctl(["apply", "--policy", s.policy, "--root", s.root, "--yes"])
        #expect(run.status == 0, "\(run)")
        #expect(Self.attributes(s.root + "/shared")?.mode == 0o755 && Self.attributes(s.root + "/shared")?.gid == 0, "\(run)")

        try writePolicy(s.policy, "version: 1\nname: l\nlayout:\n  - { path: shared, mode: \"0700\", group: 12346, fix: true }\nrules: []\n")
        let fixAudit = try policyctl(["audit", "--policy", s.policy, "--root", s.root])
        #expect(fixAudit.stdout.contains("shared: error: would set mode 0700 group 12346: layout directory drifted: mode 0755, not 0700, group gid 0, not gid 12346 [layout]"), "\(fixAudit)")
        let fixed = try policyctl(["apply", "--policy", s.policy, "--root", s.root, "--yes"])
        #expect(fixed.status == 0 && fixed.stdout.contains("applied: 1 set-perms;"), "\(fixed)")
        let now = try #require(Self.attributes(s.root + "/shared"))
        #expect(now.mode == 0o700 && now.gid == 12346 && now.uid == 0)
        #expect(try policyctl(["audit", "--policy", s.policy, "--root", s.root]).status == 0)

        // undo puts back the mode and group the repair replaced.
        // `applied: 1 set-perms; transaction TX in 0.08s`
        let words = fixed.stdout.split(separator: " ")
        let tx = try #require(words.firstIndex(of: "transaction").map { String(words[$0 + 1]) })
        let undone = try policyctl(["undo", "--root", s.root, "--yes", tx])
        #expect(undone.status == 0 && undone.stdout.contains("set-perms shared mode 0755 group 0 (undo)"), "\(undone)")
        let back = try #require(Self.attributes(s.root + "/shared"))
        #expect(back.mode == 0o755 && back.gid == 0)
    }

    @Test("killed between the mkdir and its chmod, recover removes the half-made directory; a repair is put back")
    func recoverAfterCrash() throws {
        let s = try Setup("  - { path: made, mode: \"0700\", owner: 12345 }\n  - { path: old, mode: \"0700\", fix: true }\n")
        mkdir(s.root + "/old", 0o755)
        chmod(s.root + "/old", 0o755)
        let crashed = try policyctl(["apply", "--policy", s.policy, "--root", s.root, "--yes"],
                                    environment: ["POLICYCTL_CRASH_AFTER_CHANGES": "1"])
        #expect(crashed.signal == SIGKILL, "\(crashed)")
        // The mkdir is made; the chmod and chown are not.
        #expect(Self.attributes(s.root + "/made")?.mode == 0o755 && Self.attributes(s.root + "/made")?.uid == 0)
        let recovered = try policyctl(["recover", "--root", s.root])
        #expect(recovered.status == 0, "\(recovered)")
        #expect(access(s.root + "/made", F_OK) != 0, "\(recovered)")

        // Killed after every change is made but before the commit: the repair of `old` is put back too.
        let late = try policyctl(["apply", "--policy", s.policy, "--root", s.root, "--yes"],
                                 environment: ["POLICYCTL_CRASH_AFTER_CHANGES": "3"])
        #expect(late.signal == SIGKILL, "\(late)")
        #expect(Self.attributes(s.root + "/old")?.mode == 0o700)
        #expect(try policyctl(["recover", "--root", s.root]).status == 0)
        #expect(Self.attributes(s.root + "/old")?.mode == 0o755)
        #expect(access(s.root + "/made", F_OK) != 0)

        let run = try policyctl(["apply", "--policy", s.policy, "--root", s.root, "--yes"])
        #expect(run.status == 0, "\(run)")
        #expect(Self.attributes(s.root + "/made")?.mode == 0o700 && Self.attributes(s.root + "/made")?.uid == 12345)
        #expect(Self.attributes(s.root + "/old")?.mode == 0o700)
    }

    @Test("a co-tenant's symlink where a fix: true directory should be: named, never followed, the victim unchanged",
          .enabled(if: CoTenant.isAvailable))
    func plantedSymlink() throws {
        let s = try Setup("  - { path: drop, mode: \"0700\", owner: 0, fix: true }\n")
        chmod(s.root, 0o1777)
        let victimFolder = s.scratch.sub("victim")
        let victim = victimFolder + "/secret"
        try Data("victim's".utf8).write(to: URL(fileURLWithPath: victim))
        #expect(chown(victim, 12346, 12346) == 0 && chmod(victim, 0o640) == 0)
        let planted = try CoTenant.sh("ln -s '\(victim)' '\(s.root)/drop'")
        #expect(planted.status == 0, "\(planted)")

        let plan = try policyctl(["plan", "--policy", s.policy, "--root", s.root])
        #expect(plan.status == 0, "\(plan)")
        #expect(plan.stdout.contains("error   layout  drop: a symlink is where layout directory 'drop' needs a directory; it is never replaced"), "\(plan)")
        #expect(!plan.stdout.contains("set-perms"), "\(plan)")
        let run = try policyctl(["apply", "--policy", s.policy, "--root", s.root, "--yes"])
        #expect(run.status == 0, "\(run)")
        // Apply plans the same violation and has nothing to change (it prints no violations, as for every rule).
        #expect(run.stdout.contains("Nothing to do:"), "\(run)")
        var after = try #require(Self.attributes(victim))
        #expect(after.mode == 0o640 && after.uid == 12346 && after.gid == 12346)
        #expect(Self.attributes(s.root + "/drop")?.uid == CoTenant.uid)

        // The race: root's folder is planned for repair, then the co-tenant (who can write the root) swaps it for
        // the symlink before apply. (A co-tenant's own folder is never planned for repair: CoTenantPrivilegedTests.)
        #expect(try CoTenant.sh("rm '\(s.root)/drop'").status == 0)
        chmod(s.root, 0o777)
        #expect(mkdir(s.root + "/drop", 0o777) == 0 && chmod(s.root + "/drop", 0o777) == 0)
        let planFile = s.scratch.path + "/plan.json"
        let saved = try policyctl(["plan", "--policy", s.policy, "--root", s.root, "--out", planFile])
        #expect(saved.status == 0, "\(saved)")
        #expect(try String(contentsOfFile: planFile, encoding: .utf8).contains("\"action\" : \"set-perms\""))
        #expect(try CoTenant.sh("mv '\(s.root)/drop' '\(s.root)/away' && ln -s '\(victim)' '\(s.root)/drop'").status == 0)
        let raced = try policyctl(["apply", planFile, "--yes"])
        #expect(raced.status == 0, "\(raced)")
        #expect((raced.stdout + raced.stderr).contains("skipped set-perms drop: a symlink is where the layout directory must be"), "\(raced)")
        after = try #require(Self.attributes(victim))
        #expect(after.mode == 0o640 && after.uid == 12346 && after.gid == 12346)
        #expect(Self.attributes(s.root + "/away")?.mode == 0o777, "the folder moved away is not the one judged either: untouched")
    }
}
