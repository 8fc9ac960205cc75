// Deterministic versions of races that a timing-based test almost never hits: a symlink swapped in after a
// directory was listed but before it is opened, and a file rewritten after the plan. Each fails if the one
// safety line it guards (O_NOFOLLOW on the walker's openat, the check before staging) is removed.
import Foundation
import Synchronization
import Testing
@testable import StoragePolicy
import TreeFixture

@Suite("Checks before every open and every change")
struct CheckBeforeChangeTests {
    /// Thread-safe list of what a hook saw.
    final class Seen: Sendable {
        let paths = Mutex<[String]>([])
        func add(_ p: String) { paths.withLock { $0.append(p) } }
        var all: [String] { paths.withLock { $0 } }
    }

    @Test("tmp/sub swapped for a symlink to outside after it was listed, before it is opened: nothing outside is scanned or planned")
    func symlinkSwappedBeforeOpen() throws {
        let s = SafetyRoot()
        s.dir(s.root + "/tmp", ageHours: 48)
        s.dir(s.root + "/tmp/sub")
        for i in 0..<5 { s.file(s.root + "/tmp/sub/a.\(i)") }
        s.file(s.root + "/tmp/trigger.dat")
        for i in 0..<5 { s.file(s.outside + "/outside-only.\(i)", "SENTINEL") }
        s.age(s.root + "/tmp/sub", hours: 48)
        let outsideBefore = SafetyRoot.shape(s.outside)
        let root = s.root, outside = s.outside
        let seen = Seen()
        let swapped = Mutex(false)
        // One thread: tmp's files are stat'ed while tmp is visited, and tmp/sub is opened only after that
        // visit, so the stat of tmp/trigger.dat falls between tmp/sub's listing and its opening.
        let plan = try s.plan(RaceTests.expiry, threads: 1, willStat: { path in
            seen.add(path.string)
            guard path.string == "tmp/trigger.dat" else { return }
            swapped.withLock { done in
                guard !done else { return }
                done = true
                rename(root + "/tmp/sub", root + "/parked")
                symlink(outside, root + "/tmp/sub")
            }
        })
        #expect(swapped.withLock { $0 }, "the hook never ran")
        #expect(!plan.actions.contains { $0.path.string.contains("outside-only") },
                "the walk followed the swapped-in symlink: \(plan.actions.map(\.path.string))")
        #expect(!seen.all.contains { $0.hasPrefix("tmp/sub/") }, "entries were scanned through tmp/sub: \(seen.all)")
        #expect(SafetyRoot.shape(s.outside) == outsideBefore)
    }

    @Test("a young symlink to an old file outside is judged as itself: not planned, and nothing is read through it")
    func symlinkJudgedAsItself() throws {
        let s = SafetyRoot()
        s.dir(s.root + "/tmp", ageHours: 48)
        s.file(s.outside + "/old.dat", "SENTINEL", ageHours: 96)
        symlink(s.outside + "/old.dat", s.root + "/tmp/link")
        s.file(s.root + "/tmp/old.dat")
        let plan = try s.plan(RaceTests.expiry, threads: 1)
        // The link was made just now; only what it points to is old. Following it would plan its delete.
        #expect(plan.actions.map(\.path.string) == ["tmp/old.dat"])
    }

    @Test("a file rewritten after the plan never reaches the change step, and its new content stays")
    func rewrittenFileIsNeverStaged() throws {
        let s = SafetyRoot()
        s.dir(s.root + "/tmp", ageHours: 48)
        s.file(s.root + "/tmp/a")
        s.file(s.root + "/tmp/b")
        let plan = try s.plan(RaceTests.expiry, threads: 1)
        #expect(plan.actions.map(\.path.string).sorted() == ["tmp/a", "tmp/b"])
        s.file(s.root + "/tmp/a", "NEW CONTENT, written after the plan", ageHours: 0)
        let reached = Seen()
        let report = try s.apply(plan, willChange: { reached.add($0.string) })
        #expect(reached.all == ["tmp/b"], "only the unchanged file may reach the change step")
        #expect(s.contents(s.root + "/tmp/a") == "NEW CONTENT, written after the plan")
        #expect(s.contents(s.root + "/tmp/b") == nil)
        #expect(report.items.first { $0.action.path.string == "tmp/a" }.map { if case .skipped = $0.outcome { true } else { false } } == true)
    }
}

@Suite("A set-perms changes only the folder it was prepared with (issue 49)")
struct MadeFolderIdentityTests {
    @Test("a new layout folder swapped between its check and its change: the folder swapped in keeps its mode")
    func swappedAfterCheck() throws {
        let s = SafetyRoot()
        // 300 folders, each with a mode: their set-perms steps are one group, so preparing them fills the
        // directory cache (256) and the first ones' handles are dropped before their changes. The change goes
        // to a descriptor opened before the window (the folder times' look at it) and checked by dev and ino.
        let entries = (0..<300).map { String(format: "  - { path: d%03d, mode: \"0700\" }", $0) }.joined(separator: "\n")
        let policy = try PolicyLoader.load(yaml: "version: 1\nname: many\nlayout:\n\(entries)\nrules: []\n").policy
        let plan = try Planner(policy: policy, root: s.root).plan()
        #expect(plan.actions.filter { if case .setPermissions = $0.kind { true } else { false } }.count == 300)
        let root = s.root
        let swapped = Mutex(false)
        let report = try s.apply(plan, willChange: { path in
            guard path.string == "d000" else { return }
            swapped.withLock { done in
                guard !done else { return }
                done = true
                rename(root + "/d000", root + "/away")
                mkdir(root + "/d000", 0o755)
                chmod(root + "/d000", 0o755)
            }
        })
        #expect(swapped.withLock { $0 }, "the hook never ran at d000's change")
        var st = stat()
        #expect(lstat(root + "/d000", &st) == 0 && st.st_mode & 0o7777 == 0o755, "the folder swapped in was changed to \(String(st.st_mode & 0o7777, radix: 8))")
        #expect(lstat(root + "/d001", &st) == 0 && st.st_mode & 0o7777 == 0o700, "the others are made as the layout says")
        #expect(report.skipped.contains { $0.action.path.string == "d000" }, "\(report.skipped.map(\.action.path.string))")
    }
}
