// Roll-forward file deletes, checked and unlinked on worker threads while the run journals and hands over the
// next ones. A worker checks the file's identity in its folder's descriptor just before its unlinkat, as the run
// itself would; the run collects the outcomes (`finish`) before anything that must see the folder as the unlinks
// left it: a step in another folder, a step that is not such a delete, the end of the run. An empty file's
// unlink is the kernel's work under the folder's lock, so two workers overlap it with their checks and the run's
// own work; a file holding data waits on its blocks being freed, so four overlap those waits (Docs/performance.md).

final class UnlinkWorkers: @unchecked Sendable {
    // @unchecked: `queue`, `taken`, `running`, `failures`, `closed` and `workers` are touched only with `lock` held;
    // `staged` and `threads` only by the thread that owns the run.

    struct Job: Sendable {
        /// The step it carries out; failures are reported by it.
        var step: Int
        var path: RelativePath
        var parent: DirectoryHandle
        var name: FileName
        var identity: EntryIdentity
        var type: FileType?
    }

    /// Why a job's file was not unlinked.
    enum Unmade {
        /// The check found it changed since the plan (the reason).
        case refused(String)
        /// The check's own call failed.
        case checkFailed(FileSystemError)
        case unlinkFailed(FileSystemError)
        /// Past the run's deadline: left for the rollback to record as not reached.
        case pastDeadline
    }

    struct Failure {
        var step: Int
        var why: Unmade
    }

    /// Why the file is not what the plan saw (nil: it is), looked at just before its unlink.
    typealias Check = @Sendable (Job) throws(FileSystemError) -> String?

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

    /// Most threads that unlink files holding data.
    static let maximumThreads = 4
    /// Empty files: the unlinks of one folder take turns on its lock, but one worker's check (a lookup, which
    /// takes no lock) overlaps the other's unlink.
    static let threadsForEmptyFiles = 2

    private let lock = ConditionLock()
    private var queue: [Job] = []
    /// Jobs in `queue` a worker has taken.
    private var taken = 0
    /// Taken jobs not finished yet.
    private var running = 0
    private var failures: [Failure] = []
    private var closed = false
    /// Threads running `work`.
    private var workers = 0
    /// The run waits in `publish` for the workers to catch up.
    private var waitingToPublish = false

    /// Handed over in small batches: one lock and at most one wake-up per batch, not per file.
    private var staged: [Job] = []
    private static let batch = 16
    /// At most this many files wait for a worker: enough to keep them busy while the run journals its next
    /// group (4,096 deletes), few enough to keep the queue small.
    static let maximumWaiting = 4096
    private var threads: [CInterop.Thread] = []

    /// Checks and unlinks `job.name` in `job.parent` on a worker, with at least `workers` of them running.
    func submit(_ job: Job, workers: Int) {
        while threads.count < min(workers, Self.maximumThreads) {
            guard let thread = WorkerThreads.start({ [self] in work() }) else { break }
            threads.append(thread)
            lock.withLock { self.workers = threads.count }
        }
        staged.append(job)
        if threads.isEmpty {
            // No thread could be made: the caller's thread does the work.
            let failures = finishStaged()
            lock.withLock { self.failures += failures }
        } else if staged.count >= Self.batch {
            publish()
        }
    }

    /// Waits until every submitted unlink is made or failed; the failures, in step order.
    func finish() -> [Failure] {
        if threads.isEmpty { return takeFailures() }
        if !staged.isEmpty { publish() }
        lock.withLock {
            while taken < queue.count || running > 0 { lock.wait() }
            queue.removeAll(keepingCapacity: true)
            taken = 0
        }
        return takeFailures()
    }

    /// Ends the workers, once every unlink is finished.
    func stop() {
        _ = finish()
        lock.withLock {
            closed = true
            lock.broadcast()
        }
        for thread in threads { system_pthread_join(thread) }
        threads.removeAll()
    }

    private func takeFailures() -> [Failure] {
        let all = lock.withLock {
            defer { failures.removeAll() }
            return failures
        }
        return all.sorted { $0.step < $1.step }
    }

    private func publish() {
        lock.withLock {
            while queue.count - taken >= Self.maximumWaiting {
                waitingToPublish = true
                lock.wait()
            }
            waitingToPublish = false
            if taken >= 4096 {
                // Drop what the workers have taken: the queue holds only the jobs still waiting.
                queue.removeFirst(taken)
                taken = 0
            }
            queue += staged
            lock.broadcast()
        }
        staged.removeAll(keepingCapacity: true)
    }

    private func finishStaged() -> [Failure] {
        defer { staged.removeAll(keepingCapacity: true) }
        return staged.compactMap(carryOut)
    }

    private func carryOut(_ job: Job) -> Failure? {
        if let deadline, ContinuousClock.now >= deadline { return Failure(step: job.step, why: .pastDeadline) }
        do {
            if let reason = try check(job) { return Failure(step: job.step, why: .refused(reason)) }
        } catch {
            return Failure(step: job.step, why: .checkFailed(error))
        }
        willChange?(job.path)
        do {
            try job.parent.removeFile(job.name)
        } catch {
            return Failure(step: job.step, why: .unlinkFailed(error))
        }
        CrashPoint.changeMade()
        return nil
    }

    private func work() {
        var jobs: [Job] = []
        var failed: [Failure] = []
        while true {
            let more = lock.withLock {
                running -= jobs.count
                failures += failed
                // The run may be waiting in `finish` for the last of these.
                if !jobs.isEmpty && running == 0 && taken == queue.count { lock.broadcast() }
                jobs.removeAll(keepingCapacity: true)
                failed.removeAll(keepingCapacity: true)
                while taken == queue.count && !closed { lock.wait() }
                let available = queue.count - taken
                guard available > 0 else { return false }
                // Alone, take all there is; with others, a fair share, so files holding data spread out.
                let n = workers == 1 ? available : max(1, min(Self.batch, available / workers))
                jobs += queue[taken..<taken + n]
                taken += n
                running += n
                // There is room again for the run, which may be waiting in `publish`.
                if waitingToPublish { lock.broadcast() }
                return true
            }
            guard more else { return }
            for job in jobs {
                if let failure = carryOut(job) { failed.append(failure) }
            }
        }
    }
}
