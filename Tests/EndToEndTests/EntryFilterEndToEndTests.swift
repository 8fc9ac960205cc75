// Rule filters through the built binary: owner: on a shared root (uid 12345's files go, a victim's stay, even
// when a saved plan names the victim's file), an unknown user named at file:line:col, size and case: insensitive
// on names that are not UTF-8 or hold a newline.
import TreeFixture
import Foundation
import Testing

@Suite("rule filters (end to end)")
struct EntryFilterEndToEndTests {
    /// A 1777 shared root holding uid 12345's old files and a victim's (uid 12346) old file, and the policy that
    /// expires uid 12345's files only.
    struct Shared {
        let scratch = ScratchDirectory("filters")
        let root: String, state: String, policy: String
        let victim: String

        init(victimOwner: uid_t = 12346) throws {
            chmod(scratch.path, 0o755)
            root = scratch.sub("root")
            state = scratch.sub("state")
            chmod(root, 0o1777)
            try buildTree(at: root, [.file("junk.tmp", size: 50, ageHours: 3), .file("more.tmp", size: 60, ageHours: 3),
                                     .file("notes.txt", size: 70, ageHours: 3)])
            for name in ["junk.tmp", "more.tmp"] { #expect(chown(root + "/" + name, CoTenant.uid, CoTenant.uid) == 0) }
            victim = root + "/notes.txt"
            #expect(chown(victim, victimOwner, victimOwner) == 0)
            policy = scratch.path + "/p.yaml"
            try writePolicy(policy, "version: 1\nname: shared\nrules:\n  - name: e\n    path: .\n    expire: 1h\n    owner: 12345\n")
        }

        var victimSize: Int { (try? FileManager.default.attributesOfItem(atPath: victim)[.size] as? Int) ?? -1 }
    }

    @Test("owner: 12345 deletes uid 12345's old files on a shared root and keeps the victim's", .enabled(if: CoTenant.isAvailable))
    func ownerOnSharedRoot() throws {
        let s = try Shared()
        let run = try policyctl(["apply", "--policy", s.policy, "--root", s.root, "--state-dir", s.state, "--yes"])
        #expect(run.status == 0, "\(run)")
        #expect(access(s.root + "/junk.tmp", F_OK) != 0 && access(s.root + "/more.tmp", F_OK) != 0)
        #expect(s.victimSize == 70, "\(run)")
    }

    @Test("a saved plan's delete of a file no longer the rule's owner's is kept at apply, and says why",
          .enabled(if: CoTenant.isAvailable))
    func savedPlanOwnerChecked() throws {
        // Planned while notes.txt belonged to uid 12345; then it is the victim's (chown keeps size and mtime, so
        // the plan's identity still matches: only the owner check stands between it and the unlink).
        let s = try Shared(victimOwner: CoTenant.uid)
        let planFile = s.scratch.path + "/plan.json"
        let planned = try policyctl(["plan", "--policy", s.policy, "--root", s.root, "--out", planFile])
        #expect(planned.status == 0, "\(planned)")
        #expect(try String(contentsOfFile: planFile, encoding: .utf8).contains("notes.txt"))
        #expect(chown(s.victim, 12346, 12346) == 0)
        let run = try policyctl(["apply", planFile, "--state-dir", s.state, "--yes"])
        #expect(s.victimSize == 70, "\(run)")
        #expect((run.stdout + run.stderr).contains("notes.txt"), "\(run)")
        #expect((run.stdout + run.stderr).contains("rule 'e' does not select it now (owned by uid 12346, not uid 12345); kept"), "\(run)")
        #expect(access(s.root + "/junk.tmp", F_OK) != 0)
    }

    @Test("an unknown owner name is an error at file:line:col (65)")
    func unknownOwner() throws {
        let scratch = ScratchDirectory("filters")
        let policy = scratch.path + "/p.yaml"
        try writePolicy(policy, "version: 1\nname: p\nrules:\n  - name: e\n    path: tmp\n    expire: 1h\n    owner: no-such-user-q7\n")
        let r = try policyctl(["validate", policy])
        #expect(r.status == 65, "\(r)")
        #expect(r.stderr.contains("\(policy):7:12: error: rule 'e': 'owner': no user named 'no-such-user-q7' on this system"), "\(r)")
    }

    @Test("size and case: insensitive on names that are not UTF-8 or hold a newline; validate --effective keeps them")
    func sizeAndCaseOnUglyNames() throws {
        let scratch = ScratchDirectory("filters")
        let root = scratch.sub("tree")
        try buildTree(at: root, [.dir("tmp", ageHours: 3),
                                 .rawFile(Array("tmp/".utf8) + [0xFF, 0x2E, 0x4C, 0x4F, 0x47], size: 5000, ageHours: 3),
                                 .file("tmp/a\nb.Log", size: 5000, ageHours: 3),
                                 .file("tmp/tiny.LOG", size: 10, ageHours: 3),
                                 .file("tmp/keep.txt", size: 5000, ageHours: 3)])
        let policy = scratch.path + "/p.yaml"
        try writePolicy(policy, "version: 1\nname: p\nrules:\n  - name: logs\n    path: tmp\n    match: '*.log'\n    expire: 1h\n    size: { over: 1KiB }\n    case: insensitive\n")
        let effective = try policyctl(["validate", "--effective", policy])
        #expect(effective.stdout.contains("    match: [\"*.log\"]\n    size: { over: 1024 }\n    case: insensitive\n    expire:"), "\(effective)")
        let run = try policyctl(["apply", "--policy", policy, "--root", root, "--yes"])
        #expect(run.status == 0, "\(run)")
        let left = try FileManager.default.contentsOfDirectory(atPath: root + "/tmp").sorted()
        #expect(left == ["keep.txt", "tiny.LOG"], "\(run)")
    }
}
