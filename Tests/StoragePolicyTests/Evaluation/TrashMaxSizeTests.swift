// trash maxSize: after retention, the items trashed longest ago go until the trash is at or below maxSize.
// A trash at exactly maxSize is left alone; items retention deletes do not count. Expected plans by hand.
import Testing
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyModel
@testable import StoragePolicyEvaluation
import TreeFixture

@Suite("trash maxSize") struct TrashMaxSizeTests {
    static func tree(_ now: Int64) throws -> Tree {
        try Tree(now: now) {
            Dir("Trash") {
                Dir("files") {
                    File("a", size: 10_000); File("b", size: 10_000); File("c", size: 10_000); File("expired", size: 10_000)
                }
                Dir("info") {
                    File("a.trashinfo", contents: TrashTests.info(TrashTests.utcDate(now, minus: .days(5))))
                    File("b.trashinfo", contents: TrashTests.info(TrashTests.utcDate(now, minus: .days(4))))
                    File("c.trashinfo", contents: TrashTests.info(TrashTests.utcDate(now, minus: .days(3))))
                    File("expired.trashinfo", contents: TrashTests.info(TrashTests.utcDate(now, minus: .days(40))))
                }
            }
        }
    }

    static func rule(_ maxSize: Int64, mode: Rule.Mode = .enforce) -> Rule {
        TreeRules.rule("t", "Trash", .trash(TrashRetention(retain: .days(30), layout: .freedesktop, maxSize: ByteSize(bytes: maxSize))), mode: mode)
    }

    @Test("exactly at maxSize only retention deletes; one byte under it the item trashed longest ago goes too")
    func boundary() throws {
        let now = Tree.currentTimeNs()
        let tree = try Self.tree(now)
        defer { tree.remove() }
        let kept = ["a", "b", "c"].reduce(Int64(0)) { $0 + allocated(tree, "Trash/files/\($1)") }
        let retention = ["delete Trash/files/expired", "delete Trash/info/expired.trashinfo"]
        #expect(try plan(tree, [Self.rule(kept)], now: now).lines == retention)
        let over = try plan(tree, [Self.rule(kept - 1)], now: now)
        #expect(over.lines == ["delete Trash/files/a", "delete Trash/files/expired", "delete Trash/info/a.trashinfo", "delete Trash/info/expired.trashinfo"])
        let a = try #require(over.actions.first { $0.path == path("Trash/files/a") })
        #expect(a.reason.hasPrefix("trash holds \(ByteSize.human(kept)) > maxSize \(ByteSize.human(kept - 1)); trashed longest ago first (trashed (DeletionDate) 5d"))
        let c = allocated(tree, "Trash/files/c")
        #expect(try plan(tree, [Self.rule(c)], now: now).lines == ["delete Trash/files/a", "delete Trash/files/b", "delete Trash/files/expired",
                                                                  "delete Trash/info/a.trashinfo", "delete Trash/info/b.trashinfo", "delete Trash/info/expired.trashinfo"])
        // The deletions maxSize makes are ones the policy makes: a saved plan of them passes validation.
        let policy = Policy(name: "test", rules: [Self.rule(c)])
        #expect(PlanValidation(policy: policy).firstInvalid(in: try plan(tree, [Self.rule(c)], now: now)) == nil)
    }

    @Test("audit reports what maxSize would delete")
    func audit() throws {
        let now = Tree.currentTimeNs()
        let tree = try Self.tree(now)
        defer { tree.remove() }
        let kept = ["a", "b", "c"].reduce(Int64(0)) { $0 + allocated(tree, "Trash/files/\($1)") }
        let p = try plan(tree, [Self.rule(kept - 1, mode: .audit)], now: now)
        #expect(p.lines == [])
        #expect(p.violations.map(\.path) == [path("Trash/files/a"), path("Trash/files/expired")])
    }
}

/// The shared `rule(...)` helper under a name that does not clash with the static `rule` above.
enum TreeRules {
    static func rule(_ name: String, _ scope: String, _ kind: Rule.Kind, mode: Rule.Mode = .enforce) -> Rule {
        TreeFixture.rule(name, scope, kind, mode: mode)
    }
}
