// The run's file deletes made on worker threads (UnlinkWorkers), and all their bookkeeping: which steps are
// with the workers, the folder they are in, when their outcomes are collected and how each is recorded. The
// run hands a checked file delete over here and goes on journaling; the outcomes are collected (`finish`)
// before anything that must see the folder as the unlinks left it: a step in another folder, a step that is not
// such a delete, the trash folders being resolved, the end of the run.

import StoragePolicyFileSystem

package final class BackgroundUnlinks {
    private let ledger: StepLedger
    private let directoryTimes: DirectoryTimes
    private let deadline: RunDeadline
    private let workers: UnlinkWorkers
    /// The steps with the workers, in step order, with their intents.
    private var inBackground: [(step: Int, intent: Intent)] = []
    /// The folder they delete from.
    private var folder: RelativePath?
    /// The removal this run made in that folder just before the batch, if any (folder times name a made one).
    private var removalBeforeBatch: Int?

    package init(ledger: StepLedger, directoryTimes: DirectoryTimes, options: ApplyOptions, rootStatus: FileStatus, deadline: RunDeadline) {
        self.ledger = ledger
        self.directoryTimes = directoryTimes
        self.deadline = deadline
        // A worker checks the file in its folder's descriptor just before the unlink, as the run would.
        workers = UnlinkWorkers(check: { job throws(FileSystemError) in
            StepVerifier.refusal(of: try job.parent.statusIfPresent(of: job.name), job.identity, type: job.type, root: rootStatus)
        }, willChange: options.willChange, deadline: options.deadline)
    }

    /// No unlink is with the workers: the folders are as this run's steps left them.
    var isIdle: Bool { inBackground.isEmpty }

    /// Before step `step` is checked: anything but another file delete in the same folder (`background`: it
    /// would go to the workers) sees the folder as the workers' unlinks left it.
    func barrier(before step: Step, background: Bool) throws {
        if let folder, !(background && step.action.path.isChild(of: folder)) {
            try finish()
        }
    }

    /// Hands step `i`'s checked file delete (its one intent, an unlink in `parent`) to the workers; its outcome
    /// is recorded by `finish`.
    func hand(_ i: Int, _ step: Step, intent: Intent, parent: DirectoryHandle) {
        let threads = step.action.bytes > 0 ? UnlinkWorkers.maximumThreads : UnlinkWorkers.threadsForEmptyFiles
        workers.submit(.init(step: i, path: step.action.path, parent: parent, name: step.action.path.lastComponent!,
                             identity: step.action.identity!, type: step.action.type), workers: threads)
        ledger.transaction.unlinkingElsewhere(intent)
        ledger.touch(intent.change)
        if folder == nil {
            folder = step.action.path.parent
            removalBeforeBatch = directoryTimes.pendingStep
        }
        inBackground.append((i, intent))
        directoryTimes.didChange(step.action, step: i, in: ledger.transaction.directories)
    }

    /// Waits for the workers' unlinks and records each in step order: made ones first (a failure below may stop
    /// the run, and its rollback must know what was made), then each failure as the step would have met it here.
    package func finish() throws {
        guard !inBackground.isEmpty else { return }
        let failures = workers.finish()
        let batch = inBackground
        inBackground.removeAll(keepingCapacity: true)
        folder = nil
        // Both are in step order: one pass pairs each failure with its intent.
        var unmade: [(step: Int, why: UnlinkWorkers.Unmade, intent: Intent)] = []
        var lastMade = removalBeforeBatch
        for (i, intent) in batch {
            if unmade.count < failures.count && failures[unmade.count].step == i {
                unmade.append((i, failures[unmade.count].why, intent))
                continue
            }
            ledger.transaction.madeElsewhere(intent)
            ledger.done(i)
            lastMade = i
        }
        if let last = failures.last, last.step == batch.last!.step { directoryTimes.lastRemovalsFailed(lastMade: lastMade) }
        var pastDeadline = false
        for (i, why, intent) in unmade {
            switch why {
            case .refused(let reason): ledger.skip(i, reason)
            case .checkFailed(let error): try ledger.refuse(i, try StepVerifier.refusal(checking: error))
            case .unlinkFailed(let error): try ledger.settle(error, of: i, after: [], intent)
            case .pastDeadline: pastDeadline = true
            }
        }
        // As after a step made here: a run past its budget stops.
        if pastDeadline || deadline.hasPassed { throw RunDeadline.Exceeded() }
    }

    /// Ends the workers once their unlinks are finished (recorded or not: `finish` first to record them).
    func stop() { workers.stop() }
}
