// Which file deletes go to the unlink workers: a folder's run of at least `unlinkWorkersFrom` (64) consecutive
// file deletes, so a tree of many small folders is not held up by a wait for the workers at every folder's end
// (issue 31); a smaller run is unlinked by the run's own thread. Either way every delete is checked just before
// its unlink, and a changed file is kept with the same reason. Seen through `willChange`, which runs on the
// thread that makes the unlink; the run's thread helping the workers when it would wait for them is turned off
// here (`runThreadHelpsWorkers`, tested in UnlinkWorkersTests), so the thread tells the choice.
import TreeFixture
import Foundation
import Testing
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyPlan
@testable import StoragePolicyApply

@Suite("unlink workers: which deletes they get") struct UnlinkWorkerChoiceTests {
    /// The thread each path's unlink was made on.
    final class Threads: @unchecked Sendable {
        private let lock = NSLock()
        private var byPath: [String: pthread_t] = [:]
        func record(_ path: RelativePath) {
            lock.lock()
            byPath[path.string] = pthread_self()
            lock.unlock()
        }
        /// The paths under `folder` unlinked on `thread`, and on other threads.
        func split(_ folder: String, by thread: pthread_t) -> (here: Int, elsewhere: Int) {
            lock.lock()
            defer { lock.unlock() }
            let inFolder = byPath.filter { $0.key.hasPrefix(folder + "/") }
            let here = inFolder.filter { pthread_equal($0.value, thread) != 0 }.count
            return (here, inFolder.count - here)
        }
    }

    /// `big/` with 70 old files, `small/` with 5; every file planned for deletion.
    private static func tree() throws -> (ApplyFixture, Plan) {
        let f = try ApplyFixture()
        f.dir("big")
        f.dir("small")
        var actions: [Action] = []
        for i in 0..<70 {
            f.file("big/f\(i)", size: 0)
            actions.append(try f.action(.delete, "big/f\(i)"))
        }
        for i in 0..<5 {
            f.file("small/f\(i)", size: 0)
            actions.append(try f.action(.delete, "small/f\(i)"))
        }
        return (f, f.plan(actions))
    }

    @Test("75 file deletes in two folders all go to the workers (a batch spans folders); a plan of 5 is unlinked by the run's thread")
    func batchSpansFoldersSmallPlanInPlace() throws {
        let (f, plan) = try Self.tree()
        let threads = Threads()
        var options = ApplyOptions(rootPath: f.rootPath)
        options.runThreadHelpsWorkers = false
        options.willChange = { threads.record($0) }
        let report = try f.apply(plan, options)
        #expect(report.counts[.delete] == 75)
        #expect(try f.listing() == ["big", "small"])
        let me = pthread_self()
        #expect(threads.split("big", by: me) == (0, 70))
        #expect(threads.split("small", by: me) == (0, 5))

        let g = try ApplyFixture()
        g.dir("small")
        for i in 0..<5 { g.file("small/f\(i)", size: 0) }
        let few = Threads()
        var options2 = ApplyOptions(rootPath: g.rootPath)
        options2.runThreadHelpsWorkers = false
        options2.willChange = { few.record($0) }
        let report2 = try g.apply(g.plan(try (0..<5).map { try g.action(.delete, "small/f\($0)") }), options2)
        #expect(report2.counts[.delete] == 5)
        #expect(few.split("small", by: me) == (5, 0))
        #expect(try g.listing() == ["small"])
    }

    @Test("unlinkWorkersFrom 1 sends even 5 deletes to the workers; unlinksInBackground false sends none")
    func thresholdAndSwitch() throws {
        let me = pthread_self()
        let g = try ApplyFixture()
        g.dir("small")
        for i in 0..<5 { g.file("small/f\(i)", size: 0) }
        let few = Threads()
        var options = ApplyOptions(rootPath: g.rootPath)
        options.runThreadHelpsWorkers = false
        options.unlinkWorkersFrom = 1
        options.willChange = { few.record($0) }
        #expect(try g.apply(g.plan(try (0..<5).map { try g.action(.delete, "small/f\($0)") }), options).counts[.delete] == 5)
        #expect(few.split("small", by: me) == (0, 5))

        let (f, plan) = try Self.tree()
        let inPlace = Threads()
        var options2 = ApplyOptions(rootPath: f.rootPath)
        options2.runThreadHelpsWorkers = false
        options2.unlinksInBackground = false
        options2.willChange = { inPlace.record($0) }
        #expect(try f.apply(plan, options2).counts[.delete] == 75)
        #expect(inPlace.split("big", by: me) == (70, 0))
        #expect(inPlace.split("small", by: me) == (5, 0))
    }

    @Test("a file changed since the plan is kept with the same reason whether the workers or the run's thread checked it")
    func changedFileKeptEitherWay() throws {
        var reasons: [String] = []
        for inBackground in [true, false] {
            let (f, plan) = try Self.tree()
            // Written to since the plan: another size.
            f.file("big/f3", size: 7)
            f.file("small/f3", size: 7)
            var options = ApplyOptions(rootPath: f.rootPath)
            options.runThreadHelpsWorkers = false
            options.unlinksInBackground = inBackground
            let report = try f.apply(plan, options)
            #expect(report.counts[.delete] == 73)
            #expect(try f.listing() == ["big", "big/f3", "small", "small/f3"])
            for path in ["big/f3", "small/f3"] {
                guard case .skipped(let why) = report.outcome(path) else {
                    Issue.record("\(path) not skipped: \(String(describing: report.outcome(path)))")
                    continue
                }
                reasons.append(why)
            }
        }
        #expect(reasons.count == 4 && Set(reasons).count == 1, "\(reasons)")
        #expect(reasons.first?.hasPrefix("modified since the plan (size 0 -> 7)") == true)
    }

