// Issue 49, item 6 (binary): a `roots:` policy with an error run without --root shows the located errors validate
// shows (65) before any option check; `status` runs over every listed root; `cat-config` refuses a drop-in that is
// no policy as --policy refuses it (nothing of it printed); a restore into the trash folder itself is refused.
import TreeFixture
import Foundation
import Testing

@Suite("roots: errors first, status over every root, cat-config and restore refusals (issue 49, binary)")
struct RootsRoughEdgesTests {
    @Test("a roots: policy with an error, run without --root: the errors validate shows, located, exit 65; no word of --root")
    func errorsBeforeOptions() throws {
        let scratch = ScratchDirectory("rough-errors")
        let policy = scratch.path + "/p.yaml"
        try writePolicy(policy, "version: 1\nname: bad\nroots:\n  - { path: \(scratch.path)/a, rules: [tmp] }\nrules:\n  - { name: tmp, path: tmp, expire: 1d, colour: red }\n")
        let validate = try policyctl(["validate", policy])
        #expect(validate.status == 65, "\(validate)")
        let located = validate.stderr.split(separator: "\n").filter { $0.contains("\(policy):") && $0.contains("error") }
        #expect(!located.isEmpty, "\(validate)")
        for command in [["plan"], ["apply", "--yes"], ["status"]] {
            let run = try policyctl([command[0], "--policy", policy] + command.dropFirst())
            #expect(run.status == 65, "\(command): \(run)")
            for line in located { #expect(run.stderr.contains(line), "\(command) lacks \(line): \(run)") }
            #expect(!run.stderr.contains("--root"), "\(command): \(run)")
        }
        // A valid policy without roots: the missing option, as before (64).
        try writePolicy(policy, "version: 1\nname: ok\nrules:\n  - { name: tmp, path: tmp, expire: 1d }\n")
        let missing = try policyctl(["plan", "--policy", policy])
        #expect(missing.status == 64 && missing.stderr.contains("Missing expected option '--root <dir>'"), "\(missing)")
    }

    @Test("status without --root shows every listed root, in text and as a JSON array")
    func statusEveryRoot() throws {
        let scratch = ScratchDirectory("rough-status")
        let a = scratch.sub("a"), b = scratch.sub("b")
        for root in [a, b] { try buildTree(at: root, [.dir("tmp"), .file("tmp/old", size: 100, ageHours: 72)]) }
        let policy = scratch.path + "/p.yaml"
        try writePolicy(policy, "version: 1\nname: two\nroots:\n  - { path: \(a), rules: [tmp] }\n  - { path: \(b), rules: [tmp] }\nrules:\n  - { name: tmp, path: tmp, expire: 1d }\n")
        let text = try policyctl(["status", "--policy", policy])
        #expect(text.status == 0, "\(text)")
        #expect(text.stdout.contains("== root \(a) [1/2] ==") && text.stdout.contains("== root \(b) [2/2] =="), "\(text)")
        let json = try policyctl(["status", "--policy", policy, "--format", "json"])
        #expect(json.status == 0, "\(json)")
        let reports = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]], "\(json)")
        #expect(reports.compactMap { $0["root"] as? String } == [a, b])
        let one = try policyctl(["status", "--policy", policy, "--root", b, "--format", "json"])
        #expect((try JSONSerialization.jsonObject(with: Data(one.stdout.utf8)) as? [String: Any])?["root"] as? String == b, "\(one)")
    }

    @Test("cat-config refuses a drop-in that is no policy, as --policy does: exit 65, located, none of its bytes printed")
    func catConfigRefusesNonPolicy() throws {
        let scratch = ScratchDirectory("rough-catconfig")
        chmod(scratch.path, 0o755)
        let config = scratch.sub("config")
        for folder in ["etc", "run", "usr", "usr/lib", "etc/policyctl.d", "run/policyctl.d", "usr/lib/policyctl.d"] {
            mkdir(config + "/" + folder, 0o755)
        }
        try writePolicy(config + "/etc/policyctl.d/10-good.yaml", "version: 1\nname: good\nrules: []\n")
        try writePolicy(config + "/etc/policyctl.d/20-secret.yaml", "password: hunter2\ntoken: s3cr3t\n")
        let env = ["POLICYCTL_CONFIG_ROOT": config]
        let cat = try policyctl(["cat-config"], environment: env)
        #expect(cat.status == 65, "\(cat)")
        #expect(cat.stdout.isEmpty, "nothing printed before the refusal: \(cat)")
        #expect(cat.stderr.contains("\(config)/etc/policyctl.d/20-secret.yaml:1:1: error: missing 'version'"), "\(cat)")
        #expect(!(cat.stdout + cat.stderr).contains("hunter2") && !(cat.stdout + cat.stderr).contains("s3cr3t"), "\(cat)")
        let plan = try policyctl(["plan", "--root", scratch.sub("root")], environment: env)
        #expect(plan.status == 65 && !(plan.stdout + plan.stderr).contains("hunter2"), "the set refused the same way: \(plan)")
    }

    @Test("trash --restore into the trash folder is refused (64), and a record naming a place inside the trash is skipped")
    func restoreIntoTrashRefused() throws {
        let scratch = ScratchDirectory("rough-restore")
        let root = scratch.sub("root")
        try buildTree(at: root, [.dir("docs"), .file("docs/a.txt"), .file("docs/b.txt")])
        let trashed = try policyctl(["trash", "--root", root, "--trash-dir", ".Trash", "--layout", "freedesktop", "docs/a.txt", "docs/b.txt"])
        #expect(trashed.status == 0, "\(trashed)")
        let into = try policyctl(["trash", "--root", root, "--trash-dir", ".Trash", "--restore", "a.txt", "--to", ".Trash/x"])
        #expect(into.status == 64 && into.stderr.contains("is inside the trash folder .Trash"), "\(into)")
        #expect(FileManager.default.fileExists(atPath: root + "/.Trash/files/a.txt"))
        #expect(FileManager.default.fileExists(atPath: root + "/.Trash/info/a.txt.trashinfo"), "the record stays")
        let absolute = try policyctl(["trash", "--root", root, "--trash-dir", ".Trash", "--restore", "b.txt", "--to", "\(root)/.Trash/files/c"])
        #expect(absolute.status == 64 && absolute.stderr.contains("is inside the trash folder .Trash"), "\(absolute)")
        #expect(FileManager.default.fileExists(atPath: root + "/.Trash/files/b.txt"))
        // An item another tool trashed, with a trusted (root's) record whose Path= lies inside the trash: skipped,
        // nothing moves, the record stays.
        try Data("c\n".utf8).write(to: URL(fileURLWithPath: root + "/.Trash/files/c.txt"))
        let info = root + "/.Trash/info/c.txt.trashinfo"
        try Data("[Trash Info]\nPath=\(root)/.Trash/kept\nDeletionDate=2026-01-01T00:00:00\n".utf8).write(to: URL(fileURLWithPath: info))
        chmod(info, 0o600)
        let byRecord = try policyctl(["trash", "--root", root, "--trash-dir", ".Trash", "--restore", "c.txt"])
        #expect(byRecord.status == 1 && (byRecord.stdout + byRecord.stderr).contains("the destination .Trash/kept is inside the trash folder .Trash"), "\(byRecord)")
        #expect(FileManager.default.fileExists(atPath: root + "/.Trash/files/c.txt") && FileManager.default.fileExists(atPath: info))
    }
}
