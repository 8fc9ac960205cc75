// The unlink workers on the shared WorkerPool: every handed-over file is checked and unlinked or reported,
// failures come back in step order, a full queue makes the run wait instead of growing, and a run past its
// deadline unlinks nothing more. In process, on a small scratch root.

import Testing
import Synchronization
import TreeFixture
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyPlan
@testable import StoragePolicyApply

@Suite("Unlink workers") struct UnlinkWorkersTests {
    private static func workers(_ f: ApplyFixture, deadline: ContinuousClock.Instant? = nil) -> UnlinkWorkers {
        let root = f.lock.state.rootStatus
        return UnlinkWorkers(check: { job throws(FileSystemError) in
            StepVerifier.refusal(of: try job.parent.statusIfPresent(ofLastComponentOf: job.path), job.identity, type: job.type, root: root)
        }, willChange: nil, deadline: deadline)
    }

    private static func job(_ f: ApplyFixture, _ step: Int, _ name: String, identity: EntryIdentity) -> UnlinkWorkers.Job {
        UnlinkWorkers.Job(step: step, path: RelativePath(name)!, parent: f.root, identity: identity, type: .regular)
    }

    @Test("more files than may wait are all unlinked; the changed and the vanished come back in step order")
    func manyFilesAndFailuresInOrder() throws {
        let f = try ApplyFixture()
        let count = UnlinkWorkers.maximumWaiting + 600
        var identities: [EntryIdentity] = []
        for i in 0..<count {
            f.file("f\(i)", size: 0)
            identities.append(try f.status("f\(i)").identity)
        }
        // Step 7 was replaced since the plan (another size), step 4000 vanished: both are kept and reported.
        f.file("f7", size: 3)
        try f.root.removeFile(FileName(unchecked: Array("f4000".utf8)))
        let workers = Self.workers(f)
        for i in 0..<count {
            workers.submit(Self.job(f, i, "f\(i)", identity: identities[i]), workers: UnlinkWorkers.maximumThreads)
        }
        let failures = workers.finish()
        workers.stop()
        #expect(failures.map(\.step) == [7, 4000])
        if case .refused(let why) = failures.first?.why {
            #expect(why.hasPrefix("modified since the plan (size 0 -> 3)"))
        } else {
            Issue.record("step 7: \(String(describing: failures.first?.why))")
        }
        if case .refused(let why) = failures.last?.why { #expect(why == "vanished since the plan") } else {
            Issue.record("step 4000: \(String(describing: failures.last?.why))")
        }
        #expect(f.exists("f7"))
        #expect((0..<count).filter { $0 != 7 && f.exists("f\($0)") }.isEmpty)
    }

    /// Counts the jobs the test's own thread carried out.
    private final class ByRunThread: Sendable {
        let count = Atomic<Int>(0)
        /// A worker waited its 5 s out: the others then go on at once (a failing run takes 5 s, not 5 s a job).
        let waitedOut = Atomic<Bool>(false)
    }

    @Test("while the workers are busy, finish's thread unlinks the jobs left to take itself, then waits for the rest")
    func runThreadHelps() throws {
        let f = try ApplyFixture()
        var identities: [EntryIdentity] = []
        for i in 0..<200 {
            f.file("h\(i)", size: 0)
            identities.append(try f.status("h\(i)").identity)
        }
        let root = f.lock.state.rootStatus
        let runThread = pthread_self()
        let byRun = ByRunThread()
        // A worker's first check waits (5 s at most) until the run's thread has carried out a job: a run that
        // slept in finish instead would leave every job to the held workers, and none to itself.
        let workers = UnlinkWorkers(check: { job throws(FileSystemError) in
            if pthread_equal(pthread_self(), runThread) != 0 {
                byRun.count.add(1, ordering: .relaxed)
            } else {
                let clock = ContinuousClock(), until = clock.now + .seconds(5)
                while byRun.count.load(ordering: .relaxed) == 0 && !byRun.waitedOut.load(ordering: .relaxed) {
                    if clock.now >= until { byRun.waitedOut.store(true, ordering: .relaxed) }
                    usleep(1_000)
                }
            }
            return StepVerifier.refusal(of: try job.parent.statusIfPresent(ofLastComponentOf: job.path), job.identity, type: job.type, root: root)
        }, willChange: nil, deadline: nil)
        for i in 0..<200 { workers.submit(Self.job(f, i, "h\(i)", identity: identities[i]), workers: UnlinkWorkers.threadsForEmptyFiles) }
        let failures = workers.finish()
        workers.stop()
        #expect(failures.isEmpty)
        #expect(byRun.count.load(ordering: .relaxed) > 0)
        #expect((0..<200).filter { f.exists("h\($0)") }.isEmpty)
    }

