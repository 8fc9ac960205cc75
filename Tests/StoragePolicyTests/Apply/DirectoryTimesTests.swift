// Apply puts back the atime and mtime of a folder it removed entries from (systemd-tmpfiles does the same), so a
// partly cleaned old folder still looks old and expires on a later run; a folder a writer changed after the
// run's last removal from it keeps the writer's times.
import Foundation
import Testing
import TreeFixture
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyModel
@testable import StoragePolicyEvaluation
@testable import StoragePolicyApply

@Suite("apply restores folder times") struct DirectoryTimesTests {
    @Test("a folder partly cleaned keeps its old atime and mtime, and so expires on the next run once emptied")
    func partlyCleaned() throws {
        let f = try ApplyFixture()
        f.dir("tmp")
        f.dir("tmp/d")
        f.file("tmp/d/old", ageHours: 240)
        f.file("tmp/d/new", ageHours: 1)
        f.age("tmp/d", hours: 240)
        let before = try f.status("tmp/d")
        let report = try f.apply(f.plan([try f.action(.delete, "tmp/d/old")]))
        #expect(report.outcome("tmp/d/old") == .done)
        let after = try f.status("tmp/d")
        #expect(after.modificationTimeNs == before.modificationTimeNs)
        #expect(after.accessTimeNs == before.accessTimeNs)
        // Later, the last file is old too: the folder is old by its own mtime, so it goes with it (as with tmpfiles).
        f.age("tmp/d/new", hours: 240)
        let next = try Planner(policy: Policy(name: "unit", rules: [rule("r", "tmp", expire(.days(7)))]), root: f.rootPath,
                               options: PlanOptions(threads: 1)).plan()
        #expect(next.actions.map(\.path.string) == ["tmp/d"])
    }

    @Test("a folder a writer changed after the run's last removal from it keeps the writer's times; the other is restored")
    func writerInBetween() throws {
        let f = try ApplyFixture()
        f.dir("tmp")
        for d in ["a", "b"] {
            f.dir("tmp/\(d)")
            f.file("tmp/\(d)/x", ageHours: 240)
            f.file("tmp/\(d)/keep", ageHours: 240)
            f.age("tmp/\(d)", hours: 240)
        }
        let a = try f.status("tmp/a"), b = try f.status("tmp/b")
        // Deletes run deepest path first: tmp/b/x, then tmp/a/x. Just before the second, a writer adds to tmp/b.
        let root = f.rootPath
        var options = ApplyOptions(rootPath: root)
        options.willChange = { path in
            if path.string == "tmp/a/x" { close(open(root + "/tmp/b/written", O_WRONLY | O_CREAT, 0o644)) }
        }
        let report = try f.apply(f.plan([try f.action(.delete, "tmp/a/x"), try f.action(.delete, "tmp/b/x")]), options)
        #expect(report.outcome("tmp/a/x") == .done && report.outcome("tmp/b/x") == .done)
        #expect(try f.status("tmp/a").modificationTimeNs == a.modificationTimeNs)
        #expect(try f.status("tmp/a").accessTimeNs == a.accessTimeNs)
        let writer = try f.status("tmp/b")
        #expect(writer.modificationTimeNs > b.modificationTimeNs + 200 * 3_600_000_000_000)
        #expect(f.exists("tmp/b/written"))
    }

    @Test("a folder this run also added to keeps its new times; one it only changed markers on is not touched")
    func addedTo() throws {
        let f = try ApplyFixture()
        f.dir("tmp")
        f.file("tmp/old", ageHours: 240)
        f.file("tmp/Upper", ageHours: 240)
        f.age("tmp", hours: 240)
        let before = try f.status("tmp")
        let report = try f.apply(f.plan([try f.action(.delete, "tmp/old"), try f.action(.rename(to: RelativePath("tmp/upper")!), "tmp/Upper")]))
        #expect(report.outcome("tmp/old") == .done)
        #expect(try f.status("tmp").modificationTimeNs > before.modificationTimeNs)
    }

    @Test("the times change is journaled with the folder's identity and both pairs of times")
    func journaled() throws {
        let change = Change.times(path: RelativePath("tmp/d")!, accessNs: 1, modificationNs: 2, previousAccessNs: 3, previousModificationNs: 4)
        let identity = EntryIdentity(device: 5, inode: 6, size: 0, modificationTimeNs: 4)
        var w = JSONWriter()
        w.string("tx", "20260101T000000Z-00000000")
        w.int("seq", 1)
        w.string("type", "intent")
        Intent(op: 1, action: 0, change: change, identity: identity).encode(into: &w)
        let body = try JSONDecoder().decode(RecordBody.self, from: Data(w.finished))
        let read = try #require(Intent(body))
        #expect(read.change == change)
        #expect(read.identity?.inode == 6)
        #expect(read.refusal == nil)
        #expect(Intent(op: 1, action: 0, change: change, identity: nil).refusal == "times of tmp/d without the identity of the directory")
    }
}
