// Units of change (Docs/journal.md): a trash item and its record are carried out as one step, staged both, and
// kept together; recovery never finishes a file delete alone while its unit goes back; a rollback that leaves
// file deletes done says so in the journal (`partially rolled back`, with counts and bytes).
import TreeFixture
import Foundation
import Testing
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyPlan
@testable import StoragePolicyApply

@Suite("Units of change")
struct UnitOfChangeTests {
    /// A FreeDesktop trash under `t` holding a folder item and a file item, each with its `.trashinfo`.
    private func trash(_ f: ApplyFixture) {
        f.dir("t"); f.dir("t/files"); f.dir("t/info")
        f.dir("t/files/folder"); f.file("t/files/folder/x"); f.file("t/info/folder.trashinfo", size: 60)
        f.file("t/files/note", size: 4); f.file("t/info/note.trashinfo", size: 61)
        f.age("t/files/folder", hours: 48)
    }

    private func records(_ f: ApplyFixture) throws -> [[String: Any]] {
        let text = try String(contentsOfFile: f.rootPath + "/.policyctl/journal.jsonl", encoding: .utf8)
        return text.split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["rec"] as? [String: Any]
        }
    }

    @Test("an item and its .trashinfo are one step: both staged under the item's action, both gone after the commit")
    func oneStep() throws {
        let f = try ApplyFixture()
        trash(f)
        let plan = f.plan([try f.action(.delete, "t/files/folder", entries: 2), try f.action(.delete, "t/info/folder.trashinfo"),
                           try f.action(.delete, "t/files/note"), try f.action(.delete, "t/info/note.trashinfo")])
        let report = try f.apply(plan)
        #expect(try f.listing() == ["t", "t/files", "t/info"])
        // Every record still counts as a delete of its own in the report.
        #expect(report.counts == [.delete: 4])
        let intents = try records(f).filter { $0["type"] as? String == "intent" && $0["change"] as? String != "times" }
        #expect(intents.count == 4)
        // No unlink: a member of a unit of several entries is never rolled forward alone.
        #expect(intents.allSatisfy { $0["change"] as? String == "stage" }, "\(intents)")
        let byPath = Dictionary(uniqueKeysWithValues: intents.map { ($0["path"] as! String, $0["action"] as! Int) })
        #expect(byPath["t/files/folder"] == byPath["t/info/folder.trashinfo"])
        #expect(byPath["t/files/note"] == byPath["t/info/note.trashinfo"])
        #expect(byPath["t/files/folder"] != byPath["t/files/note"])
    }

    @Test("an item changed since the plan keeps its .trashinfo: the unit is skipped whole")
    func skippedTogether() throws {
        let f = try ApplyFixture()
        trash(f)
        let plan = f.plan([try f.action(.delete, "t/files/note"), try f.action(.delete, "t/info/note.trashinfo"),
                           try f.action(.delete, "t/files/folder", entries: 2), try f.action(.delete, "t/info/folder.trashinfo")])
        f.file("t/files/note", size: 9)
        f.file("t/info/folder.trashinfo", size: 70)
        let report = try f.apply(plan)
        #expect(f.exists("t/files/note") && f.exists("t/info/note.trashinfo"))
        #expect(f.exists("t/files/folder") && f.exists("t/info/folder.trashinfo"))
        #expect(report.outcome("t/info/note.trashinfo") == .skipped("the record of t/files/note, which is kept; kept with it"))
        #expect(report.outcome("t/files/folder") == .skipped("its record t/info/folder.trashinfo modified since the plan (size 60 -> 70); kept with it"))
        #expect(report.outcome("t/info/folder.trashinfo") == .skipped("the record of t/files/folder, which is kept; kept with it"))
        #expect(report.counts.isEmpty)
    }

    @Test("an app trash item and its index entry are one unit too")
    func appIndex() throws {
        let f = try ApplyFixture()
        f.dir("a"); f.dir("a/.policyctl-info"); f.file("a/item"); f.file("a/.policyctl-info/item.trashinfo", size: 50)
        let plan = f.plan([try f.action(.delete, "a/item"), try f.action(.delete, "a/.policyctl-info/item.trashinfo")])
        _ = try f.apply(plan)
        #expect(try f.listing() == ["a", "a/.policyctl-info"])
        let intents = try records(f).filter { $0["type"] as? String == "intent" && $0["change"] as? String != "times" }
        #expect(intents.map { $0["change"] as? String } == ["stage", "stage"])
        #expect(Set(intents.map { $0["action"] as? Int }).count == 1)
    }

    @Test("a record of another rule, or one whose folder the plan deletes too, is not coupled")
    func notCoupled() throws {
        func step(_ path: String, rule: String = "r", type: FileType = .regular) -> Step {
            Step(action: Action(kind: .delete, path: RelativePath(path)!, rule: rule, reason: "",
                                identity: EntryIdentity(device: 1, inode: 1, size: 1, modificationTimeNs: 1), type: type),
                 verb: .delete, restore: nil)
        }
        var steps = [step("t/info/a.trashinfo"), step("t/files/a", type: .directory), step("t/info/b.trashinfo", rule: "other"),
                     step("t/files/b"), step("u/info/c.trashinfo"), step("u/files/c"), step("u/info", type: .directory)]
        Applier.coupleRecords(&steps)
        #expect(steps[1].record == 0 && steps[0].carriedBy == 1)
        #expect(steps[3].record == nil && steps[2].carriedBy == nil)
        #expect(steps[5].record == nil && steps[4].carriedBy == nil)
    }

    private func begin(_ f: ApplyFixture, actions: Int) throws -> Transaction {
        let metadata = Transaction.Metadata(kind: .apply, policy: "unit", policySHA256: nil, policyPath: nil,
                                            planFile: nil, rootPath: f.rootPath, actions: actions)
        return try Transaction.begin(metadata, lock: f.lock, journal: try f.lock.state.openJournal())
    }

    @Test("recovery finishes the durable file deletes and the journal says so: partially rolled back, with counts and bytes")
    func partiallyRolledBack() throws {
        let f = try ApplyFixture()
        f.dir("tmp"); f.file("tmp/a", size: 1000); f.file("tmp/b", size: 24); f.dir("tmp/d"); f.file("tmp/d/x")
        let t = try begin(f, actions: 3)
        let d = t.intend(.stage(path: RelativePath("tmp/d")!, name: t.stagingName()), action: 0, identity: try f.status("tmp/d").identity)
        t.intend(.unlink(path: RelativePath("tmp/a")!, type: .regular), action: 1, identity: try f.status("tmp/a").identity)
        t.intend(.unlink(path: RelativePath("tmp/b")!, type: .regular), action: 2, identity: try f.status("tmp/b").identity)
        try t.makeDurable()
        try t.perform(d)
        // Killed here: the unlinks were never made by the run.
        let report = try Recovery.run(holding: f.lock)
        #expect(report.entries.first?.finished == 2)
        #expect(try f.listing() == ["tmp", "tmp/d", "tmp/d/x"])
        let summary = try #require(try JournalHistory.read(f.lock.state).transactions.first)
        #expect(summary.outcome == .partiallyRolledBack)
        #expect(summary.counts == [.delete: 2])
        #expect(summary.bytesFreed == 1024)
        #expect(summary.recovered)
        let end = try #require(try records(f).last)
        #expect(end["outcome"] as? String == "partially rolled back")
        #expect((end["counts"] as? [String: Int]) == ["delete": 2])
        #expect(end["bytesFreed"] as? Int == 1024)
    }

    @Test("a resumed recovery still counts the deletes the first one finished")
    func resumedCount() throws {
        let f = try ApplyFixture()
        f.dir("tmp"); f.file("tmp/a", size: 10); f.file("tmp/b", size: 20)
        let t = try begin(f, actions: 2)
        let a = t.intend(.unlink(path: RelativePath("tmp/a")!, type: .regular), action: 0, identity: try f.status("tmp/a").identity)
        t.intend(.unlink(path: RelativePath("tmp/b")!, type: .regular), action: 1, identity: try f.status("tmp/b").identity)
        try t.makeDurable()
        try t.perform(a)
        _ = try Recovery.run(holding: f.lock)
        let summary = try #require(try JournalHistory.read(f.lock.state).transactions.first)
        #expect(summary.outcome == .partiallyRolledBack)
        #expect(summary.counts == [.delete: 2])
        #expect(summary.bytesFreed == 30)
    }

    @Test("a rollback with no file delete done is plainly rolled back")
    func plainlyRolledBack() throws {
        let f = try ApplyFixture()
        f.dir("tmp"); f.dir("tmp/d")
        let t = try begin(f, actions: 1)
        let d = t.intend(.stage(path: RelativePath("tmp/d")!, name: t.stagingName()), action: 0, identity: try f.status("tmp/d").identity)
        try t.makeDurable()
        try t.perform(d)
        _ = try Recovery.run(holding: f.lock)
        let summary = try #require(try JournalHistory.read(f.lock.state).transactions.first)
        #expect(summary.outcome == .rolledBack)
        #expect(summary.counts.isEmpty)
        #expect(summary.bytesFreed == 0)
    }

    @Test("recovery never finishes a file delete alone while another change of its action goes back")
    func mixedActionRolledBack() throws {
        let f = try ApplyFixture()
        f.dir("t"); f.dir("t/files"); f.dir("t/info"); f.dir("t/files/item"); f.file("t/info/item.trashinfo")
        let t = try begin(f, actions: 1)
        // A journal pairing them (another writer's, or damaged): the unit goes back whole.
        let stage = t.intend(.stage(path: RelativePath("t/files/item")!, name: t.stagingName()), action: 0, identity: try f.status("t/files/item").identity)
        t.intend(.unlink(path: RelativePath("t/info/item.trashinfo")!, type: .regular), action: 0, identity: try f.status("t/info/item.trashinfo").identity)
        try t.makeDurable()
        try t.perform(stage)
        let report = try Recovery.run(holding: f.lock)
        #expect(report.entries.first?.finished == 0)
        #expect(f.exists("t/files/item") && f.exists("t/info/item.trashinfo"))
        #expect(try JournalHistory.read(f.lock.state).transactions.first?.outcome == .rolledBack)
    }
}
