// The quarantine under a co-tenant (uid 12345) in a 1777 root, against the built binary as root with --state-dir
// (the quarantine then lives at the root, beside what the co-tenant can write): nothing held can be read or
// reached by the co-tenant; an undo into a folder the co-tenant swapped in for root's is refused (the entry stays
// held) while root's own folder, wherever the co-tenant moved it, is never used by path; a folder or symlink the
// co-tenant plants under a quarantine name is never used, never walked, never purged.
import TreeFixture
import Foundation
import StoragePolicy
import Testing

@Suite("The quarantine under a co-tenant (binary, attacker uid 12345)", .serialized)
struct CoTenantQuarantineTests {
    struct World {
        let scratch = ScratchDirectory("cotenant-quarantine")
        let root: String
        let state: String
        let policy: String

        /// `shared` is writable by everyone (`sharedMode`); root's folder `shared/u` holds root's 0600 `secret`,
        /// 48 hours old; the folder itself is `folderAge` hours old (expired whole when older than the rule's 1h).
        init(sharedMode: mode_t = 0o1777, folderAge: Double = 48) throws {
            chmod(scratch.path, 0o755)
            root = scratch.sub("root")
            chmod(root, 0o1777)
            state = scratch.path + "/state"
            policy = scratch.path + "/p.yaml"
            try writePolicy(policy, "version: 1\nname: held\nquarantine: 7d\nrules:\n  - name: old\n    path: shared\n    expire: 1h\n")
            try buildTree(at: root, [.dir("shared", ageHours: 0.01), .dir("shared/u", ageHours: folderAge), .file("shared/u/secret", size: 40)])
            chmod(root + "/shared", sharedMode)
            chmod(root + "/shared/u/secret", 0o600)
        }

        func run(_ arguments: [String]) throws -> RunResult {
            try policyctl(arguments + ["--root", root, "--state-dir", state])
        }

        func exists(_ rel: String) -> Bool {
            var st = stat()
            return lstat(root + "/" + rel, &st) == 0
        }
    }

    @Test("nothing the quarantine holds can be listed, read or reached by the co-tenant", .enabled(if: CoTenant.isAvailable))
    func unreadable() throws {
        let w = try World()
        let applied = try w.run(["apply", "--policy", w.policy, "--yes"])
        #expect(applied.status == 0, "\(applied)")
        let id = try #require(transactionID(applied))
        let folder = w.root + "/.policyctl-quarantine-\(id)"
        var st = stat()
        #expect(lstat(folder, &st) == 0 && st.st_uid == 0 && st.st_mode & 0o7777 == 0o700)
        let probe = try CoTenant.sh("ls '\(folder)' 2>&1; cat '\(folder)'/*/*/u/secret 2>&1; cat '\(folder)'/*/1/secret 2>&1; find '\(folder)' 2>&1 | wc -l")
        #expect(probe.stdout.contains("Permission denied"), "\(probe.stdout)")
        #expect(!probe.stdout.contains(String(repeating: "a", count: 40)), "\(probe.stdout)")
        // Nor can the co-tenant take it away: it cannot rename into or out of a folder it cannot write.
        let move = try CoTenant.sh("mv '\(folder)'/* /tmp/ 2>&1; echo $?")
        #expect(!move.stdout.hasSuffix("0\n"), "\(move.stdout)")
        let undo = try w.run(["undo", "--yes", id])
        #expect(undo.status == 0, "\(undo)")
        #expect(w.exists("shared/u/secret"))
    }

