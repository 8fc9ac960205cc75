// `policyctl undo` (binary): after an apply with renames, mkdir, markers, cache tags and trash moves, undo gives
// back the tree from before the apply except for the deletes, which it names; journal shows the undo and what
// it reversed; --dry-run changes nothing; a piece whose target changed is skipped; a forged journal entry
// (uid 12345 cannot write the journal) and unknown or uncommitted transactions are refused.
import TreeFixture
import Foundation
import StoragePolicy
import Testing

@Suite("policyctl undo (binary)", .serialized)
struct UndoTests {
    struct Setup {
        let scratch = ScratchDirectory("undo")
        let root: String
        let policy: String

        init() throws {
            root = scratch.sub("root")
            policy = scratch.path + "/policy.yaml"
            try writePolicy(policy)
            try buildTree(at: root, [
                .dir("app"), .dir("docs"), .file("docs/README.TXT"), .file("docs/Notes.MD"), .file("docs/data.sqlite"),
                .dir("tmp", ageHours: 0.1), .file("tmp/old.log", ageHours: 3), .file("tmp/new.log", ageHours: 0.1),
                .dir("lib"),
            ])
        }

        /// Applies the policy and returns the transaction id.
        func apply() throws -> String {
            let r = try policyctl(["apply", "--yes", "--policy", policy, "--root", root])
            #expect(r.status == 0, "\(r)")
            let id = r.stdout.split(separator: " ").drop { $0 != "transaction" }.dropFirst().first.map(String.init)
            return try #require(id, "\(r.stdout)")
        }
    }

    @Test("undo gives back the tree from before the apply except the deletes, which are named; journal shows it")
    func roundTrip() throws {
        let t = try Setup()
        let before = try manifest(of: t.root)
        let id = try t.apply()
        let applied = try manifest(of: t.root)
        #expect(applied != before)
        #expect(applied.contains { $0.hasPrefix("docs/readme.txt file") })
        #expect(applied.contains { $0.hasPrefix("cache/CACHEDIR.TAG file") })

        let dry = try policyctl(["undo", "--root", t.root, "--dry-run", id])
        #expect(dry.status == 1, "\(dry)")
        #expect(dry.stdout.contains("would rename docs/readme.txt -> docs/README.TXT\n"), "\(dry.stdout)")
        #expect(dry.stdout.contains("cannot undo tmp/old.log: deleted; deletes cannot be undone\n"), "\(dry.stdout)")
        #expect(try manifest(of: t.root) == applied)

        // No terminal and no --yes: told to pass it, as apply does (64), and nothing changes.
        let unconfirmed = try policyctl(["undo", "--root", t.root, id])
        #expect(unconfirmed.status == 64, "\(unconfirmed)")
        #expect(unconfirmed.stderr.hasPrefix("Error: undo needs confirmation and there is no terminal to ask on; pass --yes"), "\(unconfirmed.stderr)")
        #expect(try manifest(of: t.root) == applied)

        let undone = try policyctl(["undo", "--root", t.root, "--yes", id])
        #expect(undone.status == 1, "\(undone)")
        #expect(undone.stdout.contains("cannot undo tmp/old.log: deleted; deletes cannot be undone\n"), "\(undone.stdout)")
        #expect(try manifest(of: t.root) == before.filter { !$0.hasPrefix("tmp/old.log ") }, "\(undone.stdout)")

        let journal = try policyctl(["journal", "--root", t.root])
        #expect(journal.stdout.contains("  undo of \(id)\n"), "\(journal.stdout)")
        let json = try policyctl(["journal", "--root", t.root, "--format", "json"])
        #expect(json.stdout.contains("\"reverses\" : \"\(id)\"") || json.stdout.contains("\"reverses\":\"\(id)\""), "\(json.stdout)")
    }

    @Test("a piece whose target changed since is skipped and named; the rest is undone")
    func changedTarget() throws {
        let t = try Setup()
        let id = try t.apply()
        // The renamed file is rewritten: its size and mtime change, so it stays as it is.
        let fd = open(t.root + "/docs/readme.txt", O_WRONLY | O_APPEND)
        _ = write(fd, "more", 4)
        close(fd)
        let undone = try policyctl(["undo", "--root", t.root, "--yes", id])
        #expect(undone.status == 1)
        #expect(undone.stdout.contains("skipped docs/readme.txt: changed since the transaction; left alone\n"), "\(undone.stdout)")
        #expect(FileManager.default.fileExists(atPath: t.root + "/docs/readme.txt"))
        #expect(FileManager.default.fileExists(atPath: t.root + "/docs/Notes.MD"))
    }

    @Test("co-tenant: a renamed file swapped for a symlink out of the root, and a file put into a created folder, keep both",
          .enabled(if: CoTenantPlanTests.canDropToCoTenant))
    func coTenant() throws {
        let t = try Setup()
        chmod(t.scratch.path, 0o755)
        let id = try t.apply()
        chmod(t.root + "/docs", 0o777)
        chmod(t.root + "/cache/sub", 0o777)
        let outside = t.scratch.path + "/outside.txt"
        try Data("secret".utf8).write(to: URL(fileURLWithPath: outside))
        let swap = try ChildProcess.run("/usr/bin/setpriv", ["--reuid=12345", "--regid=12345", "--clear-groups", "/bin/sh", "-c",
                                                             "rm -f '\(t.root)/docs/readme.txt' && ln -s '\(outside)' '\(t.root)/docs/readme.txt' && echo x > '\(t.root)/cache/sub/mine'"])
        #expect(swap.status == 0, "\(swap.stderr)")
        let undone = try policyctl(["undo", "--root", t.root, "--yes", id])
        #expect(undone.status == 1)
        #expect(undone.stdout.contains("skipped docs/readme.txt: changed since the transaction; left alone\n"), "\(undone.stdout)")
        #expect(undone.stdout.contains("skipped cache/sub: the directory it created is not empty; kept\n"), "\(undone.stdout)")
        #expect(try String(contentsOfFile: outside, encoding: .utf8) == "secret")
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: t.root + "/docs/readme.txt")) == outside)
        #expect(!FileManager.default.fileExists(atPath: t.root + "/docs/README.TXT"))
        #expect(FileManager.default.fileExists(atPath: t.root + "/cache/sub/mine"))
    }

    @Test("an unknown transaction, and an undo of a transaction that is not committed, are refused (3)")
    func refused() throws {
        let t = try Setup()
        _ = try t.apply()
        let unknown = try policyctl(["undo", "--root", t.root, "--yes", "20200101T000000Z-00000000"])
        #expect(unknown.status == 3)
        #expect(unknown.stderr.contains("undo refused: the journal has no transaction 20200101T000000Z-00000000"))
        let missing = try policyctl(["undo", "--root", t.root])
        #expect(missing.status == 64)
    }
}
