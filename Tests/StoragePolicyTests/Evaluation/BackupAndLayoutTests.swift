// Backup-exclusion markers and CACHEDIR.TAG on scopes, matched entries and layout directories, and layout
// directories that are missing or blocked. Expected actions are spelled out by hand.
import Testing
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyModel
import TreeFixture

@Suite("Backup and layout") struct BackupAndLayoutTests {
    static let marker = Markers.backupAttribute
    static let signature = Markers.cacheTagSignature

    @Test("a scope without the marker gets setxattr; with it, nothing; a wrong value is corrected")
    func scopeMarker() throws {
        let tree = try Tree {
            Dir("Library") {
                Dir("Caches")
                Dir("Marked", xattrs: [(Self.marker.name, Self.marker.value)])
                Dir("Wrong", xattrs: [(Self.marker.name, Array("true".utf8))])
            }
        }
        defer { tree.remove() }
        let rules = ["Caches", "Marked", "Wrong"].map { rule("backup-\($0)", "Library/\($0)", .backup(BackupExclusion())) }
        let p = try plan(tree, rules)
        #expect(p.lines == ["setxattr Library/Caches \(Self.marker.name)", "setxattr Library/Wrong \(Self.marker.name)"])
        #expect(p.actions[0].reason == "backup-exclusion marker missing")
        #expect(p.actions[1].reason == "backup-exclusion marker has the wrong value")
        if case .setxattr(_, let value) = p.actions[0].kind { #expect(value == Self.marker.value) } else { Issue.record("not setxattr") }
    }

    @Test("CACHEDIR.TAG: written when missing or wrong, left when its first 43 bytes are the signature")
    func cacheTag() throws {
        let tree = try Tree {
            Dir("A", xattrs: [(Self.marker.name, Self.marker.value)])
            Dir("B", xattrs: [(Self.marker.name, Self.marker.value)]) { File("CACHEDIR.TAG", contents: Self.signature + "\n# x\n") }
            Dir("C", xattrs: [(Self.marker.name, Self.marker.value)]) { File("CACHEDIR.TAG", contents: "Signature: nope\n") }
        }
        defer { tree.remove() }
        let rules = ["A", "B", "C"].map { rule("tag-\($0)", $0, .backup(BackupExclusion(cacheDirectoryTag: true))) }
        #expect(try plan(tree, rules).lines == ["write-tag A", "write-tag C"])
    }

    @Test("with match globs, the selected files and directories carry the marker, not the scope")
    func matched() throws {
        let tree = try Tree {
            Dir("Data") {
                File("a.db")
                File("b.db", xattrs: [(Self.marker.name, Self.marker.value)])
                File("c.txt")
                Dir("d.db") { File("inner.db") }
            }
        }
        defer { tree.remove() }
        let p = try plan(tree, [rule("backup-db", "Data", .backup(BackupExclusion()), match: ["*.db"])])
        #expect(p.lines == ["setxattr Data/a.db \(Self.marker.name)", "setxattr Data/d.db \(Self.marker.name)"])
    }

    @Test("audit mode reports missing markers and tags")
    func audit() throws {
        let tree = try Tree { Dir("Caches") }
        defer { tree.remove() }
        let p = try plan(tree, [rule("backup", "Caches", .backup(BackupExclusion(cacheDirectoryTag: true)), mode: .audit)])
        #expect(p.actions.isEmpty)
        #expect(p.findings == [
            "backup: Caches: CACHEDIR.TAG missing or without the signature",
            "backup: Caches: backup-exclusion marker \(Self.marker.name) missing",
        ])
        #expect(p.violations.allSatisfy { $0.severity == .error })
    }

    @Test("missing layout directories are made parents first, with their markers; blocked ones are reported")
    func layout() throws {
        let outside = try Tree { Dir("elsewhere") }
        defer { outside.remove() }
        let tree = try Tree {
            Dir("Documents")
            File("tmp")
            Symlink("Downloads", to: outside.root + "/elsewhere")
            Dir("Existing")
        }
        defer { tree.remove() }
        let layout = [
            LayoutEntry(path: path("Documents/UserFiles")),
            LayoutEntry(path: path("Library/Caches/Thumbnails"), excludeFromBackup: true, cacheDirectoryTag: true),
            LayoutEntry(path: path("tmp/scratch")),
            LayoutEntry(path: path("Downloads/Partial")),
            LayoutEntry(path: path("Existing"), excludeFromBackup: true),
        ]
        let p = try plan(tree, [], layout: layout)
        #expect(p.lines == [
            "mkdir Documents/UserFiles",
            "setxattr Existing \(Self.marker.name)",
            "mkdir Library", "mkdir Library/Caches", "mkdir Library/Caches/Thumbnails",
            "setxattr Library/Caches/Thumbnails \(Self.marker.name)", "write-tag Library/Caches/Thumbnails",
        ])
        #expect(p.actions.allSatisfy { $0.rule == "layout" })
        #expect(p.findings == [
            "layout: Downloads: a symlink is where layout directory 'Downloads/Partial' needs a directory; it is never replaced",
            "layout: tmp: a file is where layout directory 'tmp/scratch' needs a directory; it is never replaced",
        ])
    }
}
