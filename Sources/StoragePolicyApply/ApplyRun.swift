// Carries out a list of steps as one transaction, the protocol of Docs/journal.md: the begin record (making
// room first on a full disk), then per group every step is prepared and its intents journaled, one fsync makes
// them durable, and step by step the target is verified just before its changes are made; then the folder
// times, the commit, the purge and the end record. Never touches a target that changed since the plan. An error
// on one entry skips that step (undoing what it already did) and the steps that depend on it; an error about the
// run (I/O, ENOSPC, the journal, the time budget) rolls everything back.
// The parts: StepPreparer (a step in, planned changes out), StepVerifier (the checks), BackgroundUnlinks (file
// deletes on workers), StepLedger (the steps and their outcomes). This file is the order they run in.

@_spi(Layers) import StoragePolicyEvaluation
@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyPlan

package final class ApplyRun {
    private let options: ApplyOptions
    private let deadline: RunDeadline
    private let transaction: Transaction
    private let ledger: StepLedger
    private let preparer: StepPreparer
    private let verifier: StepVerifier
    private let unlinks: BackgroundUnlinks
    private let directoryTimes: DirectoryTimes
    /// The file deletes made before the journal could begin on a full disk (a first run), if any.
    private let roomMade: RoomBeforeJournal?
    private let freedBeforeJournal: Set<Int>
    /// A run of deletes only: folders it has left for good get their times back between groups.
    private let restoresAsItGoes: Bool

    /// Runs `steps` as one transaction, under `lock`: the report, or why the run stopped (rolled back).
    package static func run(_ steps: [Step], lock: ApplyLock, options: ApplyOptions, metadata: Transaction.Metadata,
                            planTimeNs: Int64?, progress: ((Int, Int) -> Void)? = nil) throws(ApplyError) -> ApplyReport {
        try run(StepList(steps), lock: lock, options: options, metadata: metadata, planTimeNs: planTimeNs, progress: progress)
    }

    /// Runs `steps` (a plan's: its actions, not copies of them) as one transaction, under `lock`.
    /// `firstInUseReading`: the run's first in-use reading, already started (StepVerifier.startFirstReading).
    package static func run(_ steps: StepList, lock: ApplyLock, options: ApplyOptions,
                    metadata: Transaction.Metadata, planTimeNs: Int64?, firstInUseReading: WorkerPool.Pending<InUseCheck>? = nil,
                    progress: ((Int, Int) -> Void)? = nil) throws(ApplyError) -> ApplyReport {
        guard !steps.isEmpty else { return ApplyReport() }
        // When trashed items are dated: read once, as the run is set up.
        let nowSeconds = WallClock.nowNs() / 1_000_000_000
        let journal: Journal, begun: (Transaction, RoomBeforeJournal?)
        do {
            journal = try lock.state.openJournal()
            begun = try RoomBeforeJournal.begin(metadata, steps: steps, lock: lock, options: options, journal: journal)
        } catch { throw .failed(error) }
        let run = ApplyRun(steps, lock: lock, options: options, kind: metadata.kind, planTimeNs: planTimeNs,
                           transaction: begun.0, room: begun.1, nowSeconds: nowSeconds, firstInUseReading: firstInUseReading)
        return try run.run(journal: journal, progress: progress)
    }

    private init(_ steps: StepList, lock: ApplyLock, options: ApplyOptions, kind: TransactionKind, planTimeNs: Int64?,
                 transaction: Transaction, room: RoomBeforeJournal?, nowSeconds: Int64, firstInUseReading: WorkerPool.Pending<InUseCheck>?) {
        self.options = options
        self.transaction = transaction
        roomMade = room
        freedBeforeJournal = Set(room?.done ?? [])
        deadline = RunDeadline(options)
        directoryTimes = DirectoryTimes(targets: options.folderTimes)
        restoresAsItGoes = steps.deletesOnly
        ledger = StepLedger(steps: steps, transaction: transaction, allOrNothing: options.allOrNothing)
        preparer = StepPreparer(ledger: ledger, options: options, kind: kind, nowSeconds: nowSeconds)
        verifier = StepVerifier(ledger: ledger, trash: preparer.trash, options: options, lock: lock, planTimeNs: planTimeNs,
                                firstReading: firstInUseReading)
        verifier.preparer = preparer
        unlinks = BackgroundUnlinks(ledger: ledger, directoryTimes: directoryTimes, options: options,
                                    rootStatus: lock.state.rootStatus, deadline: deadline)
    }

    private var directories: DirectoryCache { transaction.directories }

    private func run(journal: Journal, progress: ((Int, Int) -> Void)?) throws(ApplyError) -> ApplyReport {
        if let room = roomMade {
            for i in room.done { ledger.done(i) }
            ledger.report.warnings.append(room.summary)
        }
        defer { unlinks.stop() }
        journal.reserveRoom(records: min(ledger.steps.count, StepGroups.largest(firstSize: options.groupSize)))
        do {
            var groups = StepGroups(firstSize: options.groupSize)
            while let group = groups.next(of: ledger.steps) {
                // Between groups only: every group's intents are journaled and carried out together, so a stop
                // here leaves exactly what a crash after a group leaves, and the rollback below is recovery's.
                if options.cancellation?.isCancelled == true { throw Cancelled() }
                // The trash folders are resolved once, before the first move, in folders as the unlinks left them.
                if preparer.trash.needed(by: group, of: ledger.steps) {
                    try unlinks.finish()
                    try preparer.trash.resolve()
                }
                try runGroup(group)
                progress?(group.upperBound, ledger.steps.count)
            }
            try unlinks.finish()
            let skipped = ledger.report.skipped.count
            try directoryTimes.restore(in: transaction)
            try transaction.commit(counts: ledger.report.counts, bytesFreed: ledger.report.bytesFreed, skipped: skipped,
                                   quarantined: ledger.report.quarantined, bytesQuarantined: ledger.report.bytesQuarantined)
        } catch {
            // The run stops: the unlinks the workers made are recorded before the rollback looks at what was made.
            try? unlinks.finish()
            throw rollback(after: error)
        }
        do {
            try transaction.purge(deadline: options.deadline)
            try transaction.end(outcome: .committed)
        } catch {
            ledger.report.warnings.append("applied, but the staging folder was not fully purged (\(error)); 'policyctl recover' finishes it")
        }
        if ledger.report.quarantined > 0 {
            ledger.report.quarantine = transaction.lock.state.quarantinePath(for: transaction.id)
            ledger.report.quarantineUntil = transaction.quarantineEnds
        }
        transaction.dropEmptyQuarantine()
        if let why = transaction.quarantineUnavailable {
            ledger.report.warnings.append("no quarantine could be made (\(why)): this run's deletes were plain deletes, and cannot be undone")
        }
        // A full disk used the reserve up: the purge has freed space, so set it aside again for the next run.
        if journal.reserve.released { journal.reserve.replenish() }
        return ledger.report
    }

    /// Prepare and journal the group's intents, one fsync, then verify and change step by step.
    private func runGroup(_ group: Range<Int>) throws {
        // Before the cache is cleared: the folders left for good were reached by the last group's steps.
        let restoring = restoresAsItGoes && group.lowerBound > 0
            ? directoryTimes.intendFinished(before: ledger.steps[action: group.lowerBound].path, in: transaction) : []
        directories.clear()
        verifier.startGroup()
        preparer.startGroup()
        // Each step with its intents, as it is now: carried out as prepared, not made again from the step list
        // (nothing rewrites a step's path between its preparation and its changes: followMoves runs here).
        // `unlink`: a file delete's one intent, kept out of `intents` (then empty, no array made).
        var prepared = MovingQueue<Prepared>(capacity: group.count)
        // What the unlink workers' choice reads, apart: a look at a prepared element copied its step and intents.
        var lanes: [(i: Int, fileDelete: Bool)] = []
        for i in group where freedBeforeJournal.isEmpty || !freedBeforeJournal.contains(i) {
            // A trash item's record is journaled and made by the item's step (Units.swift).
            if ledger.steps.carriedBy(i) != nil { continue }
            let step = ledger.followMoves(i)
            switch try preparer.prepare(i, step) {
            case .skip(let reason): ledger.skip(i, reason)
            case .failed(let error): try ledger.fail(i, error)
            case .unchanged(let reason): ledger.report.outcomes.set(i, .unchanged(reason))
            case .fileDelete(let change, let identity):
                // No destination to record (a step is prepared once: none was recorded before either).
                prepared.append(Prepared(i: i, step: consume step, intents: [], unlink: transaction.intend(change, action: i, identity: identity)))
                lanes.append((i, true))
            case .changes(let changes, let destination):
                ledger.report.outcomes.setDestination(i, destination)
                // A roll-forward file delete comes as `.fileDelete` only: these are never one for the workers.
                prepared.append(Prepared(i: i, step: consume step, intents: changes.map { transaction.intend($0.0, action: i, identity: $0.1) }, unlink: nil))
                lanes.append((i, false))
            }
        }
        // One fsync makes the whole group's intents durable before the first of its changes.
        try transaction.makeDurable()
        try directoryTimes.performRestores(restoring, in: transaction)
        unlinks.choose(lanes)
        // Each element moved out, not copied: `for … in` an array copied every step, its intents and its unlink
        // out of it, and destroyed both copies (700 instructions a file delete).
        while let next = prepared.next() {
            try carryOut(next.i, next.step, next.intents, unlink: next.unlink)
            try deadline.check()
        }
        // Unlinks still with the workers go on while the next group is journaled; their folder is noted once
        // they are finished (when the run moves to another folder, or at the end).
        if unlinks.isIdle { directoryTimes.settle(in: directories) }
    }

    /// A step with its intents, as `runGroup` prepared it. A struct, not a tuple: the tuple was destroyed through
    /// the runtime's generic tuple witness (260 instructions a step).
    private struct Prepared {
        var i: Int
        var step: Step
        var intents: [Intent]
        var unlink: Intent?
    }

    /// One journaled step: verified just before its changes, which are made here or (a file delete) by a worker.
    private func carryOut(_ i: Int, _ step: Step, _ intents: [Intent], unlink: Intent?) throws {
        // Asked by matching, not `unlink != nil` in `&&`'s autoclosure: that copied the intent (through its
        // type's metadata) and destroyed the copy, twice a file delete.
        var background = false
        if case .some = unlink { background = options.unlinksInBackground }
        try unlinks.barrier(before: step, background: background)
        // A step it depends on may have failed since this group was prepared.
        if let reason = preparer.dependencyReason(step.action) { return ledger.skip(i, reason) }
        // A trash move goes only into the folder checked now, as the rename will use it.
        if case .trash = step.action.kind, let refusal = try verifier.trashDestinationRefusal(i) { return try ledger.refuse(i, refusal) }
        // A file delete in a folder still there goes to a worker, which checks its identity just before unlinking.
        let parent = background ? try? directories.directory(containing: step.action.path) : nil
        // A file held in the quarantine is renamed first and checked where it then is (ApplyRun.change): one rename
        // and one fstatat, what a roll-forward delete costs, and nothing can swap it there.
        var heldFile = false
        if step.record == nil, step.action.type != .directory, step.action.type != nil, case .quarantine? = intents.first?.change {
            heldFile = true
        }
        if var refusal = try verifier.check(step, identityLater: parent != nil || heldFile) {
            // Kept as in use: checked here after all, identity first, so a file that vanished (its inode now
            // another file's, maybe open) is reported as vanished.
            if parent != nil { refusal = try verifier.check(step) ?? refusal }
            return try ledger.refuse(i, refusal)
        }
        // The folder times first: a step in another folder notes how the previous removals left theirs now. A trash
        // item's record leaves its own folder (info/, the app index) in the same step: that folder is one too.
        let record = step.record.map { ledger.steps[$0].action }
        directoryTimes.willChange(step.action, in: directories)
        if let record { directoryTimes.willChange(record, in: directories) }
        // `background` holds only with an unlink: unwrapped in place, where binding it copied it.
        if let parent, background { return try unlinks.hand(i, step, intent: unlink!, parent: parent) }
        options.willChange?(step.action.path)
        guard try change(i, step, unlink.map { [$0] } ?? intents) else { return }
        directoryTimes.didChange(step.action, step: i, in: directories)
        if let record { directoryTimes.didChange(record, step: i, in: directories) }
        ledger.movedDirectory(of: i)
        if case .quarantine? = intents.first?.change { ledger.doneHeld(i) } else { ledger.done(i) }
    }

    /// Makes the step's changes in order; false when one failed or what was staged is not what was planned
    /// (the step is then skipped, its earlier changes undone).
    private func change(_ i: Int, _ step: Step, _ intents: [Intent]) throws -> Bool {
        for (n, intent) in intents.enumerated() {
            if case .failure(let failure) = Result(catching: { () throws(FileSystemError) in try transaction.perform(intent) }) {
                // A trash item's record that vanished meanwhile: the item goes alone (the unit's after).
                if n == 1, step.record != nil, DirectoryCache.meansAbsent(failure.errno) { continue }
                try ledger.settle(failure, of: i, after: intents[..<n], intent)
                return false
            }
            ledger.touch(intent.change)
            if case .mkdir(let made) = intent.change, preparer.trash.structure.contains(made) {
                try preparer.trash.makePrivate(made)
            }
            // The entry a delete quarantined (the item, then its record) is checked where no one can swap it; what is
            // not what the plan saw goes back (a unit whole), and the step is kept.
            if n == 0 || step.record != nil, case .quarantine(let path, let slot, _, _, _) = intent.change,
               let refusal = try verifier.recheckQuarantined(n == 0 ? step.action : ledger.steps[step.record!].action, slot) {
                try transaction.unquarantine(path: path, slot: slot)
                if n == 1, case .quarantine(let itemPath, let itemSlot, _, _, _) = intents[0].change {
                    try transaction.unquarantine(path: itemPath, slot: itemSlot)
                }
                try ledger.refuse(i, refusal)
                return false
            }
            // The entry a delete staged (the item, then its record) is checked again where no one can swap it.
            if n == 0 || step.record != nil, case .stage(let path, let name) = intent.change,
               let refusal = try verifier.recheckStaged(n == 0 ? step.action : ledger.steps[step.record!].action, name) {
                // Replaced or written to between the check and the move (or it could not be checked):
                // what was staged is not known to be what was planned. A unit goes back whole.
                try transaction.unstage(path: path, name: name)
                if n == 1, case .stage(let itemPath, let itemName) = intents[0].change {
                    try transaction.unstage(path: itemPath, name: itemName)
                }
                try ledger.refuse(i, refusal)
                return false
            }
        }
        return true
    }

    private func rollback(after error: any Error) -> ApplyError {
        var cause = error is Cancelled ? Cancelled.reason : deadline.cause(of: error) ?? "\(error)"
        // Deletes made before the journal could begin (a full disk) roll forward: the reason says so.
        if let room = roomMade { cause += "; \(room.summary)" }
        let result = transaction.rollback(reason: cause)
        if result.complete {
            return .rolledBack(transaction: transaction.id, cause: cause, undone: result.undone,
                               kept: result.kept.map { "\($0.path.escaped): \($0.reason)" })
        }
        return .rollbackIncomplete(transaction: transaction.id, cause: cause, failures: result.failures)
    }
}