    @Test("an undo into a folder the co-tenant swapped in is refused; the entry stays held; root's folder, moved, gets it back",
          .enabled(if: CoTenant.isAvailable))
    func swappedFolder() throws {
        // `shared` without the sticky bit: the co-tenant can rename root's folder in it. Only the file goes (the
        // folder is new enough to stay).
        let w = try World(sharedMode: 0o777, folderAge: 0.01)
        let applied = try w.run(["apply", "--policy", w.policy, "--yes"])
        #expect(applied.status == 0, "\(applied)")
        let id = try #require(transactionID(applied))
        #expect(!w.exists("shared/u/secret") && w.exists("shared/u"))
        // The co-tenant moves root's folder aside and makes its own under the name, hoping root restores into it.
        #expect(try CoTenant.sh("mv '\(w.root)/shared/u' '\(w.root)/shared/u-old' && mkdir -m 0777 '\(w.root)/shared/u'").status == 0)
        let dry = try w.run(["undo", "--dry-run", id])
        #expect(dry.stdout.contains("skipped shared/u/secret: its folder shared/u is not the one it was taken from (replaced since); left in the quarantine"), "\(dry.stdout)")
        let undo = try w.run(["undo", "--yes", id])
        #expect(undo.status == 1, "\(undo)")
        #expect(!w.exists("shared/u/secret") && !w.exists("shared/u-old/secret"))
        let held = try JSONDecoder().decode(QuarantineContents.self,
                                            from: Data(try w.run(["quarantine", "--format", "json"]).stdout.utf8))
        #expect(held.windows.flatMap { $0.entries.map(\.path) } == ["shared/u/secret"])
        // Once root's own folder is back under its name, the undo goes through.
        #expect(try CoTenant.sh("rmdir '\(w.root)/shared/u' && mv '\(w.root)/shared/u-old' '\(w.root)/shared/u'").status == 0)
        #expect(try w.run(["undo", "--yes", id]).status == 0)
        var st = stat()
        #expect(lstat(w.root + "/shared/u/secret", &st) == 0 && st.st_uid == 0 && st.st_mode & 0o7777 == 0o600)
    }

    @Test("a folder the co-tenant owns where the entry's folder was (gone since) is refused by restore's trust rule",
          .enabled(if: CoTenant.isAvailable))
    func goneFolderTakenByCoTenant() throws {
        let w = try World()
        let applied = try w.run(["apply", "--policy", w.policy, "--yes"])
        let id = try #require(transactionID(applied))
        // The whole folder was expired: it is held too. The co-tenant makes its own under the name meanwhile.
        #expect(!w.exists("shared/u"))
        #expect(try CoTenant.sh("mkdir -m 0777 '\(w.root)/shared/u'").status == 0)
        let undo = try w.run(["undo", "--yes", id])
        #expect(undo.status == 1, "\(undo)")
        #expect(undo.stdout.contains("skipped shared/u: shared/u exists (a directory); nothing replaced; left in the quarantine")
                || undo.stdout.contains("shared/u exists"), "\(undo.stdout)")
        #expect(!w.exists("shared/u/secret"))
    }

    @Test("a folder or symlink planted under a quarantine name is never used, walked, listed or purged", .enabled(if: CoTenant.isAvailable))
    func planted() throws {
        let w = try World()
        let fake = "20991231T000000Z-deadbeef"
        #expect(try CoTenant.sh("""
            mkdir -p '\(w.root)/.policyctl-quarantine-\(fake)/20991231T000000Z' && echo mine > '\(w.root)/.policyctl-quarantine-\(fake)/20991231T000000Z/1' &&
            ln -s /etc '\(w.root)/.policyctl-quarantine-20991231T000001Z-cafecafe'
            """).status == 0)
        let plan = try policyctl(["plan", "--policy", w.policy, "--root", w.root, "--format", "json"])
        #expect(!plan.stdout.contains(".policyctl-quarantine"), "\(plan.stdout)")
        let listed = try w.run(["quarantine"])
        #expect(listed.status == 0, "\(listed)")
        #expect(listed.stdout.contains("holds nothing"), "\(listed.stdout)")
        #expect(listed.stderr.contains("the journal has no transaction \(fake); left alone"), "\(listed.stderr)")
        let purged = try w.run(["quarantine", "--purge", "--yes"])
        #expect(purged.status == 0, "\(purged)")
        #expect(try String(contentsOfFile: w.root + "/.policyctl-quarantine-\(fake)/20991231T000000Z/1", encoding: .utf8) == "mine\n")
        // An apply quarantines into a fresh folder of its own, beside them.
        let applied = try w.run(["apply", "--policy", w.policy, "--yes"])
        #expect(applied.status == 0, "\(applied)")
        #expect(FileManager.default.fileExists(atPath: w.root + "/.policyctl-quarantine-\(try #require(transactionID(applied)))"))
    }
}
