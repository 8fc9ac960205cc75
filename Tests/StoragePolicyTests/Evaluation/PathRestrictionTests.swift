// A plan restricted to named paths lists only the directories on the way to them and walks inside named
// directories only: the entries scanned and the entries stat'ed prove that nothing else is read.
import Synchronization
import Testing
@testable import StoragePolicy
@testable import StoragePolicyModel
@testable import StoragePolicyEvaluation
import TreeFixture

@Suite("Path-restricted plans") struct PathRestrictionTests {
    static func tree() throws -> Tree {
        try Tree {
            Dir("tmp") {
                File("old.dat", age: .days(3))
                File("keep.dat", age: .days(3))
                Dir("deep") { File("a.dat", age: .days(3)); File("b.dat", age: .days(3)) }
                Dir("far") { File("c.dat", age: .days(3)); Dir("farther") { File("d.dat", age: .days(3)) } }
            }
            Dir("other") { File("e.dat", age: .days(3)) }
        }
    }

    @Test("only the named file, and everything under a named directory, is judged; nothing else is walked")
    func restricted() throws {
        let tree = try Self.tree()
        defer { tree.remove() }
        let stated = Mutex<[String]>([])
        var options = tree.options(threads: 1)
        options.willStat = { p in stated.withLock { $0.append(p.string) } }
        let policy = Policy(name: "t", rules: [rule("r", "tmp", expire(.days(1)))])
        let p = try Planner(policy: policy, root: tree.root, options: options)
            .plan(only: PathRestriction([path("tmp/old.dat"), path("tmp/deep")]))
        #expect(p.lines == ["delete tmp/deep/a.dat", "delete tmp/deep/b.dat", "delete tmp/old.dat"])
        // The root (2 entries), tmp (4) and tmp/deep (2): never tmp/far, tmp/far/farther or other.
        #expect(p.summary.entriesScanned == 8)
        #expect(!stated.withLock { $0 }.contains { $0.hasPrefix("tmp/far/") || $0.hasPrefix("other/") })
    }

    @Test("covers and enters: named paths, what is under them, and the directories on the way")
    func covers() {
        let r = PathRestriction([path("a/b/c"), path("x")])
        #expect(r.covers(path("a/b/c")) && r.covers(path("a/b/c/d")) && r.covers(path("x/y")))
        #expect(!r.covers(path("a/b")) && !r.covers(path("a/b/cc")) && !r.covers(path("y")))
        #expect(r.enters(path("a")) && r.enters(path("a/b")) && !r.enters(path("a/q")))
    }
}