    /// 20 folders of 8 old files and one young one, each folder 10 days old; the old files planned for deletion.
    private static func folders() throws -> (ApplyFixture, Plan, [FileStatus]) {
        let f = try ApplyFixture()
        f.dir("tmp")
        var actions: [Action] = []
        for d in 0..<20 {
            f.dir("tmp/d\(d)")
            for i in 0..<8 {
                f.file("tmp/d\(d)/old\(i)", size: 0, ageHours: 240)
                actions.append(try f.action(.delete, "tmp/d\(d)/old\(i)"))
            }
            f.file("tmp/d\(d)/keep", size: 0, ageHours: 1)
            f.age("tmp/d\(d)", hours: 240)
        }
        return (f, f.plan(actions), try (0..<20).map { try f.status("tmp/d\($0)") })
    }

    @Test("160 deletes over 20 folders on the workers: every folder gets its old atime and mtime back, as when each folder waited for them")
    func folderTimesAcrossFolders() throws {
        let (f, plan, before) = try Self.folders()
        let report = try f.apply(plan)
        #expect(report.counts[.delete] == 160)
        for d in 0..<20 {
            let after = try f.status("tmp/d\(d)")
            #expect(after.modificationTimeNs == before[d].modificationTimeNs, "tmp/d\(d)")
            #expect(after.accessTimeNs == before[d].accessTimeNs, "tmp/d\(d)")
            #expect(f.exists("tmp/d\(d)/keep") && !f.exists("tmp/d\(d)/old0"))
        }
    }

    @Test("a folder whose deletes the workers refused (changed since the plan) keeps its times untouched; one whose last delete was refused still gets its times back")
    func folderTimesWithRefusals() throws {
        let (f, plan, before) = try Self.folders()
        // tmp/d3: every file written to since the plan; tmp/d7: one of them (the workers refuse them).
        for i in 0..<8 { f.file("tmp/d3/old\(i)", size: 5, ageHours: 240) }
        f.file("tmp/d7/old0", size: 5, ageHours: 240)
        f.file("tmp/d7/old7", size: 5, ageHours: 240)
        f.age("tmp/d3", hours: 240)
        f.age("tmp/d7", hours: 240)
        let d3 = try f.status("tmp/d3"), d7 = try f.status("tmp/d7")
        let report = try f.apply(plan)
        #expect(report.counts[.delete] == 160 - 8 - 2)
        #expect(report.skipped.count == 10)
        #expect(f.exists("tmp/d7/old0") && f.exists("tmp/d7/old7") && !f.exists("tmp/d7/old3"))
        for (d, was) in [(3, d3), (7, d7), (12, before[12])] {
            let after = try f.status("tmp/d\(d)")
            #expect(after.modificationTimeNs == was.modificationTimeNs, "tmp/d\(d)")
            #expect(after.accessTimeNs == was.accessTimeNs, "tmp/d\(d)")
        }
        // Every change of the run is in its committed transaction: nothing is left to recover.
        #expect(try Recovery.run(holding: f.lock).nothingToDo)
    }

    @Test("a planned file gone before apply: its planned folder still goes once empty, whether its short run of deletes is made on the run's thread or on a worker",
          arguments: [64, 1])
    func vanishedChildFolderStillGoes(workersFrom: Int) throws {
        let f = try ApplyFixture()
        f.dir("tmp")
        f.dir("tmp/sub")
        f.file("tmp/sub/gone", size: 0)
        f.file("tmp/sub/here", size: 0)
        f.age("tmp/sub", hours: 240)
        let actions = [try f.action(.delete, "tmp/sub/gone"), try f.action(.delete, "tmp/sub/here"), try f.action(.delete, "tmp/sub")]
        // Removed since the plan (as a rolled-back run's roll-forward delete would be): the folder is smaller now.
        unlink(f.rootPath + "/tmp/sub/gone")
        var options = ApplyOptions(rootPath: f.rootPath)
        options.runThreadHelpsWorkers = false
        options.unlinkWorkersFrom = workersFrom
        let report = try f.apply(f.plan(actions), options)
        #expect(report.outcome("tmp/sub/gone") == .skipped("vanished since the plan"))
        #expect(report.outcome("tmp/sub/here") == .done)
        #expect(report.outcome("tmp/sub") == .done)
        #expect(try f.listing() == ["tmp"])
    }

    @Test("4,500 file deletes over 3 folders in one batch are recorded every 4,096: all made, counted once, every folder's times back")
    func longBatchRecordedInParts() throws {
        let f = try ApplyFixture()
        f.dir("tmp")
        var actions: [Action] = []
        for d in 0..<3 {
            f.dir("tmp/d\(d)")
            for i in 0..<1_500 {
                f.file("tmp/d\(d)/f\(i)", size: 0, ageHours: 240)
                actions.append(try f.action(.delete, "tmp/d\(d)/f\(i)"))
            }
            f.file("tmp/d\(d)/keep", size: 0, ageHours: 1)
            f.age("tmp/d\(d)", hours: 240)
        }
        let before = try (0..<3).map { try f.status("tmp/d\($0)") }
        let report = try f.apply(f.plan(actions, scanned: 5_000))
        #expect(report.counts[.delete] == 4_500)
        #expect(report.items.allSatisfy { $0.outcome == .done })
        #expect(try f.listing() == ["tmp", "tmp/d0", "tmp/d0/keep", "tmp/d1", "tmp/d1/keep", "tmp/d2", "tmp/d2/keep"])
        for d in 0..<3 {
            #expect(try f.status("tmp/d\(d)").modificationTimeNs == before[d].modificationTimeNs, "tmp/d\(d)")
        }
        #expect(try Recovery.run(holding: f.lock).nothingToDo)
    }
}
