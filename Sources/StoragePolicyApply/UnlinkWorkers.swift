// Roll-forward file deletes, checked and unlinked on worker threads while the run journals and hands over the
// next ones. A worker checks the file's identity in its folder's descriptor just before its unlinkat, as the run
// itself would; the run collects the outcomes (`finish`) before anything that must see the folder as the unlinks
// left it: a step that is not such a delete, the trash folders being resolved, the end of the run. An empty
// file's unlink is the kernel's work under its folder's lock, so two workers take whole folders' runs of jobs
// (`share`) and unlink side by side in different folders; a file holding data waits on its blocks being freed,
// so four overlap those waits (Docs/performance.md). When the run has to wait for them (a full queue, `finish`),
// its thread takes shares of the queue itself until none is left to take, then waits only for those in flight.

@_spi(Layers) import StoragePolicyFileSystem

package final class UnlinkWorkers {
    // Not Sendable, and need not be: only the thread that owns the run calls it. What the workers share with it
    // is `Shared`, whose mutable state lives in a ConditionLocked. So the run's own state skips the dynamic
    // exclusivity checks (`@exclusivity(unchecked)`): no access to it overlaps another.

    package struct Job: Sendable {
        /// The step it carries out; failures are reported by it.
        package var step: Int
        package var path: RelativePath
        var parent: DirectoryHandle
        var identity: EntryIdentity
        package var type: FileType?
    }

    /// Why a job's file was not unlinked.
    package enum Unmade: Sendable {
        /// The check found it changed since the plan (the reason).
        case refused(String)
        /// The check's own call failed.
        case checkFailed(FileSystemError)
        case unlinkFailed(FileSystemError)
        /// Past the run's deadline: left for the rollback to record as not reached.
        case pastDeadline
    }

    package struct Failure: Sendable {
        package var step: Int
        package var why: Unmade
    }

    /// Why the file `name` (the job's last component) is not what the plan saw (nil: it is), looked at just
    /// before its unlink.
    package typealias Check = @Sendable (Job) throws(FileSystemError) -> String?

    /// Most threads that unlink files holding data.
    static let maximumThreads = 4
    /// Empty files: the unlinks of one folder take turns on its lock, but one worker's check (a lookup, which
    /// takes no lock) overlaps the other's unlink.
    static let threadsForEmptyFiles = 2
    /// Handed over in small batches: one lock and at most one wake-up per batch, not per file.
    private static let batch = 16
    /// At most this many files wait for a worker: enough to keep them busy while the run journals its next
    /// group (4,096 deletes), few enough to keep the queue small.
    static let maximumWaiting = 4096

    private let shared: Shared
    /// Jobs not yet handed to the workers (the run's thread only).
    @exclusivity(unchecked) private var staged: [Job] = []
    /// As of the last hand-over: every job of a step below this one is finished (Int.max: every job), and
    /// whether one of them failed. The run's thread only; lets it note a folder the workers are done with
    /// while they go on in later ones (BackgroundUnlinks).
    var finishedBelow: Int { min(finishedBelowPublished, staged.first?.step ?? Int.max) }
    @exclusivity(unchecked) private(set) var failedSoFar = false
    /// `finishedBelow` of the jobs handed over, as the workers last said.
    @exclusivity(unchecked) private var finishedBelowPublished = Int.max
    /// One per worker borrowed from the pool: each ends once `stop` closes the queue.
    @exclusivity(unchecked) private var workers: [WorkerPool.Completion] = []

    /// Whether the run's thread takes shares itself rather than waiting (`finish`, a full queue).
    private let runThreadHelps: Bool

    package init(check: @escaping Check, willChange: (@Sendable (RelativePath) -> Void)?, deadline: ContinuousClock.Instant?,
                 runThreadHelps: Bool = true) {
        shared = Shared(check: check, willChange: willChange, deadline: deadline)
        self.runThreadHelps = runThreadHelps
    }

    /// Checks and unlinks `job.name` in `job.parent` on a worker, with at least `workers` of them running;
    /// with `workers` 0, here and now (a short run of deletes, not worth a hand-off), recorded as a worker's.
    /// The job is consumed: moved into the queue, where a borrowed one was copied and the copy destroyed (its
    /// path and folder retained and released once more a delete).
    func submit(_ job: consuming Job, workers wanted: Int) {
        if wanted == 0 {
            if let failure = shared.carryOut(job) {
                failedSoFar = true
                shared.state.withLock { $0.failures.append(failure) }
            }
            return
        }
        while workers.count < min(wanted, Self.maximumThreads) {
            let shared = self.shared
            guard let worker = WorkerPool.shared.start({ shared.work() }) else { break }
            workers.append(worker)
            let count = workers.count
            shared.state.withLock { $0.workers = count }
        }
        staged.append(consume job)
        if workers.isEmpty {
            // No thread could be had: the caller's thread does the work.
            let failures = staged.compactMap(shared.carryOut)
            staged.removeAll(keepingCapacity: true)
            if !failures.isEmpty {
                failedSoFar = true
                shared.state.withLock { $0.failures += failures }
            }
        } else if staged.count >= Self.batch {
            publish()
        }
    }

    /// Most jobs of one folder a worker takes at once when the queue holds more folders after it.
    static let folderRun = 512

    /// How many jobs from `start` a worker takes. Alone: all there is. With others: the jobs of the first one's
    /// folder, when another folder's jobs follow them in the queue, so workers unlink in different folders. An
    /// unlink holds its folder's lock for the whole removal of the entry, and two workers in one folder of empty
    /// files took turns on it and spun on it (`rwsem_spin_on_owner`, the largest symbol of a container's apply:
    /// Docs/performance.md). A queue of one folder only (a flat `tmp/`, or the rest of one not yet followed by
    /// the next) is shared fairly, as files holding data wait on their blocks being freed outside that lock.
    static func share(of queue: [Job], from start: Int, available: Int, workers: Int) -> Int {
        if workers <= 1 { return available }
        // One folder may come through several handles (the directory cache is cleared each group): by path.
        let parent = queue[start].parent
        let limit = min(available, folderRun)
        var n = 1
        while n < limit, queue[start + n].parent === parent || queue[start + n].parent.path == parent.path { n += 1 }
        if n < available { return n }
        return max(1, min(batch, available / workers))
    }

    /// Waits until every submitted unlink is made or failed; the failures, in step order.
    package func finish() -> [Failure] {
        if workers.isEmpty {
            failedSoFar = false
            return takeFailures()
        }
        if !staged.isEmpty { publish() }
        // The run's thread unlinks what is left to take rather than sleeping until the workers have: asleep, it
        // left its core idle while both workers shared the other, which the scheduler took up to 12 ms to
        // notice (perf sched, Docs/performance.md). Then it waits for the shares still in flight.
        if runThreadHelps { shared.help(while: { _ in true }) }
        shared.state.withLock(when: { $0.taken == $0.queue.count && $0.running == 0 }) { state in
            state.queue.removeAll(keepingCapacity: true)
            state.taken = 0
        }
        (finishedBelowPublished, failedSoFar) = (Int.max, false)
        return takeFailures()
    }

    /// Ends the workers, once every unlink is finished; their threads go back to the pool.
    func stop() {
        _ = finish()
        shared.state.withLock(wake: .all) { $0.closed = true }
        for worker in workers { worker.wait() }
        workers.removeAll()
    }

    private func takeFailures() -> [Failure] {
        let all = shared.state.withLock { state in
            defer { state.failures.removeAll() }
            return state.failures
        }
        return all.sorted { $0.step < $1.step }
    }

    private func publish() {
        // A full queue: the run's thread takes shares itself until there is room, as in `finish`.
        if runThreadHelps { shared.help(while: { $0.queue.count - $0.taken >= Self.maximumWaiting }) }
        // Told first, so a worker that takes jobs meanwhile wakes the run to look again.
        shared.state.withLock { state in
            if state.queue.count - state.taken >= Self.maximumWaiting { state.waitingToPublish = true }
        }
        let staged = self.staged
        let progress = shared.state.withLock(when: { $0.queue.count - $0.taken < Self.maximumWaiting }, wake: .all) { state in
            state.waitingToPublish = false
            if state.taken >= 4096 {
                // Drop what the workers have taken: the queue holds only the jobs still waiting.
                state.queue.removeFirst(state.taken)
                state.taken = 0
            }
            state.queue += staged
            // Jobs are queued in step order and taken in runs from the front: the first unfinished one is the
            // first of a run still with a worker, or else the first not taken.
            let untaken = state.taken < state.queue.count ? state.queue[state.taken].step : Int.max
            return (min(state.inFlight.min() ?? Int.max, untaken), !state.failures.isEmpty)
        }
        (finishedBelowPublished, failedSoFar) = progress
        self.staged.removeAll(keepingCapacity: true)
    }

    /// What the run and its workers share: the queue and its counters, behind one lock and condition.
    private final class Shared: Sendable {
        struct State {
            var queue: [Job] = []
            /// Jobs in `queue` a worker has taken.
            var taken = 0
            /// Taken jobs not finished yet.
            var running = 0
            var failures: [Failure] = []
            /// The first step of each run of jobs a worker has taken and not finished.
            var inFlight: [Int] = []
            var closed = false
            /// Workers running `work`.
            var workers = 0
            /// The run waits in `publish` for the workers to catch up.
            var waitingToPublish = false
        }

        let state = ConditionLocked(State())
        private let check: Check
        /// Runs between a job's check and its unlink (a test seam: ApplyOptions.willChange).
        private let willChange: (@Sendable (RelativePath) -> Void)?
        /// No unlink starts after it (--max-runtime).
        private let deadline: ContinuousClock.Instant?

        init(check: @escaping Check, willChange: (@Sendable (RelativePath) -> Void)?, deadline: ContinuousClock.Instant?) {
            self.check = check
            self.willChange = willChange
            self.deadline = deadline
        }

        func carryOut(_ job: Job) -> Failure? {
            if let deadline, ContinuousClock.now >= deadline { return Failure(step: job.step, why: .pastDeadline) }
            // The name is the path's last component, cut in place by each call (DirectoryHandle): neither the run's
            // thread nor the worker makes an array of it.
            do {
                if let reason = try check(job) { return Failure(step: job.step, why: .refused(reason)) }
            } catch {
                return Failure(step: job.step, why: .checkFailed(error))
            }
            willChange?(job.path)
            do {
                try job.parent.removeFile(lastComponentOf: job.path)
            } catch {
                return Failure(step: job.step, why: .unlinkFailed(error))
            }
            CrashPoint.changeMade()
            return nil
        }

        /// A worker's life: take a share of the queue, check and unlink it, report, until the queue is closed.
        func work() {
            var jobs: [Job] = []
            var failed: [Failure] = []
            while true {
                let (more, roomMade) = state.withLock(when: { $0.taken < $0.queue.count || $0.closed }) { take(&$0, into: &jobs) }
                // There is room again for the run, which may be waiting in `publish`.
                if roomMade { state.withLock(wake: .all) { _ in } }
                guard more else { return }
                carryOut(&jobs, failed: &failed)
            }
        }

        /// The run's thread does shares of the queue itself, as a worker would, while `needed` holds of the queue
        /// and some job is left to take; it never waits for one.
        func help(while needed: (State) -> Bool) {
            var jobs: [Job] = []
            var failed: [Failure] = []
            while state.withLock({ state in needed(state) ? take(&state, into: &jobs).more : false }) {
                carryOut(&jobs, failed: &failed)
            }
        }

        /// Takes the next share of the queue into `jobs` (none when none is left to take); `roomMade` when the
        /// run waits in `publish` for room.
        private func take(_ state: inout State, into jobs: inout [Job]) -> (more: Bool, roomMade: Bool) {
            let available = state.queue.count - state.taken
            guard available > 0 else { return (false, false) }
            let n = UnlinkWorkers.share(of: state.queue, from: state.taken, available: available, workers: state.workers)
            jobs += state.queue[state.taken..<state.taken + n]
            state.inFlight.append(state.queue[state.taken].step)
            state.taken += n
            state.running += n
            return (true, state.waitingToPublish)
        }

        /// Checks and unlinks the jobs taken, then reports them (and wakes the run when they were the last).
        private func carryOut(_ jobs: inout [Job], failed: inout [Failure]) {
            // Read in place: `for job in jobs` copied each job out (its path and folder retained) and
            // destroyed the copy.
            jobs.withUnsafeBufferPointer { taken in
                for k in taken.indices {
                    if let failure = carryOut(taken[k]) { failed.append(failure) }
                }
            }
            let caughtUp = state.withLock { state -> Bool in
                state.running -= jobs.count
                state.failures += failed
                if let k = state.inFlight.firstIndex(of: jobs[0].step) { state.inFlight.remove(at: k) }
                return state.running == 0 && state.taken == state.queue.count
            }
            // The run may be waiting in `finish` for the last of these.
            if caughtUp { state.withLock(wake: .all) { _ in } }
            jobs.removeAll(keepingCapacity: true)
            failed.removeAll(keepingCapacity: true)
        }
    }
}
