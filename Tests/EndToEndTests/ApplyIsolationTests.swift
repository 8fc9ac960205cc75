// One bad entry never stops maintenance: the built binary, run as an unprivileged user over a tree that user
// owns, meets entries it may not remove. Those are skipped with their errno, the rest commits, exit 1; with
// --all-or-nothing everything rolls back, exit 3. Also: a whole-tree delete keeps a tree overwritten `cp -p`-style.
import TreeFixture
import Foundation
import StoragePolicy
import Testing

@Suite("apply isolates item-level failures (binary)")
struct ApplyIsolationTests {
    static let uid = CoTenant.uid

    /// True when this process is root and `setpriv` can run the binary as uid 12345.
    static var canRunAsUser: Bool { CoTenant.isAvailable }

    /// policyctl run as uid 12345 (no groups): chmod 555 stops it, as it would any user but root.
    /// Runs as the user. A plan root saved is applied with --policy and --root: the user has no record of it.
    private func asUser(_ arguments: [String], environment: [String: String] = [:]) throws -> PolicyctlBinary.Result {
        try CoTenant.policyctl(arguments, environment: environment)
    }

    /// Forbidden databases anywhere under docs go to docs/.Trash; anything old under docs may expire.
    static let trashPolicy = """
        version: 1
        name: test-policy
        rules:
          - name: expire
            path: docs
            expire: 1h
          - name: trash
            path: docs/.Trash
            trash: { retain: 30d }
          - name: forbid
            path: docs
            forbid: ['**/*.db']

        """

    /// A cache folder under `locked` (chmod 555) and one under `open`, excluded from backup and tagged.
    static let layoutPolicy = """
        version: 1
        name: test-policy
        layout:
          - path: locked/cache
            backup: exclude
            cacheTag: true
          - locked/cache/sub
          - open/cache
        rules:
          - name: expire
            path: .
            match: [old.dat]
            expire: 1h
          - name: backup
            path: .
            match: [locked/cache]
            backup: { exclude: true, cacheTag: true }

        """

    /// A scratch folder the user can reach, with `root` (owned by the user) built from `nodes`.
    private struct UserTree {
        let scratch = ScratchDirectory("isolate")
        let root: String
        let policy: String
        let planFile: String

        init(_ nodes: [TreeNode], locked: [String], actions: [PlannedAction], policy text: String = handPlanPolicy) throws {
            chmod(scratch.path, 0o755)
            root = scratch.sub("root")
            policy = scratch.path + "/policy.yaml"
            planFile = scratch.path + "/plan.json"
            try writePolicy(policy, text)
            try buildTree(at: root, nodes)
            try makePlan(root: root, policyFile: policy, actions, writeTo: planFile)
            chmod(policy, 0o644)
            chmod(planFile, 0o644)
            // The user owns everything; the locked folders (mode 555) are theirs too, and still stop them.
            let chown = Process()
            chown.executableURL = URL(fileURLWithPath: "/bin/chown")
            chown.arguments = ["-R", "\(ApplyIsolationTests.uid):\(ApplyIsolationTests.uid)", root]
            try chown.run()
            chown.waitUntilExit()
            for path in locked { chmod(root + "/" + path, 0o555) }
        }
    }

