// Apply puts back the atime and mtime of a folder it removed entries from (systemd-tmpfiles does the same), so a
// partly cleaned old folder still looks old and expires on a later run; a folder a writer changed after the
// run's last removal from it keeps the writer's times.
import Foundation
import Synchronization
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

    @Test("a run of deletes only puts a folder's times back once it has left it for good: journaled, then set, before its last group's unlinks")
    func restoredAsItGoes() throws {
        let f = try ApplyFixture()
        f.dir("tmp")
        for d in ["a", "b", "c"] {
            f.dir("tmp/\(d)")
            f.file("tmp/\(d)/x", ageHours: 240)
            f.file("tmp/\(d)/keep", ageHours: 240)
            f.age("tmp/\(d)", hours: 240)
        }
        let c = try f.status("tmp/c")
        // Deletes run deepest path first: tmp/c/x alone in the first group (groups of 1, then 2), then tmp/b/x and
        // tmp/a/x. What the run had done to tmp/c when it was about to delete tmp/a/x, the last step:
        let root = f.rootPath
        let seen = Mutex<(mtime: Int64, journaled: Bool)?>(nil)
        var options = ApplyOptions(rootPath: root, groupSize: 1)
        options.willChange = { path in
            guard path.string == "tmp/a/x" else { return }
            var s = stat()
            lstat(root + "/tmp/c", &s)
            let journal = (try? Data(contentsOf: URL(fileURLWithPath: root + "/.policyctl/journal.jsonl"))) ?? Data()
            let text = String(decoding: journal, as: UTF8.self)
            let journaled = text.split(separator: "\n").contains { $0.contains("\"times\"") && $0.contains("\"tmp/c\"") }
            seen.withLock { $0 = (Int64(s.st_mtim.tv_sec) * 1_000_000_000 + Int64(s.st_mtim.tv_nsec), journaled) }
        }
        let report = try f.apply(f.plan(["tmp/a/x", "tmp/b/x", "tmp/c/x"].map { try f.action(.delete, $0) }), options)
        #expect(["tmp/a/x", "tmp/b/x", "tmp/c/x"].allSatisfy { report.outcome($0) == .done })
        let early = try #require(seen.withLock { $0 })
        #expect(early.journaled)
        #expect(early.mtime == c.modificationTimeNs)
        for d in ["a", "b", "c"] {
            let s = try f.status("tmp/\(d)")
            #expect(s.modificationTimeNs == c.modificationTimeNs && s.accessTimeNs == c.accessTimeNs)
        }
    }

    @Test("a folder is left when no path at or after the next step in descending byte order can lie under it")
    func leftFolders() {
        func left(_ folder: String, _ next: String) -> Bool {
            DirectoryTimes.isLeft(RelativePath(folder)!, at: RelativePath(next)!)
        }
        #expect(left("tmp/c", "tmp/b/x"))
        #expect(left("tmp/c", "tmp/c"))
        #expect(left("tmp/c", "tmp"))
        #expect(left("tmp/c", "tmp/c-1"))
        #expect(left("tmp/c", "tmp/c.d/x"))
        #expect(!left("tmp/c", "tmp/c/y"))
        #expect(!left("tmp/c", "tmp/d"))
        #expect(!left("tmp/c", "tmp/c\u{7F}"))
        #expect(!DirectoryTimes.isLeft(.root, at: RelativePath("tmp")!))
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
