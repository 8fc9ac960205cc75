// Layout `backup: include`: the exclusion marker and a CACHEDIR.TAG holding exactly the signature on an included
// directory are planned for removal; any other tag with the signature is reported (error) and left; without
// them, and without `include`, nothing is said. Expected actions and findings by hand.
import Foundation
import Testing
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyModel
@testable import StoragePolicyPlan
@testable import StoragePolicyEvaluation
import TreeFixture

@Suite("backup: include") struct BackupInclusionTests {
    @Test("the exclusion xattr and a CACHEDIR.TAG holding exactly the signature are removed; anything else is reported and left")
    func planned() throws {
        let marker = Markers.backupAttribute
        let tree = try Tree {
            Dir("Marked", xattrs: [(marker.name, marker.value)])
            Dir("Tagged") { File("CACHEDIR.TAG", contents: Markers.cacheTagSignature) }
            Dir("Both", xattrs: [(marker.name, marker.value)]) { File("CACHEDIR.TAG", contents: Markers.cacheTagContents) }
            Dir("More") { File("CACHEDIR.TAG", contents: Markers.cacheTagSignature + "\n# made by hand\n") }
            Dir("Linked") { File("CACHEDIR.TAG", contents: Markers.cacheTagSignature); HardLink("other", to: "CACHEDIR.TAG") }
            Dir("Pointer") { Symlink("CACHEDIR.TAG", to: "/etc/hostname") }
            Dir("Clean") { File("CACHEDIR.TAG", contents: "not a tag") }
            Dir("Unsaid", xattrs: [(marker.name, marker.value)])
        }
        defer { tree.remove() }
        var layout = ["Marked", "Tagged", "Both", "More", "Linked", "Pointer", "Clean"].map { LayoutEntry(path: path($0)) }
        for i in layout.indices { layout[i].includeInBackup = true }
        layout.append(LayoutEntry(path: path("Unsaid")))
        let p = try plan(tree, [], layout: layout)
        #expect(p.lines.sorted() == ["unmark Both", "unmark Marked", "untag Both/CACHEDIR.TAG", "untag Tagged/CACHEDIR.TAG"])
        let untag = try #require(p.actions.first { $0.path == path("Tagged/CACHEDIR.TAG") })
        #expect(untag.type == .regular)
        #expect(untag.identity?.size == Int64(Markers.cacheTagSignature.utf8.count))
        #expect(BackupInclusion.isRemovable(Array(Markers.cacheTagContents.utf8)) && Markers.cacheTagContents != Markers.cacheTagSignature)
        #expect(p.actions.allSatisfy { $0.rule == "layout" })
        #expect(p.actions.first { $0.path == path("Marked") }?.kind == .unmark(name: marker.name))
        #expect(p.violations.map { "\($0.path.escaped): \($0.message)" }.sorted() == [
            "Linked: CACHEDIR.TAG with the cache signature is present, but the layout says 'backup: include'; it has 2 hard links, so it is left alone: remove it by hand",
            "More: CACHEDIR.TAG with the cache signature is present, but the layout says 'backup: include'; it holds more than the signature and is not the tag this engine writes, so it is left alone: remove it by hand",
            "Pointer: CACHEDIR.TAG is a symlink, not a file: never followed or removed; check it by hand",
        ])
        #expect(p.violations.allSatisfy { $0.severity == .error && $0.rule == "layout" })
        // The planner's removals pass plan validation; a forged untag of another file, or outside the layout, does not.
        let policy = Policy(name: "test", layout: layout, rules: [])
        #expect(PlanValidation(policy: policy).firstInvalid(in: p) == nil)
        var forged = untag
        forged.path = path("Tagged/other")
        #expect(PlanValidation(policy: policy).problem(with: forged) == "the layout removes only a regular file named CACHEDIR.TAG")
        forged.path = path("Unsaid/CACHEDIR.TAG")
        #expect(PlanValidation(policy: policy).problem(with: forged) == "no layout directory with 'backup: include' is at Unsaid")
        let unmark = Action(kind: .unmark(name: "user.other"), path: path("Marked"), rule: "layout", reason: "forged", type: .directory)
        #expect(PlanValidation(policy: policy).problem(with: unmark) == "the only attribute the layout removes is \(marker.name)")
    }

    @Test("unmark and untag survive a saved plan's JSON")
    func json() throws {
        let actions = [Action(kind: .unmark(name: "user.xdg.robots.backup"), path: path("D"), rule: "layout", reason: "r", type: .directory),
                       Action(kind: .untag, path: path("D/CACHEDIR.TAG"), rule: "layout", reason: "r", bytes: 4096,
                              identity: EntryIdentity(device: 1, inode: 2, size: 43, modificationTimeNs: 3), type: .regular)]
        for action in actions {
            let data = try JSONEncoder().encode(action)
            #expect(try JSONDecoder().decode(Action.self, from: data) == action)
        }
    }

    @Test("the loader reads backup: include")
    func loader() throws {
        let policy = try PolicyLoader.load(yaml: "version: 1\nname: b\nlayout:\n  - path: Documents\n    backup: include\n").policy
        #expect(policy.layout[0].includeInBackup)
        #expect(!policy.layout[0].excludeFromBackup)
    }
}
