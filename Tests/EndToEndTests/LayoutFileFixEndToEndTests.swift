// Layout `fix: true` on files and undo of layout files and symlinks, through the built binary: apply repairs an
// existing file's mode and owner on its own descriptor and journals what it replaced (recover and undo put it back),
// undo removes a file or symlink it made while it is still exactly that, and a co-tenant who swaps the file between
// plan and apply (a symlink to a victim, another inode, a FIFO) gets nothing changed and never hangs the run.
import TreeFixture
import Foundation
import Testing

@Suite("layout fix on files, undo of layout files and symlinks (end to end)")
struct LayoutFileFixEndToEndTests {
    typealias Setup = LayoutAttributesEndToEndTests.Setup

    static func attributes(_ path: String) -> (mode: UInt32, uid: UInt32, gid: UInt32)? {
        LayoutAttributesEndToEndTests.attributes(path)
    }

    /// The transaction named in `applied: ...; transaction TX in 0.08s`.
    static func transaction(_ output: String) throws -> String {
        let words = output.split(whereSeparator: { $0 == " " || $0 == "\n" })
        return try #require(words.firstIndex(of: "transaction").map { String(words[$0 + 1]) })
    }

    /// The journal's `permissions` intent lines.
    static func permissionRecords(_ root: String) -> [String] {
        let journal = (try? String(contentsOfFile: root + "/.policyctl/journal.jsonl", encoding: .utf8)) ?? ""
        return journal.split(separator: "\n").map(String.init).filter { $0.contains("\"permissions\"") }
    }

