// The run's file deletes made on worker threads (UnlinkWorkers), and all their bookkeeping: which steps are
// with the workers, when their outcomes are collected and how each is recorded. The run hands a checked file
// delete over here and goes on journaling; the outcomes are collected (`finish`) before anything that must see
// the tree as the unlinks left it: a step that is not such a delete, the trash folders being resolved, the end
// of the run. A batch spans folders (issue 31): a delete in the next folder is handed over while the workers
// still unlink in the previous one, so a tree of many small folders does not wait for the workers at every
// folder's end. What the next folder's steps need of the previous one is only its folder times, whose note
// waits for the workers (DirectoryTimes.notesWait). A group's run of fewer than `ApplyOptions.unlinkWorkersFrom`
// consecutive file deletes is carried out on the run's own thread as it is handed over, with the same check and
// the same bookkeeping: for a few deletes, waking the workers costs more than they save (Docs/performance.md).

@_spi(Layers) import StoragePolicyFileSystem

package final class BackgroundUnlinks {
    // Only the run's thread uses it, and no access overlaps another: the mutable state below skips the dynamic
    // exclusivity checks (four per handed-over delete: 1 % of a host's apply, Docs/performance.md).
    private let ledger: StepLedger
    private let directoryTimes: DirectoryTimes
    private let deadline: RunDeadline
    private let workers: UnlinkWorkers
    /// The steps with the workers, in step order, with their intents' ops (the intent itself is the
    /// transaction's: keeping a copy here retained and released its path once more a delete).
    @exclusivity(unchecked) private var inBackground: [(step: Int, op: Int)] = []
    /// The folder of the batch's first delete.
    @exclusivity(unchecked) private var firstFolder: RelativePath?
    /// The removal this run made in that folder just before the batch, if any (folder times name a made one).
    @exclusivity(unchecked) private var removalBeforeBatch: Int?
    /// The folder of the last delete handed over, and how many folders the batch has reached: each job holds its
    /// folder's descriptor until the batch is recorded.
    @exclusivity(unchecked) private var lastParent: DirectoryHandle?
    @exclusivity(unchecked) private var foldersInBatch = 0
    /// Most folders one batch reaches. A tree of one delete per folder otherwise held a descriptor per folder for
    /// up to 4,096 deletes, past RLIMIT_NOFILE's default 1,024 (EMFILE, and the run rolled back).
    static let foldersPerBatch = 256
    /// Fewest consecutive file deletes in a group handed to worker threads.
    private let workersFrom: Int
    /// The current group's steps whose file delete goes to worker threads (`choose`), as a flag per step from
    /// `chosenFrom` on (a set hashed every step's index twice); the others' are made as they are handed over.
    @exclusivity(unchecked) private var chosen: [Bool] = []
    @exclusivity(unchecked) private var chosenFrom = 0

    package init(ledger: StepLedger, directoryTimes: DirectoryTimes, options: ApplyOptions, rootStatus: FileStatus, deadline: RunDeadline) {
        self.ledger = ledger
        self.directoryTimes = directoryTimes
        self.deadline = deadline
        workersFrom = max(1, options.unlinkWorkersFrom)
        // A worker checks the file in its folder's descriptor just before the unlink, as the run would.
        workers = UnlinkWorkers(check: { job throws(FileSystemError) in
            StepVerifier.refusal(of: try job.parent.statusIfPresent(ofLastComponentOf: job.path), job.identity, type: job.type, root: rootStatus)
        }, willChange: options.willChange, deadline: options.deadline, runThreadHelps: options.runThreadHelpsWorkers)
    }

    /// Picks the group's file deletes (`fileDelete`: a roll-forward unlink, StepPreparer's `.fileDelete`) that go
    /// to worker threads: those in a run of at least `workersFrom` consecutive ones, in any folders. Any other
    /// step between ends a run: it waits for the workers anyway.
    func choose(_ prepared: [(i: Int, fileDelete: Bool)]) {
        chosen.removeAll(keepingCapacity: true)
        guard let first = prepared.first?.i, let last = prepared.last?.i else { return }
        // Prepared in step order: the flags span the group's first to last prepared step.
        chosenFrom = first
        chosen.append(contentsOf: repeatElement(false, count: last - first + 1))
        var start = 0
        for end in 0...prepared.count {
            if end < prepared.count, prepared[end].fileDelete { continue }
            if end - start >= workersFrom { for k in start..<end { chosen[prepared[k].i - first] = true } }
            start = end + 1
        }
    }

    private func isChosen(_ i: Int) -> Bool {
        let k = i - chosenFrom
        return k >= 0 && k < chosen.count && chosen[k]
    }

    /// No unlink is with the workers: the folders are as this run's steps left them.
    var isIdle: Bool { inBackground.isEmpty }

    /// Before step `step` is checked: anything but another file delete for the workers (`background`) sees the
    /// tree as the workers' unlinks left it.
    func barrier(before step: Step, background: Bool) throws {
        if !background { try finish() }
    }

    /// Hands step `i`'s checked file delete (its one intent, an unlink in `parent`) to the workers; its outcome
    /// is recorded by `finish`. One not chosen for a worker is made here and now, and recorded at once when no
    /// worker has one in flight: the run then goes on exactly as after a step made here.
    func hand(_ i: Int, _ step: Step, intent: Intent, parent: DirectoryHandle) throws {
        let threads = !isChosen(i) ? 0 : step.action.bytes > 0 ? UnlinkWorkers.maximumThreads : UnlinkWorkers.threadsForEmptyFiles
        workers.submit(.init(step: i, path: step.action.path, parent: parent, identity: step.action.identity!, type: step.action.type),
                       workers: threads)
        ledger.transaction.unlinkingElsewhere(intent)
        ledger.touch(intent.change)
        if inBackground.isEmpty {
            firstFolder = step.action.path.parent
            removalBeforeBatch = directoryTimes.pendingStep
        }
        inBackground.append((i, intent.op))
        if parent !== lastParent { (lastParent, foldersInBatch) = (parent, foldersInBatch + 1) }
        directoryTimes.didChange(step.action, step: i, in: ledger.transaction.directories)
        // While a delete may still be in flight on a worker, a folder's times wait: the run may move on to the
        // next folder before the workers are done with this one. A folder they are done with is noted as soon as
        // the run hears so (at each hand-over of a batch of jobs); after a failure, only at `finish`, which
        // knows which removal each folder's times then belong to. With nothing in flight (a short run, made
        // here) a folder is noted on moving on, as for any step made here.
        let settled = workers.finishedBelow
        if !workers.failedSoFar { directoryTimes.noteFinished(before: settled, in: ledger.transaction.directories) }
        directoryTimes.notesWait = settled != Int.max || workers.failedSoFar
        if threads == 0 && settled == Int.max { try finish() }
        // A batch may span a whole plan of file deletes: recorded every 4,096, or every 256 folders, so what waits
        // to be recorded (how long a folder's times may wait, how many folder descriptors its jobs hold) stays
        // bounded, for one wait per 4,096 deletes or 256 folders.
        else if inBackground.count >= UnlinkWorkers.maximumWaiting || foldersInBatch >= Self.foldersPerBatch { try finish() }
    }

    /// Waits for the workers' unlinks and records each in step order: made ones first (a failure below may stop
    /// the run, and its rollback must know what was made), then each failure as the step would have met it here.
    package func finish() throws {
        guard !inBackground.isEmpty else { return }
        let failures = workers.finish()
        let batch = inBackground
        inBackground.removeAll(keepingCapacity: true)
        (lastParent, foldersInBatch) = (nil, 0)
        // Both are in step order: one pass pairs each failure with its intent's op.
        var unmade: [(step: Int, why: UnlinkWorkers.Unmade, op: Int)] = []
        for (i, op) in batch {
            if unmade.count < failures.count && failures[unmade.count].step == i {
                unmade.append((i, failures[unmade.count].why, op))
                continue
            }
            ledger.transaction.madeElsewhere(op: op)
            ledger.done(i)
        }
        noteFolders(batch, failed: unmade.map(\.step))
        var pastDeadline = false
        for (i, why, op) in unmade {
            switch why {
            case .refused(let reason): ledger.skip(i, reason)
            case .checkFailed(let error): try ledger.refuse(i, try StepVerifier.refusal(checking: error))
            case .unlinkFailed(let error):
                // Every handed-over intent was journaled by this transaction.
                guard let intent = ledger.transaction.intent(op: op) else { preconditionFailure("intent \(op) not journaled") }
                try ledger.settle(error, of: i, after: [], intent)
            case .pastDeadline: pastDeadline = true
            }
        }
        // As after a step made here: a run past its budget stops.
        if pastDeadline || deadline.hasPassed { throw RunDeadline.Exceeded() }
    }

    /// The folders' times, now that the unlinks are made: each folder noted while they were in flight, and the
    /// last one, still pending. A folder's `times` intent belongs to the last removal made there, so a note of a
    /// failed step moves to the last made one in its folder (or the removal made there before the batch), or
    /// to none.
    private func noteFolders(_ batch: [(step: Int, op: Int)], failed: [Int]) {
        let directories = ledger.transaction.directories
        guard !failed.isEmpty else { return directoryTimes.noteWaiting(in: directories) }
        let failedSteps = Set(failed)
        var lastMade: [RelativePath: Int] = [:]
        if let firstFolder, let removalBeforeBatch { lastMade[firstFolder] = removalBeforeBatch }
        for (i, _) in batch where !failedSteps.contains(i) { lastMade[ledger.steps[i].action.path.parent] = i }
        directoryTimes.noteWaiting(in: directories) { folder, step in failedSteps.contains(step) ? lastMade[folder] : step }
        if let last = batch.last?.step, failedSteps.contains(last) {
            directoryTimes.lastRemovalsFailed(lastMade: lastMade[ledger.steps[last].action.path.parent])
        }
    }

    /// Ends the workers once their unlinks are finished (recorded or not: `finish` first to record them).
    func stop() { workers.stop() }
}
