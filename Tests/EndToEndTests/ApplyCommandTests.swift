// `policyctl apply`, `recover`, `journal` and `trash` as users and timers run them: the built binary, real
// trees, exact outcomes. Covers safety (symlinks, hard links, changed files), the lock, budgets and logs.
import TreeFixture
import Foundation
import StoragePolicy
import Testing

@Suite("policyctl apply (binary)")
struct ApplyCommandTests {
    /// A small tree with a plan that deletes three old files.
    struct Small {
        let scratch = ScratchDirectory("cli")
        let root: String
        let policy: String
        let planFile: String

        init(_ extra: [TreeNode] = [], actions: [PlannedAction]? = nil) throws {
            root = scratch.sub("root")
            policy = scratch.path + "/policy.yaml"
            planFile = scratch.path + "/plan.json"
            try writePolicy(policy)
            try buildTree(at: root, [.dir("tmp", ageHours: 48), .file("tmp/a"), .file("tmp/b"), .file("tmp/c"), .file("tmp/keep", ageHours: 1)] + extra)
            try makePlan(root: root, policyFile: policy, actions ?? [.delete("tmp/a"), .delete("tmp/b"), .delete("tmp/c")], writeTo: planFile)
        }
    }

    @Test("applies a plan file and reports a summary; applying it again does nothing")
    func applyTwice() throws {
        let t = try Small()
        let first = try policyctl(["apply", t.planFile, "--yes"])
        #expect(first.status == 0, "\(first)")
        #expect(first.stdout.contains("applied: 3 delete"))
        let after = try manifest(of: t.root)
        #expect(after == ["tmp directory", "tmp/keep file size=10 mtime=\(manifestTime(ageHours: 1))"])
        let second = try policyctl(["apply", t.planFile, "--yes"])
        #expect(second.status == 0, "\(second)")
        #expect(second.stdout.contains("applied: nothing, 3 skipped"))
        #expect(second.stdout.components(separatedBy: "vanished since the plan").count == 4, "\(second.stdout)")
        #expect(try manifest(of: t.root) == after)
    }

    @Test("without a TTY and without --yes: refused with a hint, exit 64, nothing changed, no prompt")
    func noTTYNoPrompt() throws {
        let t = try Small()
        let before = try manifest(of: t.root)
        let run = try policyctl(["apply", t.planFile])
        #expect(run.status == 64)
        #expect(run.stderr.contains("pass --yes"))
        #expect(!run.stderr.contains("[y/N]"))
        #expect(try manifest(of: t.root) == before)
    }