    @Test("finish between batches, and again after stop, reports each batch; three runs in a row each unlink all they were handed")
    func finishBetweenBatches() throws {
        let f = try ApplyFixture()
        for round in 0..<3 {
            var jobs: [UnlinkWorkers.Job] = []
            for i in 0..<40 {
                f.file("r\(round)-\(i)", size: 1)
                jobs.append(Self.job(f, i, "r\(round)-\(i)", identity: try f.status("r\(round)-\(i)").identity))
            }
            let workers = Self.workers(f)
            for job in jobs.prefix(20) { workers.submit(job, workers: UnlinkWorkers.threadsForEmptyFiles) }
            #expect(workers.finish().isEmpty)
            #expect(!f.exists("r\(round)-0") && f.exists("r\(round)-20"))
            for job in jobs.dropFirst(20) { workers.submit(job, workers: UnlinkWorkers.threadsForEmptyFiles) }
            #expect(workers.finish().isEmpty)
            workers.stop()
            #expect(workers.finish().isEmpty)
            #expect((0..<40).filter { f.exists("r\(round)-\($0)") }.isEmpty)
        }
    }

    @Test("with others, a worker takes its first job's folder when another folder follows; one folder alone is shared")
    func sharesByFolder() throws {
        let f = try ApplyFixture()
        f.dir("a")
        f.dir("b")
        let a = try f.root.openDirectory(FileName(unchecked: Array("a".utf8)))
        let b = try f.root.openDirectory(FileName(unchecked: Array("b".utf8)))
        let identity = try f.status("a").identity
        func jobs(_ parent: DirectoryHandle, _ count: Int, from first: Int) -> [UnlinkWorkers.Job] {
            (first..<first + count).map { UnlinkWorkers.Job(step: $0, path: RelativePath("x/f\($0)")!, parent: parent, identity: identity, type: .regular) }
        }
        // 70 jobs in a, then 30 in b: the first worker takes a's 70, the next b's 30 (the rest of the queue).
        let queue = jobs(a, 70, from: 0) + jobs(b, 30, from: 70)
        #expect(UnlinkWorkers.share(of: queue, from: 0, available: 100, workers: 2) == 70)
        #expect(UnlinkWorkers.share(of: queue, from: 70, available: 30, workers: 2) == 15)
        #expect(UnlinkWorkers.share(of: queue, from: 60, available: 40, workers: 2) == 10)
        // Alone, all there is; one folder only, a fair share of at most 16; a folder longer than a run, one run.
        #expect(UnlinkWorkers.share(of: queue, from: 0, available: 100, workers: 1) == 100)
        #expect(UnlinkWorkers.share(of: queue, from: 0, available: 20, workers: 2) == 10)
        // A folder reached through a second handle (a new group's directory cache) is still the same folder.
        let again = try f.root.openDirectory(FileName(unchecked: Array("a".utf8)))
        #expect(UnlinkWorkers.share(of: jobs(a, 10, from: 0) + jobs(again, 10, from: 10) + jobs(b, 4, from: 20), from: 0, available: 24, workers: 2) == 20)
        let long = jobs(a, UnlinkWorkers.folderRun + 10, from: 0) + jobs(b, 5, from: UnlinkWorkers.folderRun + 10)
        #expect(UnlinkWorkers.share(of: long, from: 0, available: long.count, workers: 2) == UnlinkWorkers.folderRun)
        #expect(UnlinkWorkers.share(of: long, from: 0, available: long.count, workers: 4) == UnlinkWorkers.folderRun)
    }

    @Test("past the deadline nothing more is unlinked: every job is reported past the deadline")
    func pastDeadline() throws {
        let f = try ApplyFixture()
        let workers = Self.workers(f, deadline: .now - .seconds(1))
        for i in 0..<50 {
            f.file("d\(i)", size: 0)
            workers.submit(Self.job(f, i, "d\(i)", identity: try f.status("d\(i)").identity), workers: 2)
        }
        let failures = workers.finish()
        workers.stop()
        #expect(failures.map(\.step) == Array(0..<50))
        #expect(failures.allSatisfy { if case .pastDeadline = $0.why { true } else { false } })
        #expect((0..<50).allSatisfy { f.exists("d\($0)") })
    }
}

@Suite("Step groups") struct StepGroupsTests {
    @Test("each group is twice the last, at most 16 times the first, and never spans two phases")
    func groups() {
        func step(_ kind: Action.Kind, _ p: String) -> Step {
            Step(action: Action(kind: kind, path: RelativePath(p)!, rule: "r", reason: ""), verb: .delete)
        }
        let steps = (0..<3).map { step(.mkdir, "m\($0)") } + (0..<200).map { step(.delete, "d\($0)") }
        var groups = StepGroups(firstSize: 2)
        var seen: [Range<Int>] = []
        while let group = groups.next(of: steps) { seen.append(group) }
        // 2, then the last mkdir alone (a phase ends), then 8, 16, 32, 32, ... deletes.
        #expect(seen.prefix(6) == [0..<2, 2..<3, 3..<11, 11..<27, 27..<59, 59..<91])
        #expect(seen.last?.upperBound == steps.count)
        #expect(seen.dropFirst(4).allSatisfy { $0.count <= 32 })
    }
}
