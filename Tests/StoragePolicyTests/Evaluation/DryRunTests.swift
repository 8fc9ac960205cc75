// Planning is a dry run: with every rule kind active over a mixed tree, the tree's manifest (names, types,
// sizes, modes, mtimes, atimes, xattrs) is the same before and after, atimes included.
import Testing
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyModel
import TreeFixture

@Suite("Dry run") struct DryRunTests {
    @Test("plan changes nothing on disk, not even atimes")
    func changesNothing() throws {
        let now = Tree.currentTimeNs()
        let stamp = [(Markers.trashStampAttribute, Array(String((now - PolicyDuration.days(40).nanoseconds) / 1_000_000_000).utf8))]
        let tree = try Tree(now: now) {
            Dir("tmp", age: .days(2)) {
                File("old.dat", age: .days(3), atime: .days(3))
                Dir("build", age: .days(3)) { File("x.o", age: .days(3)) }
                FIFO("pipe", age: .days(3))
            }
            Dir("Documents", age: .days(2)) {
                Dir("UserFiles", age: .days(2)) {
                    File("Notes.sqlite", age: .days(2))
                    File("Report.TXT", age: .days(2))
                    Dir(".Trash", age: .days(2)) { File("gone", age: .days(50), xattrs: stamp) }
                }
                File("dl.tmp", age: .days(2))
            }
            Dir("Library", age: .days(2)) {
                Dir("Caches", age: .days(2)) {
                    Dir("Thumbnails", age: .days(2)) {
                        for i in 0..<20 { File("t\(i).png", age: .days(Int64(i + 2)), size: 5000) }
                    }
                    Dir("Tagged", age: .days(2)) { File("CACHEDIR.TAG", age: .days(2), atime: .days(2), contents: Markers.cacheTagContents) }
                }
            }
            Dir("Trash", age: .days(2)) {
                Dir("files", age: .days(2)) { File("a", age: .days(2)) }
                Dir("info", age: .days(2)) {
                    File("a.trashinfo", age: .days(2), atime: .days(2), contents: "[Trash Info]\nDeletionDate=2001-01-01T00:00:00\n")
                }
            }
        }
        defer { tree.remove() }
        let rules = [
            rule("tmp", "tmp", expire(.days(1))),
            rule("residue", "Documents", expire(.hours(1)), match: ["**/*.tmp"]),
            rule("trash", "Documents/UserFiles/.Trash", .trash(TrashRetention(retain: .days(30)))),
            rule("fd-trash", "Trash", .trash(TrashRetention(retain: .days(30)))),
            rule("quota", "Library/Caches/Thumbnails", .quota(Quota(max: ByteSize(bytes: 40_000), target: .percent(90)))),
            rule("lower", "Documents/UserFiles", .naming(Naming(letterCase: .lower, pattern: "[a-z]+"))),
            rule("no-db", "Documents/UserFiles", .forbid(globs(["**/*.sqlite"]))),
            rule("backup", "Library/Caches", .backup(BackupExclusion(cacheDirectoryTag: true)), match: ["*"]),
        ]
        let layout = [LayoutEntry(path: path("Library/Caches/Tagged"), excludeFromBackup: true, cacheDirectoryTag: true),
                      LayoutEntry(path: path("Documents/Inbox"))]
        let before = Manifest.take(tree.root)
        let p = try plan(tree, rules, layout: layout)
        let after = Manifest.take(tree.root)
        #expect(after == before)
        #expect(Set(p.actions.map(\.kind.name)) == ["delete", "rename", "trash", "mkdir", "setxattr", "write-tag"])
        #expect(p.lines.contains("delete Trash/files/a") && p.lines.contains("delete Trash/info/a.trashinfo"))
        #expect(p.lines.contains("delete Documents/UserFiles/.Trash/gone"))
    }
}
