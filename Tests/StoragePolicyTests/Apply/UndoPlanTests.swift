// Undo plans built from the journal: a rename reversed and a marker put back to its previous value; a journal
// compacted since (intents dropped) refuses the undo; an undo names the transaction it reverses.
import Foundation
import Testing
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyApply
@testable import StoragePolicyModel

@Suite("Undo plans") struct UndoPlanTests {
    @Test("a rename goes back and a marker returns to the value the journal recorded as previous")
    func renameAndMarker() throws {
        let f = try ApplyFixture()
        f.file("Doc.TXT")
        f.dir("cache")
        try f.root.setExtendedAttribute("user.xdg.robots.backup", to: Array("old".utf8), of: FileName("cache")!)
        let report = try f.apply(f.plan([try f.action(.rename(to: RelativePath("doc.txt")!), "Doc.TXT"),
                                         try f.action(.setxattr(name: "user.xdg.robots.backup", value: Array("false".utf8)), "cache")]))
        let id = try #require(report.transaction)
        let plan = try Applier(holding: f.lock).undoPlan(id)
        #expect(plan.changes == ["rename doc.txt -> Doc.TXT", "setxattr user.xdg.robots.backup on cache"])
        #expect(plan.notUndoable.isEmpty && plan.skipped.isEmpty)
        let undone = try Applier(holding: f.lock).undo(plan, options: ApplyOptions(rootPath: f.rootPath))
        #expect(undone.skipped.isEmpty)
        #expect(f.exists("Doc.TXT") && !f.exists("doc.txt"))
        #expect(try f.root.extendedAttribute("user.xdg.robots.backup", of: FileName("cache")!) == Array("old".utf8))
        let history = try JournalHistory.read(f.lock.state).transactions
        #expect(history.last?.kind == .undo)
        #expect(history.last?.reverses == id)
    }

    @Test("after rotation the undo reads the transaction from its history file; with that file gone it is refused and says why")
    func rotated() throws {
        let f = try ApplyFixture()
        f.file("A")
        let report = try f.apply(f.plan([try f.action(.rename(to: RelativePath("a")!), "A")]))
        let id = try #require(report.transaction)
        _ = try JournalRotation.rotateIfLarge(holding: f.lock, retention: Policy.JournalRetention(keep: 0), protected: [], threshold: 0)
        #expect(try Applier(holding: f.lock).undoPlan(id).changes == ["rename a -> A"])
        try f.lock.state.directory.removeFile(FileName("journal.\(id).\(id).jsonl.gz")!)
        #expect(throws: UndoError.self) { try Applier(holding: f.lock).undoPlan(id) }
        do { _ = try Applier(holding: f.lock).undoPlan(id) } catch let error as UndoError {
            #expect(error.message == "the journal keeps only the summary of transaction \(id), not the changes undo needs (its history file was removed past the policy's journal: { history } limit, or an older policyctl compacted the journal); nothing was changed")
        }
        #expect(f.exists("a"))
    }
}
