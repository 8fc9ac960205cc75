// Precedence between rules: delete beats everything, a deleted directory covers its contents, a moved
// entry is not renamed, markers are independent. Expected plans written out by hand.
import Testing
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyModel
import TreeFixture

@Suite("Precedence") struct PrecedenceTests {
    @Test("an expired entry is deleted, not renamed, moved or marked")
    func deleteWins() throws {
        let tree = try Tree {
            Dir("tmp") {
                File("OLD.sqlite", age: .days(3))
                File("New.sqlite")
                File("Fresh.txt")
            }
        }
        defer { tree.remove() }
        let rules = [
            rule("expiry", "tmp", expire(.days(1))),
            rule("lowercase", "tmp", .naming(Naming(letterCase: .lower))),
            rule("trash", "trash", .trash(TrashRetention(retain: .days(1)))),
            rule("no-db", "tmp", .forbid(globs(["*.sqlite"]))),
            rule("marked", "tmp", .backup(BackupExclusion()), match: ["*"]),
        ]
        let p = try plan(tree, rules)
        let marker = Markers.backupAttribute.name
        #expect(p.lines == [
            "rename tmp/Fresh.txt -> tmp/fresh.txt",
            "setxattr tmp/Fresh.txt \(marker)",
            "trash tmp/New.sqlite -> trash/New.sqlite",
            "delete tmp/OLD.sqlite",
            "mkdir trash",
        ])
    }

    @Test("nothing inside a deleted directory gets an action of its own")
    func coveredByDirectory() throws {
        let tree = try Tree {
            Dir("tmp") {
                Dir("Build", age: .days(3)) {
                    File("Out.o", age: .days(3))
                    File("lib.sqlite", age: .days(3))
                }
            }
        }
        defer { tree.remove() }
        let rules = [
            rule("lowercase", "tmp", .naming(Naming(letterCase: .lower))),
            rule("expiry", "tmp", expire(.days(1))),
        ]
        let p = try plan(tree, rules)
        #expect(p.lines == ["delete tmp/Build"])
        #expect(p.actions[0].entries == 3)
    }

    @Test("a trash item deleted whole covers deletions other rules planned inside it")
    func trashCoversExpiry() throws {
        let now = Tree.currentTimeNs()
        let stamp = [(Markers.trashStampAttribute, Array(String((now - PolicyDuration.days(40).nanoseconds) / 1_000_000_000).utf8))]
        let tree = try Tree(now: now) {
            Dir("Trash") {
                Dir("item", xattrs: stamp) { File("old", age: .days(5)); File("young") }
            }
        }
        defer { tree.remove() }
        let rules = [rule("everything", "", expire(.days(1))), rule("trash", "Trash", .trash(TrashRetention(retain: .days(30))))]
        let p = try plan(tree, rules)
        #expect(p.lines == ["delete Trash/item"])
        #expect(p.actions[0].rule == "trash")
        #expect(p.actions[0].entries == 3)
    }
}