    @Test("a file in a chmod-555 folder: skipped with EACCES in the output and the journal, the rest deleted, exit 1; --all-or-nothing rolls back, exit 3",
          .enabled(if: ApplyIsolationTests.canRunAsUser))
    func lockedFolder() throws {
        let nodes: [TreeNode] = [.dir("tmp", ageHours: 48), .dir("tmp/locked", ageHours: 48), .file("tmp/locked/a.dat"),
                                 .file("tmp/b.dat"), .file("tmp/c.dat"), .dir("tmp/open", ageHours: 48), .file("tmp/open/d.dat")]
        let actions: [PlannedAction] = [.delete("tmp/locked/a.dat"), .delete("tmp/b.dat"), .delete("tmp/c.dat"), .delete("tmp/open/d.dat")]

        // Strict: the one failure rolls everything back.
        let strict = try UserTree(nodes, locked: ["tmp/locked"], actions: actions)
        let before = try manifest(of: strict.root)
        let rolledBack = try asUser(["apply", strict.planFile, "--policy", strict.policy, "--root", strict.root, "--yes", "--all-or-nothing"])
        #expect(rolledBack.status == 3, "\(rolledBack)")
        #expect(rolledBack.stderr.contains("tmp/locked/a.dat: Permission denied (EACCES) [renameat2]"), "\(rolledBack)")
        #expect(rolledBack.stderr.contains("rolled back transaction"), "\(rolledBack)")
        #expect(try manifest(of: strict.root) == before)

        // Default: the entry is skipped with its errno and the rest of the cleanup commits.
        let t = try UserTree(nodes, locked: ["tmp/locked"], actions: actions)
        let run = try asUser(["apply", t.planFile, "--policy", t.policy, "--root", t.root, "--yes"])
        #expect(run.status == 1, "\(run)")
        #expect(run.stdout.contains("skipped delete tmp/locked/a.dat: Permission denied (EACCES) [unlinkat]"), "\(run)")
        #expect(run.stdout.contains("applied: 3 delete, 1 skipped (1 for an error)"), "\(run)")
        #expect(run.stderr.contains("tmp/locked/a.dat: skipped: Permission denied (EACCES) [unlinkat]"), "\(run)")
        #expect(try manifest(of: t.root) == [
            "tmp directory", "tmp/locked directory", "tmp/locked/a.dat file size=10 mtime=\(manifestTime(ageHours: 48))",
            "tmp/open directory",
        ])
        let journal = try asUser(["journal", "--root", t.root])
        #expect(journal.stdout.contains("3 delete of 4 planned"), "\(journal)")
        #expect(journal.stdout.contains("skipped delete tmp/locked/a.dat: Permission denied (EACCES) [unlinkat]"), "\(journal)")
        let skip = try journalLines(t.root).first { $0.contains(#""type":"skip""#) } ?? ""
        let history = try asUser(["journal", "--root", t.root, "--format", "json"])
        let summaries = try JSONDecoder().decode([TransactionSummary].self, from: Data(history.stdout.utf8))
        #expect(summaries.last?.skipped.map { [$0.path, $0.errno ?? "-", $0.call ?? "-"] } == [["tmp/locked/a.dat", "EACCES", "unlinkat"]])
        #expect(skip.contains(#""errno":"EACCES""#) && skip.contains(#""call":"unlinkat""#), "\(skip)")
        #expect(try asUser(["recover", "--root", t.root]).stdout.contains("Nothing to recover"))
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: t.root + "/.policyctl/staging")) ?? []).isEmpty)

        // The JSON log names the errno and the call of the skipped item, and counts it as failed.
        let again = try UserTree(nodes, locked: ["tmp/locked"], actions: actions)
        let json = try asUser(["apply", again.planFile, "--policy", again.policy, "--root", again.root, "--yes", "--log-format", "json"])
        #expect(json.status == 1, "\(json)")
        let objects = json.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let skipped = objects.filter { $0["outcome"] as? String == "skipped" }
        #expect(skipped.count == 1)
        #expect(skipped.first?["path"] as? String == "tmp/locked/a.dat")
        #expect(skipped.first?["errno"] as? String == "EACCES")
        #expect(skipped.first?["call"] as? String == "unlinkat")
        #expect(objects.last?["failed"] as? Int == 1)
        #expect(objects.last?["outcome"] as? String == "committed")
    }

    @Test("a folder holding an entry that could not be removed is not deleted after it; its other contents are",
          .enabled(if: ApplyIsolationTests.canRunAsUser))
    func parentOfFailedDelete() throws {
        let nodes: [TreeNode] = [.dir("tmp", ageHours: 48), .dir("tmp/d", ageHours: 48), .dir("tmp/d/locked", ageHours: 48),
                                 .file("tmp/d/locked/a.dat"), .file("tmp/d/b.dat")]
        // The planner's order for an emptied folder: its contents first, then the folder itself.
        let t = try UserTree(nodes, locked: ["tmp/d/locked"],
                             actions: [.delete("tmp/d/locked/a.dat"), .delete("tmp/d/b.dat"), .delete("tmp/d")])
        let run = try asUser(["apply", t.planFile, "--policy", t.policy, "--root", t.root, "--yes"])
        #expect(run.status == 1, "\(run)")
        #expect(run.stdout.contains("skipped delete tmp/d/locked/a.dat: Permission denied (EACCES) [unlinkat]"), "\(run)")
        #expect(run.stdout.contains("skipped delete tmp/d: holds tmp/d/locked/a.dat, which could not be removed; kept"), "\(run)")
        #expect(try manifest(of: t.root) == [
            "tmp directory", "tmp/d directory", "tmp/d/locked directory",
            "tmp/d/locked/a.dat file size=10 mtime=\(manifestTime(ageHours: 48))",
        ])
    }

    @Test("a FreeDesktop trash move whose rename fails after its .trashinfo was written: the .trashinfo is undone, the item skipped",
          .enabled(if: ApplyIsolationTests.canRunAsUser))
    func trashMoveUndoneMidway() throws {
        let nodes: [TreeNode] = [.dir("docs"), .dir("docs/locked"), .file("docs/locked/x.db"), .file("docs/y.db"),
                                 .dir("docs/.Trash"), .dir("docs/.Trash/files"), .dir("docs/.Trash/info")]
        let t = try UserTree(nodes, locked: ["docs/locked"],
                             actions: [.trash("docs/locked/x.db", folder: "docs/.Trash"), .trash("docs/y.db", folder: "docs/.Trash")],
                             policy: Self.trashPolicy)
        let run = try asUser(["apply", t.planFile, "--policy", t.policy, "--root", t.root, "--yes"])
        #expect(run.status == 1, "\(run)")
        #expect(run.stdout.contains("skipped trash docs/locked/x.db: Permission denied (EACCES) [renameat2]"), "\(run)")
        let info = try FileManager.default.contentsOfDirectory(atPath: t.root + "/docs/.Trash/info")
        #expect(info == ["y.db.trashinfo"], "the skipped item's .trashinfo must be gone: \(info)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: t.root + "/docs/.Trash/files") == ["y.db"])
        #expect(FileManager.default.fileExists(atPath: t.root + "/docs/locked/x.db"))
        // The step was recorded as skipped: recovery has nothing to undo, and the journal says why.
        #expect(try asUser(["recover", "--root", t.root]).stdout.contains("Nothing to recover"))
        #expect(try asUser(["journal", "--root", t.root]).stdout.contains("skipped trash docs/locked/x.db: Permission denied (EACCES)"))
    }

    @Test("a directory deleted whole keeps a file overwritten after the plan with an old mtime (cp -p), and its parents")
    func ctimeAfterPlan() throws {
        let scratch = ScratchDirectory("ctime")
        let root = scratch.sub("root")
        let policy = scratch.path + "/policy.yaml"
        let planFile = scratch.path + "/plan.json"
        try writePolicy(policy)
        try buildTree(at: root, [.dir("tmp", ageHours: 48), .dir("tmp/tree", ageHours: 48), .dir("tmp/tree/a", ageHours: 48),
                                 .file("tmp/tree/a/data.bin", size: 100), .file("tmp/old")])
        try makePlan(root: root, policyFile: policy, [.delete("tmp/tree"), .delete("tmp/old")], writeTo: planFile)
        // The plan time has one-second resolution (plus one second of margin): be past it.
        Thread.sleep(forTimeInterval: 2.2)
        // `cp -p`: new content and size written in place, the old mtime put back. Only the ctime tells.
        let path = root + "/tmp/tree/a/data.bin"
        try Data(repeating: 0x42, count: 300).write(to: URL(fileURLWithPath: path))
        var times = [timespec(tv_sec: Int(treeEpoch - 48 * 3600), tv_nsec: 123_000_000),
                     timespec(tv_sec: Int(treeEpoch - 48 * 3600), tv_nsec: 123_000_000)]
        #expect(utimensat(AT_FDCWD, path, &times, AT_SYMLINK_NOFOLLOW) == 0)
        let run = try policyctl(["apply", planFile, "--yes"])
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.contains("skipped delete tmp/tree: holds tmp/tree/a/data.bin, changed since the plan (new ctime); kept"), "\(run)")
        #expect(try manifest(of: root) == [
            "tmp directory", "tmp/tree directory", "tmp/tree/a directory",
            "tmp/tree/a/data.bin file size=300 mtime=\(manifestTime(ageHours: 48))",
        ])
    }

    @Test("a directory that cannot be made (its folder is chmod 555): the mkdir and every step inside it are skipped; the rest applies",
          .enabled(if: ApplyIsolationTests.canRunAsUser))
    func mkdirDependents() throws {
        let nodes: [TreeNode] = [.dir("locked"), .dir("open"), .file("old.dat")]
        let t = try UserTree(nodes, locked: ["locked"],
                             actions: [.mkdir("locked/cache"), .mkdir("locked/cache/sub"), .writeTag("locked/cache"),
                                       .setxattr("locked/cache", name: "user.xdg.robots.backup", value: "false"),
                                       .mkdir("open/cache"), .delete("old.dat")],
                             policy: Self.layoutPolicy)
        let run = try asUser(["apply", t.planFile, "--policy", t.policy, "--root", t.root, "--yes"])
        #expect(run.status == 1, "\(run)")
        let lines = run.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains("skipped mkdir locked/cache: Permission denied (EACCES) [mkdirat]"), "\(run)")
        let dependent = "depends on the directory locked/cache, which was not created (Permission denied (EACCES) [mkdirat])"
        #expect(lines.contains("skipped mkdir locked/cache/sub: \(dependent)"), "\(run)")
        #expect(lines.contains("skipped write-tag locked/cache: \(dependent)"), "\(run)")
        #expect(lines.contains("skipped setxattr locked/cache: \(dependent)"), "\(run)")
        #expect(lines.contains { $0.hasPrefix("applied: 1 delete, 1 mkdir, 4 skipped (1 for an error)") }, "\(run)")
        #expect(try manifest(of: t.root) == ["locked directory", "open directory", "open/cache directory"])
    }

    @Test("a saved plan renaming to a name longer than 255 bytes is refused whole (65); the planner never plans one")
    func nameTooLong() throws {
        let scratch = ScratchDirectory("long")
        let root = scratch.sub("root")
        let policy = scratch.path + "/policy.yaml"
        let planFile = scratch.path + "/plan.json"
        try writePolicy(policy)
        let long = String(repeating: "é", count: 128) + ".txt"  // 260 bytes in UTF-8
        try buildTree(at: root, [.dir("docs"), .file("docs/LONG.TXT"), .file("docs/UP.TXT"), .file("old")])
        try makePlan(root: root, policyFile: policy, [.rename("docs/LONG.TXT", to: "docs/" + long), .rename("docs/UP.TXT", to: "docs/up.txt"),
                                                      .delete("old")], writeTo: planFile)
        let left = try manifest(of: root)
        let run = try policyctl(["apply", planFile, "--yes"])
        #expect(run.status == 65, "\(run)")
        #expect(run.stderr.contains("plan refused: action 1 (rename docs/LONG.TXT"), "\(run)")
        #expect(try manifest(of: root) == left)
    }

    @Test("SIGKILL after every change and every record of a run that skips a trash move midway: recover gives before, or after with the item as before",
          .enabled(if: ApplyIsolationTests.canRunAsUser))
    func crashAroundSkip() throws {
        let nodes: [TreeNode] = [.dir("docs"), .dir("docs/locked"), .file("docs/locked/x.db"), .file("docs/y.db"), .file("docs/z.db"),
                                 .dir("docs/.Trash"), .dir("docs/.Trash/files"), .dir("docs/.Trash/info")]
        let actions: [PlannedAction] = [.trash("docs/locked/x.db", folder: "docs/.Trash"), .trash("docs/y.db", folder: "docs/.Trash"),
                                        .delete("docs/z.db")]
        let reference = try UserTree(nodes, locked: ["docs/locked"], actions: actions, policy: Self.trashPolicy)
        let before = try manifest(of: reference.root)
        #expect(try asUser(["apply", reference.planFile, "--policy", reference.policy, "--root", reference.root, "--yes"]).status == 1)
        let after = try manifest(of: reference.root)
        #expect(after.contains { $0.hasPrefix("docs/locked/x.db file") } && !after.contains { $0.hasPrefix("docs/z.db") })
        for seam in ["POLICYCTL_CRASH_AFTER_CHANGES", "POLICYCTL_CRASH_AFTER_RECORDS"] {
            for n in 1...14 {
                let t = try UserTree(nodes, locked: ["docs/locked"], actions: actions, policy: Self.trashPolicy)
                let run = try asUser(["apply", t.planFile, "--policy", t.policy, "--root", t.root, "--yes"], environment: [seam: String(n)])
                let recover = try asUser(["recover", "--root", t.root])
                #expect(recover.status == 0, "\(seam)=\(n): \(recover)")
                let m = try manifest(of: t.root)
                // A file delete rolls forward once its intent is durable: a rolled-back run may still have
                // deleted docs/z.db, and nothing else.
                let rolledForward = before.filter { !$0.hasPrefix("docs/z.db ") }
                #expect(m == before || m == after || m == rolledForward,
                        "\(seam)=\(n) (apply exit \(run.status)): \(Set(m).symmetricDifference(before).sorted())")
                #expect(((try? FileManager.default.contentsOfDirectory(atPath: t.root + "/.policyctl/staging")) ?? []).isEmpty)
            }
        }
    }
}
