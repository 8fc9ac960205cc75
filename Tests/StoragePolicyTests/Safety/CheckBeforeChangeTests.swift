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
