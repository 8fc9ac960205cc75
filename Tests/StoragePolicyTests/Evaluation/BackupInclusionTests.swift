// Layout `backup: include`: an exclusion marker or a CACHEDIR.TAG with the signature on an included directory
// is reported (error); without them, and without `include`, nothing is said. Expected findings by hand.
import Testing
@testable import StoragePolicy
import TreeFixture

@Suite("backup: include") struct BackupInclusionTests {
    @Test("markers present where the layout says include are reported; a tag without the signature is not")
    func reported() throws {
        let marker = Markers.backupAttribute
        let tree = try Tree {
            Dir("Marked", xattrs: [(marker.name, marker.value)])
            Dir("Tagged") { File("CACHEDIR.TAG", contents: Markers.cacheTagSignature + "\n# made by hand\n") }
            Dir("Clean") { File("CACHEDIR.TAG", contents: "not a tag") }
            Dir("Unsaid", xattrs: [(marker.name, marker.value)])
        }
        defer { tree.remove() }
        var layout = ["Marked", "Tagged", "Clean"].map { LayoutEntry(path: path($0)) }
        for i in layout.indices { layout[i].includeInBackup = true }
        layout.append(LayoutEntry(path: path("Unsaid")))
        let p = try plan(tree, [], layout: layout)
        #expect(p.lines == [])
        #expect(p.violations.map { "\($0.path.escaped): \($0.message)" } == [
            "Marked: backup-exclusion marker \(marker.name) is set, but the layout says 'backup: include'; remove it (setfattr -x \(marker.name))",
            "Tagged: CACHEDIR.TAG with the cache signature is present, but the layout says 'backup: include'",
        ])
        #expect(p.violations.allSatisfy { $0.severity == .error && $0.rule == "layout" })
    }

    @Test("the loader reads backup: include")
    func loader() throws {
        let policy = try PolicyLoader.load(yaml: "version: 1\nname: b\nlayout:\n  - path: Documents\n    backup: include\n").policy
        #expect(policy.layout[0].includeInBackup)
        #expect(!policy.layout[0].excludeFromBackup)
    }
}
