// Forbidden entries: reported in audit, moved into the trash folder under a free name in enforce, reported
// when there is no trash folder; entries already in the trash are left alone. Expected moves by hand.
import Testing
@testable import StoragePolicy
@testable import StoragePolicyModel
import TreeFixture

@Suite("Forbid") struct ForbidTests {
    static let forbidDatabases = rule("no-private-data", "Documents/UserFiles", .forbid(globs(["**/*.sqlite", "**/*.sqlite-wal"])))
    static let trash = rule("trash", "Documents/UserFiles/.Trash", .trash(TrashRetention(retain: .days(30))))

    static func tree() throws -> Tree {
        try Tree {
            Dir("Documents") {
                Dir("UserFiles") {
                    File("Notes.sqlite")
                    File("Notes.sqlite-wal")
                    File("letter.txt")
                    Dir("sub") { File("Notes.sqlite") }
                    Dir(".Trash") { File("Notes.sqlite") }
                }
            }
        }
    }

    @Test("enforce moves them into the trash folder, each under a free Finder-style name")
    func enforce() throws {
        let tree = try Self.tree()
        defer { tree.remove() }
        let p = try plan(tree, [Self.trash, Self.forbidDatabases])
        #expect(p.lines == [
            "trash Documents/UserFiles/Notes.sqlite -> Documents/UserFiles/.Trash/Notes (2).sqlite",
            "trash Documents/UserFiles/Notes.sqlite-wal -> Documents/UserFiles/.Trash/Notes.sqlite-wal",
            "trash Documents/UserFiles/sub/Notes.sqlite -> Documents/UserFiles/.Trash/Notes (3).sqlite",
        ])
        #expect(p.actions[0].reason == "forbidden (matches '**/*.sqlite')")
        #expect(p.actions.allSatisfy { $0.identity != nil && $0.bytes == 0 })
        #expect(p.violations.isEmpty)
    }

    @Test("audit reports them; without a trash folder enforce reports them too")
    func reportOnly() throws {
        let tree = try Self.tree()
        defer { tree.remove() }
        var audit = Self.forbidDatabases
        audit.mode = .audit
        let audited = try plan(tree, [Self.trash, audit])
        #expect(audited.actions.isEmpty)
        #expect(audited.findings == [
            "no-private-data: Documents/UserFiles/Notes.sqlite: forbidden (matches '**/*.sqlite')",
            "no-private-data: Documents/UserFiles/Notes.sqlite-wal: forbidden (matches '**/*.sqlite-wal')",
            "no-private-data: Documents/UserFiles/sub/Notes.sqlite: forbidden (matches '**/*.sqlite')",
        ])
        let noTrash = try plan(tree, [Self.forbidDatabases])
        #expect(noTrash.actions.isEmpty)
        #expect(noTrash.findings.count == 4)  // the .Trash copy too: without a trash rule it is an ordinary folder
        #expect(noTrash.findings[0] == "no-private-data: Documents/UserFiles/.Trash/Notes.sqlite: forbidden (matches '**/*.sqlite'); the policy has no trash folder to move it to")
    }

    @Test("a missing trash folder is made first")
    func missingTrashFolder() throws {
        let tree = try Tree { Dir("tmp") { File("core.dump") } }
        defer { tree.remove() }
        let rules = [rule("trash", "var/Trash", .trash(TrashRetention(retain: .days(1)))),
                     rule("no-dumps", "tmp", .forbid(globs(["*.dump"])))]
        // Sorted by path, as every plan is; apply makes directories before it moves anything.
        #expect(try plan(tree, rules).lines == ["trash tmp/core.dump -> var/Trash/core.dump", "mkdir var", "mkdir var/Trash"])
    }

    @Test("a FreeDesktop trash folder receives moved entries in files/")
    func freedesktopTarget() throws {
        let tree = try Tree {
            Dir("Trash") { Dir("files") { File("x.bak") }; Dir("info") }
            Dir("work") { File("x.bak") }
        }
        defer { tree.remove() }
        let rules = [rule("trash", "Trash", .trash(TrashRetention(retain: .days(30)))),
                     rule("no-backups", "work", .forbid(globs(["*.bak"])))]
        #expect(try plan(tree, rules).lines == ["trash work/x.bak -> Trash/files/x (2).bak"])
    }
}