    @Test("another run holds the lock: --no-wait exits 0 with 'skipped: another run in progress'")
    func lockHeldNoWait() throws {
        let t = try Small()
        let state = try StateDirectory.open(root: try DirectoryHandle.open(root: t.root), create: true)!
        let lock = try state.lock(wait: false)
        let before = try manifest(of: t.root)
        let run = try policyctl(["apply", t.planFile, "--yes", "--no-wait"])
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.hasPrefix("skipped: another run in progress"))
        #expect(run.stdout.contains("(pid \(getpid()))"))
        #expect(try manifest(of: t.root) == before)
        let json = try policyctl(["apply", t.planFile, "--yes", "--no-wait", "--log-format", "json"])
        #expect(json.status == 0)
        #expect(json.stdout.contains(#""event":"skipped""#))
        withExtendedLifetime(lock) {}
    }

    @Test("another run holds the lock: apply waits with a message, then applies")
    func lockHeldWaits() throws {
        let t = try Small()
        let state = try StateDirectory.open(root: try DirectoryHandle.open(root: t.root), create: true)!
        final class Holder: @unchecked Sendable { var lock: ApplyLock? }
        let holder = Holder()
        holder.lock = try state.lock(wait: false)
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.7) { holder.lock = nil }
        let run = try policyctl(["apply", t.planFile, "--yes"])
        #expect(run.status == 0, "\(run)")
        #expect(run.stderr.contains("waiting for another run"))
        #expect(run.stdout.contains("applied: 3 delete"))
    }

    @Test("--max-delete refuses before anything changes (exit 3), by count and by percent")
    func maxDelete() throws {
        let t = try Small()
        let before = try manifest(of: t.root)
        let count = try policyctl(["apply", t.planFile, "--yes", "--max-delete", "2"])
        #expect(count.status == 3, "\(count)")
        #expect(count.stderr.contains("apply refused: would delete 3 entries, more than --max-delete 2; nothing was changed"))
        // The plan says 1000 entries were scanned: 0.2% allows 2.
        let percent = try policyctl(["apply", t.planFile, "--yes", "--max-delete", "0.2%"])
        #expect(percent.status == 3)
        #expect(percent.stderr.contains("more than --max-delete 0.2% (2 of 1000 entries scanned)"))
        #expect(try manifest(of: t.root) == before)
        let journalExists = FileManager.default.fileExists(atPath: t.root + "/.policyctl/journal.jsonl")
        #expect(try !journalExists || journalLines(t.root).isEmpty)
        let allowed = try policyctl(["apply", t.planFile, "--yes", "--max-delete", "3"])
        #expect(allowed.status == 0, "\(allowed)")
        let bad = try policyctl(["apply", t.planFile, "--yes", "--max-delete", "lots"])
        #expect(bad.status == 64)
    }

    @Test("--max-runtime: past the budget the run stops, rolls back and exits 3; the roll-forward deletes made stay made, the rest are not made")
    func maxRuntimeRollsBack() throws {
        var files: [TreeNode] = []
        var actions: [PlannedAction] = []
        // Files holding data are unlinked by up to four workers: about 40 of the 100 go in the second.
        for i in 0..<100 {
            files.append(.file("tmp/f\(i)"))
            actions.append(.delete("tmp/f\(i)"))
        }
        let t = try Small(files, actions: actions)
        let before = try manifest(of: t.root)
        let run = try policyctl(["apply", t.planFile, "--yes", "--max-runtime", "1s"], environment: ["POLICYCTL_DELAY_PER_CHANGE_MS": "100"])
        #expect(run.status == 3, "\(run)")
        #expect(run.stderr.contains("ran past --max-runtime 1s; rolled back transaction"))
        #expect(try manifest(of: t.root) == rolledBackManifest(before: before, root: t.root))
        // The others were recorded as not reached, and stay.
        let left = try manifest(of: t.root).count - 1
        #expect(left > 0 && left < 100, "\(left) files left")
        let journal = try policyctl(["journal", "--root", t.root, "--format", "json"])
        let summaries = try JSONDecoder().decode([TransactionSummary].self, from: Data(journal.stdout.utf8))
        // The deletes the run made stayed made: the journal says so rather than "rolled back" with nothing done.
        let made = 100 - (try manifest(of: t.root).filter { $0.hasPrefix("tmp/f") }.count)
        #expect(summaries.last?.outcome == .partiallyRolledBack)
        #expect(summaries.last?.counts[.delete] == made)
        #expect(summaries.last?.bytesFreed == Int64(made) * 10)
        #expect(summaries.last?.reason == "ran past --max-runtime 1s")
        let text = try policyctl(["journal", "--root", t.root])
        #expect(text.stdout.contains("partially rolled back"), "\(text)")
        #expect(text.stdout.contains("rolled back when the run stopped; \(made) file delete\(made == 1 ? " was" : "s were") finished (\(ByteSize.human(Int64(made) * 10)) freed)"), "\(text)")
    }

    @Test("a stale plan is refused: policy changed, or another root")
    func stalePlan() throws {
        let t = try Small()
        let before = try manifest(of: t.root)
        try writePolicy(t.policy, "version: 1\nname: changed\n")
        let changed = try policyctl(["apply", t.planFile, "--yes"])
        #expect(changed.status == 3)
        #expect(changed.stderr.contains("plan is stale: policy changed"))
        try writePolicy(t.policy)
        // The same plan named against another directory: not the root it names (65, both named).
        let other = t.scratch.sub("other")
        try buildTree(at: other, [.dir("tmp"), .file("tmp/a")])
        let elsewhere = try policyctl(["apply", t.planFile, "--yes", "--root", other])
        #expect(elsewhere.status == 65)
        #expect(elsewhere.stderr.contains("the plan was made for the root \(t.root), not \(other) that this apply names"), "\(elsewhere)")
        // Another directory put in the root's place (same path, other inode): stale.
        #expect(rename(t.root, t.root + ".old") == 0 && rename(other, t.root) == 0)
        let moved = try policyctl(["apply", t.planFile, "--yes"])
        #expect(moved.status == 3)
        #expect(moved.stderr.contains("plan is stale: root changed"), "\(moved)")
        #expect(rename(t.root, other) == 0 && rename(t.root + ".old", t.root) == 0)
        #expect(try manifest(of: t.root) == before)
    }

    @Test("a file modified after the plan is kept and reported; the rest is applied")
    func modifiedAfterPlan() throws {
        let t = try Small()
        let fd = open(t.root + "/tmp/b", O_WRONLY | O_APPEND)
        _ = write(fd, "more", 4)
        close(fd)
        let run = try policyctl(["apply", t.planFile, "--yes"])
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.contains("skipped delete tmp/b: modified since the plan (size 10 -> 14); kept"))
        #expect(run.stdout.contains("applied: 2 delete, 1 skipped"))
        #expect(FileManager.default.fileExists(atPath: t.root + "/tmp/b"))
        #expect(!FileManager.default.fileExists(atPath: t.root + "/tmp/a"))
        let journal = try policyctl(["journal", "--root", t.root])
        #expect(journal.stdout.contains("skipped delete tmp/b: modified since the plan"))
    }

    @Test("a target swapped for a symlink since the plan is not followed")
    func targetSwappedForSymlink() throws {
        let t = try Small([.dir("outside-target"), .file("outside-target/precious")])
        // tmp/a becomes a symlink to a directory whose contents must survive.
        unlink(t.root + "/tmp/a")
        symlink(t.root + "/outside-target", t.root + "/tmp/a")
        let run = try policyctl(["apply", t.planFile, "--yes"])
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.contains("skipped delete tmp/a: replaced by a symlink since the plan (not followed)"))
        #expect(FileManager.default.fileExists(atPath: t.root + "/outside-target/precious"))
    }

    @Test("a parent directory swapped for a symlink since the plan is not followed")
    func parentSwappedForSymlink() throws {
        let t = try Small([.dir("tmp/sub", ageHours: 48), .file("tmp/sub/x")],
                          actions: [.delete("tmp/sub/x"), .delete("tmp/a")])
        // Move the real directory away and put a symlink to a look-alike elsewhere in its place.
        let elsewhere = t.scratch.sub("elsewhere")
        try buildTree(at: elsewhere, [.file("x")])
        rename(t.root + "/tmp/sub", t.scratch.path + "/moved-sub")
        symlink(elsewhere, t.root + "/tmp/sub")
        let run = try policyctl(["apply", t.planFile, "--yes"])
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.contains("skipped delete tmp/sub/x:"), "\(run)")
        #expect(FileManager.default.fileExists(atPath: elsewhere + "/x"))
        #expect(FileManager.default.fileExists(atPath: t.scratch.path + "/moved-sub/x"))
        #expect(!FileManager.default.fileExists(atPath: t.root + "/tmp/a"))
    }

    @Test("hard links and symlinks to outside files: the links go, the outside files stay")
    func outsideFilesUntouched() throws {
        let scratch = ScratchDirectory("outside")
        let outside = scratch.sub("outside")
        try buildTree(at: outside, [.file("hard", size: 33), .dir("dir"), .file("dir/inner", size: 44)])
        let t = try Small([.hardlink("tmp/hl", target: outside + "/hard"), .symlink("tmp/sl", target: outside + "/dir"),
                           .dir("lib")],
                          actions: [.delete("tmp/hl"), .delete("tmp/sl"), .setxattr("tmp/hl", name: Markers.linuxBackupAttribute, value: "false")])
        let outsideBefore = try manifest(of: outside)
        let run = try policyctl(["apply", t.planFile, "--yes"])
        #expect(run.status == 0, "\(run)")
        #expect(!FileManager.default.fileExists(atPath: t.root + "/tmp/hl"))
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: t.root + "/tmp/sl")) == nil)
        #expect(try manifest(of: outside) == outsideBefore)
    }

    @Test("a hard-linked file never gets an attribute (it would change the outside copy too)")
    func hardLinkAttribute() throws {
        let scratch = ScratchDirectory("outside")
        let outside = scratch.sub("outside")
        try buildTree(at: outside, [.file("hard", size: 33)])
        let t = try Small([.hardlink("tmp/hl", target: outside + "/hard")],
                          actions: [.setxattr("tmp/hl", name: Markers.linuxBackupAttribute, value: "false")])
        let outsideBefore = try manifest(of: outside)
        let run = try policyctl(["apply", t.planFile, "--yes"])
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.contains("has 2 hard links"))
        #expect(try manifest(of: outside) == outsideBefore)
    }

    @Test("--log-format json: one JSON object per action and a summary line")
    func jsonLog() throws {
        let t = try Small()
        let run = try policyctl(["apply", t.planFile, "--yes", "--log-format", "json"])
        #expect(run.status == 0)
        let lines = run.stdout.split(separator: "\n")
        #expect(lines.count == 4)
        let objects = try lines.map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
        #expect(objects.prefix(3).allSatisfy { $0["event"] as? String == "action" && $0["outcome"] as? String == "done" })
        #expect(Set(objects.prefix(3).compactMap { $0["path"] as? String }) == ["tmp/a", "tmp/b", "tmp/c"])
        #expect(objects[3]["event"] as? String == "summary")
        #expect(objects[3]["outcome"] as? String == "committed")
        #expect((objects[3]["counts"] as? [String: Int])?["delete"] == 3)
        #expect(!run.stdout.contains("\u{1B}["))
    }

    @Test("--log-format plain: one line per action, a summary, no colour, no progress")
    func plainLog() throws {
        let t = try Small()
        let run = try policyctl(["apply", t.planFile, "--yes", "--log-format", "plain"])
        #expect(run.status == 0)
        let lines = run.stdout.split(separator: "\n").map(String.init)
        #expect(lines.filter { $0.hasPrefix("delete ") }.sorted() == ["delete tmp/a [4.0 KiB] (expire)", "delete tmp/b [4.0 KiB] (expire)", "delete tmp/c [4.0 KiB] (expire)"])
        #expect(lines.last?.hasPrefix("applied: 3 delete; 12.0 KiB freed; transaction ") == true)
        #expect(run.stderr.isEmpty)
    }

    @Test("journal: past transactions with time, policy, counts, bytes, outcome and skipped items")
    func journalCommand() throws {
        let t = try Small()
        _ = try policyctl(["apply", t.planFile, "--yes"])
        _ = try policyctl(["apply", t.planFile, "--yes"])
        let text = try policyctl(["journal", "--root", t.root])
        #expect(text.status == 0)
        #expect(text.stdout.contains("apply  policy test-policy  committed"))
        #expect(text.stdout.contains("3 delete of 3 planned; 12.0 KiB freed"))
        #expect(text.stdout.contains("skipped delete tmp/a: vanished since the plan"))
        let json = try policyctl(["journal", "--root", t.root, "--format", "json", "--last", "1"])
        let summaries = try JSONDecoder().decode([TransactionSummary].self, from: Data(json.stdout.utf8))
        #expect(summaries.count == 1)
        #expect(summaries[0].skipped.count == 3)
        #expect(summaries[0].plan == t.planFile)
        let empty = ScratchDirectory("empty")
        #expect(try policyctl(["journal", "--root", empty.path]).stdout.contains("No transactions recorded"))
    }

    @Test("injected EIO at every Nth rename, setxattr and mkdir: rolled back, nothing lost, errno and path named; an injected ENOSPC releases the journal reserve and the change is retried",
          arguments: ["rename", "setxattr", "mkdir"])
    func injectedFaults(call: String) throws {
        let ref = try CrashReference.make()
        var n = 1
        var failures = 0
        while n < 60 {
            let s = try CrashScenario()
            let run = try policyctl(["apply", s.planFile, "--yes"], environment: ["POLICYCTL_FAULTS": "\(call):\(n):EIO"])
            if run.status == 0 {
                let m = try s.manifest()
                #expect(m == ref.after, "\(call) #\(n): \(Set(m).symmetricDifference(ref.after).sorted())\n\(run)")
                break
            }
            failures += 1
            #expect(run.status == 3 || run.status == 74, "\(call) #\(n): \(run)")
            #expect(run.stderr.contains("(EIO)"), "\(call) #\(n): \(run)")
            #expect(run.stderr.contains("nothing was changed") || run.stderr.contains("rolled back transaction"), "\(run)")
            #expect(try s.manifest() == s.rolledBack(ref), "\(call) #\(n) EIO")
            try s.expectOutsideUntouched()
            // Nothing is left for recovery to do.
            #expect(try policyctl(["recover", "--root", s.root]).stdout.contains("Nothing to recover"))
            n += 1
        }
        #expect(failures >= 2, "the scenario makes several \(call) calls")
        // The first change of this kind meets ENOSPC: the reserve goes, the change is made on the second try.
        let s = try CrashScenario()
        let full = try policyctl(["apply", s.planFile, "--yes"], environment: ["POLICYCTL_FAULTS": "\(call):2:ENOSPC"])
        #expect(full.status == 0, "\(full)")
        #expect(try s.manifest() == ref.after)
    }
}

/// The mtime `buildTree` gives an entry of that age, as the manifest prints it.
func manifestTime(ageHours: Double) -> Int64 {
    (treeEpoch - Int64(ageHours * 3600)) * 1_000_000_000 + 123_000_000
}