    @Test("fix: true repairs an existing file's mode and owner, journals the old ones; undo puts them back")
    func fixesFile() throws {
        let s = try Setup("  - { path: etc/conf, type: file, mode: \"0600\", owner: 12345 }\n")
        mkdir(s.root + "/etc", 0o755)
        try Data("x\n".utf8).write(to: URL(fileURLWithPath: s.root + "/etc/conf"))
        chmod(s.root + "/etc/conf", 0o644)
        let audit = try policyctl(["audit", "--policy", s.policy, "--root", s.root])
        #expect(audit.stdout.contains("etc/conf: error: layout file 'etc/conf' drifted: mode 0644, not 0600, owner uid 0, not uid 12345; add 'fix: true' to the entry to repair it, or chmod/chown it by hand [layout]"), "\(audit)")
        #expect(try policyctl(["apply", "--policy", s.policy, "--root", s.root, "--yes"]).status == 0)
        #expect(Self.attributes(s.root + "/etc/conf")?.mode == 0o644)

        try writePolicy(s.policy, "version: 1\nname: l\nlayout:\n  - { path: etc/conf, type: file, mode: \"0600\", owner: 12345, fix: true }\nrules: []\n")
        let fixAudit = try policyctl(["audit", "--policy", s.policy, "--root", s.root])
        #expect(fixAudit.stdout.contains("etc/conf: error: would set mode 0600 owner 12345: layout file drifted: mode 0644, not 0600, owner uid 0, not uid 12345 [layout]"), "\(fixAudit)")
        let fixed = try policyctl(["apply", "--policy", s.policy, "--root", s.root, "--yes"])
        #expect(fixed.status == 0 && fixed.stdout.contains("applied: 1 set-perms;"), "\(fixed)")
        let now = try #require(Self.attributes(s.root + "/etc/conf"))
        #expect(now.mode == 0o600 && now.uid == 12345 && now.gid == 0)
        let records = Self.permissionRecords(s.root)
        #expect(records.count == 1, "\(records)")
        #expect(records.first.map { $0.contains("\"setMode\":384") && $0.contains("\"setUid\":12345")
            && $0.contains("\"previousMode\":420") && $0.contains("\"previousUid\":0") } == true, "\(records)")
        #expect(try policyctl(["audit", "--policy", s.policy, "--root", s.root]).status == 0)

        let undone = try policyctl(["undo", "--root", s.root, "--yes", try Self.transaction(fixed.stdout)])
        #expect(undone.status == 0 && undone.stdout.contains("set-perms etc/conf mode 0644 owner 0 (undo)"), "\(undone)")
        let back = try #require(Self.attributes(s.root + "/etc/conf"))
        #expect(back.mode == 0o644 && back.uid == 0)
    }

    @Test("explain on a layout path names the entry, what it wants and what apply would do: create, fix or report drift")
    func explain() throws {
        let s = try Setup("  - { path: conf, type: file, mode: \"0600\", owner: 12345, fix: true }\n  - { path: old, type: file, mode: \"0600\" }\n  - { path: current, type: symlink, target: conf }\n")
        for name in ["conf", "old"] {
            try Data("x".utf8).write(to: URL(fileURLWithPath: s.root + "/" + name))
            chmod(s.root + "/" + name, 0o644)
        }
        let fix = try policyctl(["explain", "--policy", s.policy, "--root", s.root, "conf"])
        #expect(fix.status == 0, "\(fix)")
        #expect(fix.stdout.contains("\nlayout (layout file)\n  defined at \(s.policy):4:5\n  wants type file, mode 0600, owner uid 12345, empty content, fix: true\n  apply would: fix it: set mode 0600 owner 12345 (layout file drifted: mode 0644, not 0600, owner uid 0, not uid 12345)\n"), "\(fix)")
        let json = try policyctl(["explain", "--policy", s.policy, "--root", s.root, "--format", "json", "conf"])
        #expect(json.status == 0, "\(json)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let layout = try #require(object["layout"] as? [String: Any], "\(json)")
        #expect(layout["type"] as? String == "file" && layout["path"] as? String == "conf")
        #expect(layout["wants"] as? [String] == ["type file", "mode 0600", "owner uid 12345", "empty content", "fix: true"])
        #expect(layout["applyWould"] as? [String] == ["fix it: set mode 0600 owner 12345 (layout file drifted: mode 0644, not 0600, owner uid 0, not uid 12345)"])
        #expect((object["actions"] as? [[String: Any]])?.first?["action"] as? String == "set-perms", "\(json)")
        let drift = try policyctl(["explain", "--policy", s.policy, "--root", s.root, "old"])
        #expect(drift.stdout.contains("  apply would: report drift: layout file 'old' drifted: mode 0644, not 0600; add 'fix: true' to the entry to repair it, or chmod/chown it by hand\n"), "\(drift)")
        let create = try policyctl(["explain", "--policy", s.policy, "--root", s.root, "current"])
        #expect(create.stdout.contains("  wants type symlink, target 'conf'\n  apply would: create it (symlink -> conf)\n"), "\(create)")
        let none = try policyctl(["explain", "--policy", s.policy, "--root", s.root, "elsewhere"])
        #expect(!none.stdout.contains("apply would:"), "\(none)")
    }

    @Test("killed after the repair but before the commit, recover puts the file's mode and owner back")
    func recoverPutsBack() throws {
        let s = try Setup("  - { path: conf, type: file, mode: \"0640\", group: 12346, fix: true }\n")
        try Data("x".utf8).write(to: URL(fileURLWithPath: s.root + "/conf"))
        chmod(s.root + "/conf", 0o644)
        let crashed = try policyctl(["apply", "--policy", s.policy, "--root", s.root, "--yes"],
                                    environment: ["POLICYCTL_CRASH_AFTER_CHANGES": "1"])
        #expect(crashed.signal == SIGKILL, "\(crashed)")
        #expect(Self.attributes(s.root + "/conf").map { $0.mode == 0o640 && $0.gid == 12346 } == true)
        let recovered = try policyctl(["recover", "--root", s.root])
        #expect(recovered.status == 0, "\(recovered)")
        #expect(Self.attributes(s.root + "/conf").map { $0.mode == 0o644 && $0.gid == 0 } == true, "\(recovered)")
    }

    @Test("a file with two hard links is reported, never changed, even with fix: true")
    func hardLinks() throws {
        let s = try Setup("  - { path: conf, type: file, mode: \"0600\", fix: true }\n")
        try Data("x".utf8).write(to: URL(fileURLWithPath: s.root + "/conf"))
        chmod(s.root + "/conf", 0o644)
        #expect(link(s.root + "/conf", s.root + "/other") == 0)
        let audit = try policyctl(["audit", "--policy", s.policy, "--root", s.root])
        #expect(audit.stdout.contains("conf: error: layout file 'conf' has 2 hard links; its mode and owner are never changed: mode 0644, not 0600 [layout]"), "\(audit)")
        #expect(try policyctl(["apply", "--policy", s.policy, "--root", s.root, "--yes"]).status == 0)
        #expect(Self.attributes(s.root + "/conf")?.mode == 0o644)
    }

    @Test("undo removes the layout file and symlink it made; changed ones (other target, other content) are kept")
    func undoLayoutFileAndSymlink() throws {
        let s = try Setup("  - { path: etc/motd, type: file, content: \"hello\\n\", mode: \"0640\" }\n  - { path: current, type: symlink, target: etc/motd }\n")
        let made = try policyctl(["apply", "--policy", s.policy, "--root", s.root, "--yes"])
        #expect(made.status == 0, "\(made)")
        let undone = try policyctl(["undo", "--root", s.root, "--yes", try Self.transaction(made.stdout)])
        #expect(undone.status == 0, "\(undone)")
        #expect(access(s.root + "/etc/motd", F_OK) != 0, "\(undone)")
        #expect(LayoutTypesEndToEndTests.link(s.root + "/current") == nil, "\(undone)")
        #expect(access(s.root + "/etc", F_OK) != 0, "the folder it made goes too: \(undone)")

        let again = try policyctl(["apply", "--policy", s.policy, "--root", s.root, "--yes"])
        #expect(again.status == 0, "\(again)")
        #expect(unlink(s.root + "/current") == 0 && symlink("elsewhere", s.root + "/current") == 0)
        try Data("changed\n".utf8).write(to: URL(fileURLWithPath: s.root + "/etc/motd"))
        let kept = try policyctl(["undo", "--root", s.root, "--yes", try Self.transaction(again.stdout)])
        #expect((kept.stdout + kept.stderr).contains("current: not the symlink the transaction made any more (another type, owner or target); kept"), "\(kept)")
        #expect((kept.stdout + kept.stderr).contains("etc/motd: changed since the transaction wrote it; kept"), "\(kept)")
        #expect(LayoutTypesEndToEndTests.link(s.root + "/current") == "elsewhere")
        #expect(LayoutTypesEndToEndTests.contents(s.root + "/etc/motd") == "changed\n")
    }

    /// Root's file in a folder the co-tenant can write, planned for repair (`plan --out`), then swapped by `swap`
    /// before apply runs the plan. (A co-tenant's own file is never planned for repair: CoTenantPrivilegedTests.)
    func raced(_ swap: (String) -> String, name: String) throws -> (Setup, RunResult) {
        let s = try Setup("  - { path: conf, type: file, mode: \"0600\", owner: 0, fix: true }\n")
        chmod(s.root, 0o777)
        try Data("mine\n".utf8).write(to: URL(fileURLWithPath: s.root + "/conf"))
        chmod(s.root + "/conf", 0o644)
        let planFile = s.scratch.path + "/plan-\(name).json"
        let saved = try policyctl(["plan", "--policy", s.policy, "--root", s.root, "--out", planFile])
        #expect(saved.status == 0, "\(saved)")
        #expect(try String(contentsOfFile: planFile, encoding: .utf8).contains("\"action\" : \"set-perms\""))
        let swapped = try CoTenant.sh(swap(s.root))
        #expect(swapped.status == 0, "\(swapped)")
        // A FIFO opened blocking would hang here: the run is killed after 60 s, and the test fails on the signal.
        let run = try policyctl(["apply", planFile, "--yes"], killAfter: 60)
        #expect(run.signal == nil && run.status == 0, "\(run)")
        #expect(Self.attributes(s.root + "/away").map { $0.mode == 0o644 && $0.uid == 0 } == true,
                "the file moved away is not changed either")
        return (s, run)
    }

    @Test("a co-tenant's symlink where a fix: true file should be: named at plan time, and swapped in after the plan, never followed",
          .enabled(if: CoTenant.isAvailable))
    func plantedSymlink() throws {
        let s = try Setup("  - { path: conf, type: file, mode: \"0600\", owner: 0, fix: true }\n")
        chmod(s.root, 0o777)
        let victim = s.scratch.sub("victim") + "/secret"
        try Data("victim's".utf8).write(to: URL(fileURLWithPath: victim))
        #expect(chown(victim, 12346, 12346) == 0 && chmod(victim, 0o640) == 0)
        #expect(try CoTenant.sh("ln -s '\(victim)' '\(s.root)/conf'").status == 0)
        let plan = try policyctl(["plan", "--policy", s.policy, "--root", s.root])
        #expect(plan.stdout.contains("error   layout  conf: a symlink is where layout file 'conf' must be; it is never replaced"), "\(plan)")
        #expect(!plan.stdout.contains("set-perms"), "\(plan)")
        #expect(try policyctl(["apply", "--policy", s.policy, "--root", s.root, "--yes"]).status == 0)
        var after = try #require(Self.attributes(victim))
        #expect(after.mode == 0o640 && after.uid == 12346 && after.gid == 12346)

        let (_, run) = try raced({ "mv '\($0)/conf' '\($0)/away' && ln -s '\(victim)' '\($0)/conf'" }, name: "symlink")
        #expect((run.stdout + run.stderr).contains("skipped set-perms conf: a symlink is where the layout file must be"), "\(run)")
        after = try #require(Self.attributes(victim))
        #expect(after.mode == 0o640 && after.uid == 12346 && after.gid == 12346)
    }

    @Test("a co-tenant's file swapped for another inode between plan and apply is skipped and left as it is",
          .enabled(if: CoTenant.isAvailable))
    func swappedInode() throws {
        let (s, run) = try raced({ "mv '\($0)/conf' '\($0)/away' && cp -p '\($0)/away' '\($0)/conf'" }, name: "inode")
        #expect((run.stdout + run.stderr).contains("skipped set-perms conf: replaced since the plan"), "\(run)")
        let now = try #require(Self.attributes(s.root + "/conf"))
        #expect(now.mode == 0o644 && now.uid == CoTenant.uid)
    }

    @Test("a FIFO planted where a fix: true file was is skipped without opening it, and apply does not hang",
          .enabled(if: CoTenant.isAvailable))
    func plantedFifo() throws {
        let (s, run) = try raced({ "mv '\($0)/conf' '\($0)/away' && mkfifo -m 644 '\($0)/conf'" }, name: "fifo")
        #expect((run.stdout + run.stderr).contains("skipped set-perms conf: a fifo is where the layout file must be"), "\(run)")
        let now = try #require(Self.attributes(s.root + "/conf"))
        #expect(now.mode == 0o644 && now.uid == CoTenant.uid)
    }
}
