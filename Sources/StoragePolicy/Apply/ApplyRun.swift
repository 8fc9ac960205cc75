// Carries out a list of steps as one transaction: per group, prepare and journal the intents, fsync once, then
// check each target's identity just before touching it. Never touches a target that changed since the plan.
// An error on one entry skips that step (undoing what the step already did) and the steps that depend on it;
// an error about the run (I/O, ENOSPC, the journal) rolls everything back.

/// One unit of work: a plan action, or a trash item to put back.
struct Step {
    var action: Action
    /// The action's name, `restore`, or what an undo does.
    var verb: StepVerb
    /// For `restore`: what else goes when the item is put back.
    var restore: RestoreCleanup?
    /// A trash item's delete: the step of its record (`.trashinfo`, index entry), whose change this step makes
    /// with its own, both staged, as one unit (Units.swift).
    var record: Int? = nil
    /// A record deleted with its item: the item's step, which carries it out (this step journals nothing).
    var carriedBy: Int? = nil
}

/// The bookkeeping a trashed item carries, removed when it is restored.
enum RestoreCleanup {
    /// The FreeDesktop `.trashinfo` file.
    case trashInfo(RelativePath)
    /// The app-layout xattrs (stamp and origin) with their current values.
    case attributes(stamp: [UInt8]?, origin: [UInt8]?)
}

final class ApplyRun {
    enum Preparation {
        case changes([(Change, EntryIdentity?)], destination: RelativePath?)
        case unchanged(String)
        case skip(String)
        /// A call on this entry failed (EACCES, EPERM...): skipped with the error.
        case failed(FileSystemError)
    }

    /// Why a checked step is not carried out.
    enum Refusal {
        case reason(String)
        case failed(FileSystemError)
    }

    private struct DeadlineExceeded: Error {}

    /// A step failed midway and what it had already changed could not be put back: the run rolls back.
    private struct StepNotReverted: Error, CustomStringConvertible {
        var failure: FileSystemError
        var why: String
        var description: String { "\(failure); the step's earlier changes could not be undone (\(why))" }
    }

    let lock: ApplyLock
    let options: ApplyOptions
    /// The plan's steps; a path under a directory this transaction renamed or trashed is rewritten to where it is now.
    private(set) var steps: [Step]
    let metadata: Transaction.Metadata
    /// Entries modified after this instant (ns) were changed since the plan: a directory holding one is kept.
    let planTimeNs: Int64?

    private(set) var transaction: Transaction!
    var report = ApplyReport()
    /// Paths with a descendant this transaction renamed, staged or created.
    private var touched: Set<RelativePath> = []
    /// Directories this transaction renamed or trashed, in order: later steps inside them follow them.
    private var moved: [(from: RelativePath, to: RelativePath)] = []
    /// Directories mkdir steps will create: later steps may rely on them before they exist.
    var planned: Set<RelativePath> = []
    /// Names chosen in trash folders by prepared but not yet performed steps.
    var reserved: [RelativePath: Set<FileName>] = [:]
    var trashFolders: [RelativePath: TrashFolder] = [:]
    /// Trash folders that could not be created or fail the trust rule, and why: moves into them are skipped.
    var unavailableTrash: [RelativePath: String] = [:]
    /// FreeDesktop trash folders that are shared (root's, sticky, world-writable): their `files/` and `info/`
    /// must be the euid's own and 0700.
    var sharedTrash: Set<RelativePath> = []
    /// Every folder of the trashes this run moves into: made 0700 when a mkdir makes one.
    private lazy var trashStructure: Set<RelativePath> = trashStructurePaths()
    /// Directories a skipped mkdir did not create: steps at or under them are skipped too.
    private var notCreated: [RelativePath: String] = [:]
    /// Directories holding an entry whose delete or trash move failed: deleting or trashing them is skipped.
    private var holdsFailure: [RelativePath: RelativePath] = [:]
    private var trashResolved = false
    /// The folder `touch` marked last, with all its ancestors.
    private var lastTouched: RelativePath?
    private var temporaryCounter = 0
    private let clock = ContinuousClock()
    let nowSeconds = WallClock.nowNs() / 1_000_000_000
    private let directoryTimes = DirectoryTimes()
    /// File deletes of one folder the workers check and unlink, in step order, and that folder.
    private lazy var unlinkWorkers: UnlinkWorkers = {
        let root = lock.state.rootStatus
        return UnlinkWorkers(check: { job throws(FileSystemError) in
            ApplyRun.refusal(of: try job.parent.statusIfPresent(of: job.name), job.identity, type: job.type, root: root)
        }, willChange: options.willChange, deadline: options.deadline)
    }()
    /// The file deletes made before the journal could begin on a full disk (a first run), if any.
    private var roomMade: RoomBeforeJournal?
    private var freedBeforeJournal: Set<Int> = []
    private var inBackground: [(step: Int, intent: Intent)] = []
    private var backgroundFolder: RelativePath?
    /// The removal this run made in that folder just before the batch, if any (folder times name a made one).
    private var removalBeforeBatch: Int?

    init(lock: ApplyLock, options: ApplyOptions, steps: [Step], metadata: Transaction.Metadata, planTimeNs: Int64?) {
        self.lock = lock
        self.options = options
        self.steps = steps
        self.metadata = metadata
        self.planTimeNs = planTimeNs
    }

    private var root: DirectoryHandle { lock.state.root }
    var directories: DirectoryCache { transaction.directories }

    // MARK: Running

    func run(progress: ((Int, Int) -> Void)?) throws(ApplyError) -> ApplyReport {
        guard !steps.isEmpty else { return report }
        let journal: Journal
        do {
            journal = try lock.state.openJournal()
            transaction = try begin(journal)
        } catch {
            throw .failed(error)
        }
        report.transaction = transaction.id
        report.items = steps.map { ApplyReport.Item(action: $0.action, verb: $0.verb, outcome: .skipped("not reached")) }
        if let room = roomMade {
            freedBeforeJournal = Set(room.done)
            for i in room.done { done(i) }
            report.warnings.append(room.summary)
        }
        defer { unlinkWorkers.stop() }
        do {
            var start = 0
            var groupSize = options.groupSize
            while start < steps.count {
                // A group never spans two phases: mkdirs are made before the trash folders they hold are resolved.
                var end = start + 1
                let phase = Applier.phase(of: steps[start].action)
                while end < steps.count && end - start < groupSize && Applier.phase(of: steps[end].action) == phase { end += 1 }
                if !trashResolved && steps[start..<end].contains(where: { if case .trash = $0.action.kind { true } else { false } }) {
                    try finishBackgroundUnlinks()
                    try resolveTrashFolders()
                    trashResolved = true
                }
                try runGroup(start..<end)
                start = end
                groupSize = min(groupSize * 2, options.groupSize * 16)
                progress?(start, steps.count)
            }
            try finishBackgroundUnlinks()
            let skipped = report.skipped.count
            try directoryTimes.restore(in: transaction)
            try transaction.commit(counts: report.counts, bytesFreed: report.bytesFreed, skipped: skipped)
        } catch {
            // The run stops: the unlinks the workers made are recorded before the rollback looks at what was made.
            try? finishBackgroundUnlinks()
            throw rollback(after: error)
        }
        do {
            try transaction.purge(deadline: options.deadline)
            try transaction.end(outcome: .committed)
        } catch {
            report.warnings.append("applied, but the staging folder was not fully purged (\(error)); 'policyctl recover' finishes it")
        }
        // A full disk used the reserve up: the purge has freed space, so set it aside again for the next run.
        if journal.reserve.released { journal.reserve.replenish() }
        return report
    }

    /// Begins the transaction. On a full disk with no reserve yet (a first run), the begin record gets ENOSPC:
    /// roll-forward file deletes of the plan make room first, a batch at a time, until the reserve fits
    /// (RoomBeforeJournal); they are reported done and the run skips them.
    private func begin(_ journal: Journal) throws(FileSystemError) -> Transaction {
        do {
            return try Transaction.begin(metadata, lock: lock, journal: journal)
        } catch where error.errno == .noSpace {
            var room = RoomBeforeJournal(steps: steps, lock: lock, options: options)
            while true {
                let tried = room.freeBatch()
                journal.reserve.replenish()
                if tried && !journal.reserve.isFull { continue }
                do {
                    let transaction = try Transaction.begin(metadata, lock: lock, journal: journal)
                    if !room.done.isEmpty { roomMade = room }
                    return transaction
                } catch where error.errno == .noSpace && tried {}
            }
        }
    }

    private func runGroup(_ group: Range<Int>) throws {
        directories.clear()
        inUseCheck = inUseCheck?.rereadingFlocks()
        var prepared: [(Int, [Intent])] = []
        for i in group where !freedBeforeJournal.contains(i) {
            // A trash item's record is journaled and made by the item's step (Units.swift).
            if steps[i].carriedBy != nil { continue }
            switch try prepareOrSkip(i) {
            case .skip(let reason):
                skip(i, reason)
            case .failed(let error):
                try fail(i, error)
            case .unchanged(let reason):
                report.items[i].outcome = .unchanged(reason)
            case .changes(let changes, let destination):
                report.items[i].destination = destination
                prepared.append((i, changes.map { transaction.intend($0.0, action: i, identity: $0.1) }))
            }
        }
        // One fsync makes the whole group's intents durable before the first of its changes.
        try transaction.makeDurable()
        for (i, intents) in prepared {
            try carryOut(i, intents)
            if let deadline = options.deadline, clock.now >= deadline { throw DeadlineExceeded() }
        }
        // Unlinks still with the workers go on while the next group is journaled; their folder is noted once
        // they are finished (when the run moves to another folder, or at the end).
        if inBackground.isEmpty { directoryTimes.settle(in: directories) }
    }

    private func rollback(after error: any Error) -> ApplyError {
        var cause: String
        switch error {
        case is DeadlineExceeded: cause = "ran past " + (options.deadlineLabel ?? "its time budget")
        // A tree walk (a whole-tree delete's check) stopped at the deadline inside its loop.
        case let e as FileSystemError where e.operation == .pastDeadline: cause = "ran past " + (options.deadlineLabel ?? "its time budget")
        case let e as FileSystemError: cause = e.description
        default: cause = "\(error)"
        }
        // Deletes made before the journal could begin (a full disk) roll forward: the reason says so.
        if let room = roomMade { cause += "; \(room.summary)" }
        let result = transaction.rollback(reason: cause)
        if result.complete {
            return .rolledBack(transaction: transaction.id, cause: cause, undone: result.undone,
                               kept: result.kept.map { "\($0.path.escaped): \($0.reason)" })
        }
        return .rollbackIncomplete(transaction: transaction.id, cause: cause, failures: result.failures)
    }

    private func skip(_ i: Int, _ reason: String) {
        report.items[i].outcome = .skipped(reason)
        report.items[i].destination = nil
        transaction.skip(action: i, path: steps[i].action.path, verb: steps[i].verb, reason: reason)
        if case .mkdir = steps[i].action.kind { notCreated[steps[i].action.path] = reason }
        skipRecord(of: i)
    }

    /// A trash item kept keeps its record: the record's own step is skipped too, naming the item.
    private func skipRecord(of i: Int) {
        guard let r = steps[i].record else { return }
        let reason = "the record of \(steps[i].action.path.escaped), which is kept; kept with it"
        report.items[r].outcome = .skipped(reason)
        transaction.skip(action: r, path: steps[r].action.path, verb: steps[r].verb, reason: reason)
    }

    /// Skips a step because a call on its entry failed: recorded with the errno, and what depends on it is
    /// skipped later. With `--all-or-nothing` the error is rethrown instead, and the run rolls back.
    private func fail(_ i: Int, _ error: FileSystemError) throws(FileSystemError) {
        if options.allOrNothing { throw error }
        let path = steps[i].action.path
        let reason = error.path == path ? "\(error.errno) [\(error.operation.name)]" : error.description
        report.items[i].outcome = .skipped(reason)
        report.items[i].destination = nil
        report.items[i].error = error
        transaction.skip(action: i, path: path, verb: steps[i].verb, reason: reason, error: error)
        if case .mkdir = steps[i].action.kind { notCreated[path] = reason }
        skipRecord(of: i)
        if Self.removes(steps[i].action) {
            // Its folder still holds it: a delete of the folder planned after it would take it along.
            var p = path
            while !p.isRoot {
                p = p.parent
                if holdsFailure[p] == nil { holdsFailure[p] = path }
            }
        }
    }

    /// A delete or a trash move: the entry leaves its folder.
    private static func removes(_ action: Action) -> Bool {
        switch action.kind {
        case .delete, .trash: true
        default: false
        }
    }

    /// Why a step cannot run because a step it depends on was skipped, or nil.
    private func dependencyReason(_ action: Action) -> String? {
        // Nothing skipped or failed yet (the common case): nothing to look up for each ancestor.
        if notCreated.isEmpty && holdsFailure.isEmpty && unavailableTrash.isEmpty { return nil }
        var targets = [action.path]
        if case .rename(let to) = action.kind { targets.append(to) }
        if !unavailableTrash.isEmpty, let folder = trashFolderPath(of: action), let why = unavailableTrash[folder] {
            return why
        }
        for target in targets {
            var p = target
            while true {
                if let why = notCreated[p] { return "depends on the directory \(p.escaped), which was not created (\(why))" }
                if p.isRoot { break }
                p = p.parent
            }
        }
        if Self.removes(action), let inner = holdsFailure[action.path] {
            return "holds \(inner.escaped), which could not be removed; kept"
        }
        return nil
    }

    // MARK: Preparing (before the intents are journaled)

    /// A target (or its folder) that is gone by the time its intent is prepared is skipped, not a failure;
    /// so is one a call fails on (EACCES, EPERM...), with the error.
    private func prepareOrSkip(_ i: Int) throws(FileSystemError) -> Preparation {
        do {
            return try prepare(i)
        } catch where DirectoryCache.meansAbsent(error.errno) {
            return .skip(error.errno == .noSuchFile ? "vanished since the plan" : "its folder is no longer a directory (a symlink?); not followed")
        } catch where FailureScope(error).isItemLevel {
            return .failed(error)
        }
    }

    private func prepare(_ i: Int) throws(FileSystemError) -> Preparation {
        // Renames and trash moves run before deletes: a delete inside a directory moved meanwhile follows it.
        for (from, to) in moved.reversed() {
            if let inner = steps[i].action.path.relative(to: from), !inner.isRoot { steps[i].action.path = to.appending(inner) }
        }
        let step = steps[i]
        let action = step.action
        let path = action.path
        // The first component, without splitting the whole path (once per step).
        if !path.isRoot, Markers.isEngineState(path.bytes.prefix { $0 != 0x2F }) {
            return .skip("inside .policyctl, the engine's own state folder; never touched")
        }
        if let reason = dependencyReason(action) { return .skip(reason) }
        switch action.kind {
        case .delete, .rename, .trash:
            if path.isRoot { return .skip("the root itself is never deleted, renamed or trashed") }
            guard action.identity != nil else { return .skip("the plan records no identity for it; not touched") }
        default: break
        }
        if let cleanup = step.restore, case .rename(let original) = action.kind {
            return try prepareRestore(action, to: original, cleanup: cleanup)
        }
        switch action.kind {
        case .delete:
            if let r = step.record {
                // A trash item and its record are one unit: both staged, so a rollback or recovery puts both back
                // and a crash never leaves the item without the record that dates it (Units.swift).
                for (from, to) in moved.reversed() {
                    if let inner = steps[r].action.path.relative(to: from), !inner.isRoot { steps[r].action.path = to.appending(inner) }
                }
                return .changes([(.stage(path: path, name: transaction.stagingName()), action.identity),
                                 (.stage(path: steps[r].action.path, name: transaction.stagingName()), steps[r].action.identity)],
                                destination: nil)
            }
            // A file, symlink, fifo... is deleted roll-forward: its intent is durable, its identity checked just
            // before `unlinkat`, and recovery finishes it. Directories (whose contents may change meanwhile) and
            // every delete under --all-or-nothing (which promises undo) are staged.
            if let type = action.type, type != .directory, type != .unknown, !options.allOrNothing, !options.stagesEveryDelete {
                return .changes([(.unlink(path: path, type: type), action.identity)], destination: nil)
            }
            return .changes([(.stage(path: path, name: transaction.stagingName()), action.identity)], destination: nil)

        case .rename(let destination):
            if let reason = Self.forbiddenDestination(destination, source: path) { return .skip(reason) }
            if try !exists(path) { return .skip("vanished since the plan") }
            if try exists(destination) { return .skip("\(destination.escaped) already exists; nothing replaced") }
            return .changes([(.rename(from: path, to: destination), action.identity)], destination: destination)

        case .trash(let folderPath):
            return try prepareTrash(action, into: folderPath)

        case .mkdir:
            if path.isRoot { return .unchanged("the root exists") }
            if let status = try statusIfPresent(path) {
                return status.type == .directory ? .unchanged("already exists")
                    : .skip("a \(status.type.rawValue) is where a directory must be; not replaced")
            }
            planned.insert(path)
            return .changes([(.mkdir(path: path), nil)], destination: nil)

        case .untag:
            // Staged (so a rollback puts it back), then checked again where no one can swap it (BackupInclusion).
            guard action.identity != nil else { return .skip("the plan records no identity for it; not touched") }
            return .changes([(.stage(path: path, name: transaction.stagingName()), action.identity)], destination: nil)

        case .setxattr, .unmark:
            // An undo (or `unmark`) puts an attribute back to absent: the step's verb says so (see Undo.swift).
            let (name, setValue): (String, [UInt8]) = switch action.kind {
            case .setxattr(let name, let value): (name, value)
            case .unmark(let name): (name, [])
            default: ("", [])
            }
            let value: [UInt8]? = step.verb == .unset || action.kind == .unmark(name: name) ? nil : setValue
            guard let status = try statusIfPresent(path) else {
                guard planned.contains(path) else { return .skip("vanished since the plan") }
                return .changes([(.setxattr(path: path, attribute: name, value: value, previous: nil), nil)], destination: nil)
            }
            if status.type == .symlink { return .skip("is a symlink; attributes are never set through one") }
            let current = try directories.directory(containing: path).extendedAttribute(name, of: path.lastComponent)
            if current == value { return .unchanged(value == nil ? "\(name) already absent" : "\(name) already set") }
            return .changes([(.setxattr(path: path, attribute: name, value: value, previous: current), status.identity)], destination: nil)

        case .writeTag:
            let tag = path.appending(Markers.cacheTagName)
            if let status = try statusIfPresent(tag) {
                if status.type == .regular,
                   let bytes = try? directories.directory(path).readFile(Markers.cacheTagName, limit: 4096),
                   bytes.starts(with: Array(Markers.cacheTagSignature.utf8)) {
                    return .unchanged("already tagged")
                }
                return .skip("a different CACHEDIR.TAG is there; not replaced")
            }
            if try statusIfPresent(path) == nil && !planned.contains(path) { return .skip("vanished since the plan") }
            let contents = Array(Markers.cacheTagContents.utf8)
            return .changes([(.create(path: tag, temp: temporaryName(), contents: contents), nil)], destination: nil)
        }
    }

    // MARK: Carrying out (identity checked just before the change)

    private func carryOut(_ i: Int, _ intents: [Intent]) throws {
        let step = steps[i]
        let background = options.unlinksInBackground && Self.onlyUnlinks(intents)
        // Anything but another file delete in the same folder sees the folder as the workers' unlinks left it.
        if let folder = backgroundFolder, !(background && step.action.path.isChild(of: folder)) {
            try finishBackgroundUnlinks()
        }
        // A step it depends on may have failed since this group was prepared.
        if let reason = dependencyReason(step.action) {
            skip(i, reason)
            return
        }
        // A trash move goes only into the folder checked now, as the rename will use it.
        if case .trash = step.action.kind {
            let problem: String?
            do { problem = try trashDestinationProblem(i) } catch {
                try refuse(i, try Self.refusal(checking: error))
                return
            }
            if let problem {
                skip(i, problem)
                return
            }
        }
        // A file delete in a folder still there goes to a worker, which checks its identity just before unlinking.
        let parent = background ? try? directories.directory(containing: step.action.path) : nil
        if var refusal = try verifyOrSkip(step, identityLater: parent != nil) {
            // Kept as in use: checked here after all, identity first, so a file that vanished (its inode now
            // another file's, maybe open) is reported as vanished.
            if parent != nil { refusal = try verifyOrSkip(step) ?? refusal }
            try refuse(i, refusal)
            return
        }
        // The folder times first: a step in another folder notes how the previous removals left theirs now.
        directoryTimes.willChange(step.action, in: directories)
        if let parent {
            // Its outcome is recorded by finishBackgroundUnlinks.
            let threads = step.action.bytes > 0 ? UnlinkWorkers.maximumThreads : UnlinkWorkers.threadsForEmptyFiles
            unlinkWorkers.submit(.init(step: i, path: step.action.path, parent: parent, name: step.action.path.lastComponent!,
                                       identity: step.action.identity!, type: step.action.type), workers: threads)
            transaction.unlinkingElsewhere(intents[0])
            touch(intents[0].change)
            if backgroundFolder == nil {
                backgroundFolder = step.action.path.parent
                removalBeforeBatch = directoryTimes.pendingStep
            }
            inBackground.append((i, intents[0]))
            directoryTimes.didChange(step.action, step: i, in: directories)
            return
        }
        options.willChange?(step.action.path)
        for (n, intent) in intents.enumerated() {
            if let failure = performReporting(intent) {
                // A trash item's record that vanished meanwhile: the item goes alone (the unit's after).
                if n == 1, step.record != nil, DirectoryCache.meansAbsent(failure.errno) { continue }
                try settle(failure, of: i, after: intents[..<n], intent)
                return
            }
            touch(intent.change)
            if case .mkdir(let made) = intent.change, trashStructure.contains(made) { try makePrivate(made) }
            // The entry a delete staged (the item, then its record) is checked again where no one can swap it.
            if n == 0 || step.record != nil, case .stage(let path, let name) = intent.change {
                if let refusal = try recheckStagedOrRefuse(n == 0 ? step.action : steps[step.record!].action, name) {
                    // Replaced or written to between the check and the move (or it could not be checked):
                    // what was staged is not known to be what was planned. A unit goes back whole.
                    try transaction.unstage(path: path, name: name)
                    if n == 1, case .stage(let itemPath, let itemName) = intents[0].change {
                        try transaction.unstage(path: itemPath, name: itemName)
                    }
                    try refuse(i, refusal)
                    return
                }
            }
        }
        directoryTimes.didChange(step.action, step: i, in: directories)
        if let to = report.items[i].destination, step.action.type == .directory { moved.append((step.action.path, to)) }
        done(i)
    }

    private func done(_ i: Int) {
        report.items[i].outcome = .done
        report.counts[steps[i].verb] += 1
        if steps[i].action.isDelete { report.bytesFreed += steps[i].action.bytes }
        if let r = steps[i].record { done(r) }
    }

    /// A step whose only change is a roll-forward unlink: the workers can make it.
    private static func onlyUnlinks(_ intents: [Intent]) -> Bool {
        guard intents.count == 1, case .unlink = intents[0].change else { return false }
        return true
    }

    /// A change of step `i` failed after `made` (its earlier changes) were made: the step is skipped, its
    /// earlier changes undone, or the run stops (a run-level error, or any error with --all-or-nothing).
    private func settle(_ failure: FileSystemError, of i: Int, after made: ArraySlice<Intent>, _ intent: Intent) throws {
        if case .unlink = intent.change, failure.errno == .isDirectory {
            // Replaced by a directory between the check and the unlink: not deleted.
            skip(i, "replaced by a directory meanwhile; kept")
            return
        }
        let scope = FailureScope(failure)
        guard scope.isItemLevel, !(options.allOrNothing && scope == .entry) else { throw failure }
        // A step of several changes (a trash move, a restore) goes back to how it was before it is skipped.
        if !made.isEmpty, let why = transaction.revert(Array(made)) {
            throw StepNotReverted(failure: failure, why: why)
        }
        switch scope {
        case .vanished: skip(i, "vanished meanwhile (\(failure))")
        case .appeared: skip(i, "\(Self.target(of: intent.change).escaped) appeared meanwhile; nothing replaced")
        default: try fail(i, failure)
        }
    }

    /// Waits for the workers' unlinks and records each in step order: made ones first (a failure below may stop
    /// the run, and its rollback must know what was made), then each failure as the step would have met it here.
    private func finishBackgroundUnlinks() throws {
        guard !inBackground.isEmpty else { return }
        let failures = unlinkWorkers.finish()
        let batch = inBackground
        inBackground.removeAll(keepingCapacity: true)
        backgroundFolder = nil
        // Both are in step order: one pass pairs each failure with its intent.
        var unmade: [(step: Int, why: UnlinkWorkers.Unmade, intent: Intent)] = []
        var lastMade = removalBeforeBatch
        for (i, intent) in batch {
            if unmade.count < failures.count && failures[unmade.count].step == i {
                unmade.append((i, failures[unmade.count].why, intent))
                continue
            }
            transaction.madeElsewhere(intent)
            done(i)
            lastMade = i
        }
        if let last = failures.last, last.step == batch.last!.step { directoryTimes.lastRemovalsFailed(lastMade: lastMade) }
        var pastDeadline = false
        for (i, why, intent) in unmade {
            switch why {
            case .refused(let reason): skip(i, reason)
            case .checkFailed(let error): try refuse(i, try Self.refusal(checking: error))
            case .unlinkFailed(let error): try settle(error, of: i, after: [], intent)
            case .pastDeadline: pastDeadline = true
            }
        }
        // As after a step made here: a run past its budget stops.
        if pastDeadline || options.deadline.map({ clock.now >= $0 }) == true { throw DeadlineExceeded() }
    }

    private func performReporting(_ intent: Intent) -> FileSystemError? {
        do {
            try transaction.perform(intent)
            return nil
        } catch {
            return error
        }
    }

    /// The entry a change creates or moves into place: what "appeared meanwhile" names.
    private static func target(of change: Change) -> RelativePath {
        switch change {
        case .rename(_, let to): to
        default: change.path
        }
    }

    /// An entry that vanishes or stops being a directory while it is being checked is skipped, not a failure;
    /// one a call fails on (EACCES, EPERM...) is skipped with the error.
    /// `identityLater`: a file delete whose identity a worker checks just before its unlink; only the rest here.
    private func verifyOrSkip(_ step: Step, identityLater: Bool = false) throws(FileSystemError) -> Refusal? {
        do {
            return try verify(step, identityLater: identityLater).map { .reason($0) }
        } catch {
            return try Self.refusal(checking: error)
        }
    }

    /// A call of a check failed: the entry vanished or changed while being checked, or the call fails on this
    /// entry (skipped with the error); anything else stops the run.
    static func refusal(checking error: FileSystemError) throws(FileSystemError) -> Refusal {
        if DirectoryCache.meansAbsent(error.errno) {
            return .reason(error.errno == .noSuchFile ? "vanished while being checked"
                : "changed while being checked (no longer a directory); not followed")
        }
        guard FailureScope(error).isItemLevel else { throw error }
        return .failed(error)
    }

    private func refuse(_ i: Int, _ refusal: Refusal) throws(FileSystemError) {
        switch refusal {
        case .reason(let reason): skip(i, reason)
        case .failed(let error): try fail(i, error)
        }
    }

    /// nil when the step's target is still what the plan saw; otherwise why it is skipped.
    private func verify(_ step: Step, identityLater: Bool) throws(FileSystemError) -> String? {
        let action = step.action
        let path = action.path
        switch action.kind {
        case .mkdir:
            guard try directories.directoryIfPresent(containing: path) != nil else { return "its folder is missing or no longer a directory" }
            if let status = try statusIfPresent(path) {
                return status.type == .directory ? "created by someone else meanwhile" : "a \(status.type.rawValue) appeared where the directory goes"
            }
            return nil
        case .untag:
            return try verifyDelete(action)
        case .setxattr, .unmark:
            guard let status = try statusIfPresent(path) else { return "vanished since the plan" }
            if status.type == .symlink { return "replaced by a symlink since the plan (not followed)" }
            if !status.isOnSameMount(as: lock.state.rootStatus) { return "on another filesystem; never crossed" }
            if let identity = action.identity, touched.contains(path), status.type == .directory {
                // This run created or moved entries inside it, which moved its mtime: the same directory still gets it.
                if status.device != identity.device || status.inode != identity.inode { return "replaced since the plan; kept" }
            } else if let identity = action.identity, let reason = Self.mismatch(status, identity, type: action.type) {
                return reason
            }
            if status.type != .directory && status.linkCount > 1 {
                return "has \(status.linkCount) hard links; an attribute would change every one of them"
            }
            return nil
        case .writeTag:
            guard let status = try statusIfPresent(path) else { return "vanished since the plan" }
            return status.type == .directory ? nil : "no longer a directory"
        case .delete:
            if !identityLater, let reason = try verifyDelete(action) { return reason }
            if let r = step.record, let reason = try verifyRecord(steps[r].action) { return reason }
            return try inUseReason(action)
        case .rename, .trash:
            guard let parent = try directories.directoryIfPresent(containing: path) else {
                return "vanished: its folder is gone or is no longer a directory"
            }
            guard let status = try parent.statusIfPresent(of: path.lastComponent!) else { return "vanished since the plan" }
            if !status.isOnSameMount(as: lock.state.rootStatus) { return "on another filesystem; never crossed" }
            if touched.contains(path), status.type == .directory, action.type == .directory {
                // This transaction renamed entries inside it, which moved its mtime: the same directory still goes.
                let identity = action.identity!
                return status.device == identity.device && status.inode == identity.inode ? nil : "replaced since the plan; kept"
            }
            if let reason = Self.mismatch(status, action.identity!, type: action.type) { return reason }
            return try restoreDestinationProblem(step, item: status)
        }
    }

    /// The staged check; a call on the entry that fails (EACCES on a folder inside it...) refuses the step too.
    private func recheckStagedOrRefuse(_ action: Action, _ name: FileName) throws(FileSystemError) -> Refusal? {
        do {
            return try recheckStaged(action, name).map { .reason($0) }
        } catch where FailureScope(error).isItemLevel {
            return .failed(error)
        }
    }

    /// The check again, on the entry now in staging (nothing can swap it there): nil when it is what the plan saw.
    private func recheckStaged(_ action: Action, _ name: FileName) throws(FileSystemError) -> String? {
        guard let identity = action.identity, let status = try transaction.staging.statusIfPresent(of: name) else { return nil }
        if touched.contains(action.path) {
            guard status.type == .directory, status.device == identity.device, status.inode == identity.inode else {
                return "replaced while being removed; kept"
            }
            return try transaction.staging.openDirectory(name).entries().isEmpty ? nil : "written to while being removed; kept"
        }
        if let reason = Self.mismatch(status, identity, type: action.type) { return reason }
        if case .untag = action.kind { return try BackupInclusion.stagedTagProblem(transaction.staging, name) }
        if status.type == .directory { return try newerEntry(inDirectory: try transaction.staging.openDirectory(name), at: action.path) }
        return nil
    }

    /// A trash item's record, checked with the item: nil when it is still what the plan saw, or already gone (the
    /// item then goes alone, which is the unit's after); otherwise why the item is kept with it.
    private func verifyRecord(_ record: Action) throws(FileSystemError) -> String? {
        guard let parent = try directories.directoryIfPresent(containing: record.path),
              let found = try parent.statusIfPresent(of: record.path.lastComponent!) else { return nil }
        guard let reason = Self.refusal(of: found, record.identity!, type: record.type, root: lock.state.rootStatus) else { return nil }
        return "its record \(record.path.escaped) \(reason.hasSuffix("; kept") ? String(reason.dropLast(6)) : reason); kept with it"
    }

    private func verifyDelete(_ action: Action) throws(FileSystemError) -> String? {
        let path = action.path
        let identity = action.identity!
        guard let parent = try directories.directoryIfPresent(containing: path) else {
            return "vanished: its folder is gone or is no longer a directory"
        }
        let found = try parent.statusIfPresent(of: path.lastComponent!)
        if let status = found, touched.contains(path), status.isOnSameMount(as: lock.state.rootStatus) {
            // Its planned contents went first and changed its mtime: only an empty directory goes now.
            guard status.type == .directory, status.device == identity.device, status.inode == identity.inode else {
                return Self.mismatch(status, identity, type: action.type) ?? "replaced since the plan"
            }
            let directory = try parent.openDirectory(path.lastComponent!)
            return try directory.entries().isEmpty ? nil : "not empty once its planned contents were removed; kept"
        }
        if let reason = Self.refusal(of: found, identity, type: action.type, root: lock.state.rootStatus) { return reason }
        if let status = found, status.type == .directory {
            return try newerEntry(inDirectory: try parent.openDirectory(path.lastComponent!), at: path)
        }
        return nil
    }

    /// Read on the first delete that needs it: the window since the plan shrinks to this run (see InUseCheck);
    /// its /proc/locks is read again for each group.
    private var inUseCheck: InUseCheck?
    /// The last rule asked about and its answer: consecutive steps mostly share a rule.
    private var lastInUseRule: (rule: String, checked: Bool)?

    private func checksInUse(_ rule: String) -> Bool {
        if let last = lastInUseRule, last.rule == rule { return last.checked }
        let checked = options.inUseRules.contains(rule)
        lastInUseRule = (rule, checked)
        return checked
    }

    /// Why a delete of an in-use-checked rule is kept now (open in a process, flocked), or nil.
    private func inUseReason(_ action: Action) throws(FileSystemError) -> String? {
        guard checksInUse(action.rule), let identity = action.identity, let name = action.path.lastComponent,
              let parent = try directories.directoryIfPresent(containing: action.path) else { return nil }
        if inUseCheck == nil { inUseCheck = InUseCheck.now(root: root) }
        // Called on the stored check in place: a copy of it would retain and release every table it holds.
        return inUseCheck!.reason(parent: parent, name: name, path: action.path, type: action.type, identity: identity,
                                  deadline: options.deadline)
    }

    /// Why `status` is not the entry `identity` (of `type`, when the plan says) describes, or nil when it is.
    /// The type is compared too: a freed inode number is often reused at once, by a symlink as easily as a file.
    /// Why a delete's target, found as `status` (nil: gone), is not what the plan saw; nil when it is. Made
    /// here for a directory, by a worker just before the unlink for a file (UnlinkWorkers).
    static func refusal(of status: FileStatus?, _ identity: EntryIdentity, type: FileType?, root: FileStatus) -> String? {
        guard let status else { return "vanished since the plan" }
        if !status.isOnSameMount(as: root) { return "on another filesystem; never crossed" }
        return mismatch(status, identity, type: type)
    }

    static func mismatch(_ status: FileStatus, _ identity: EntryIdentity, type: FileType?) -> String? {
        let replaced = status.device != identity.device || status.inode != identity.inode
        if replaced || (type != nil && status.type != type) {
            return status.type == .symlink ? "replaced by a symlink since the plan (not followed)"
                : "replaced since the plan (another \(status.type.rawValue) has this name now)"
        }
        if status.size != identity.size { return "modified since the plan (size \(identity.size) -> \(status.size)); kept" }
        if status.modificationTimeNs != identity.modificationTimeNs { return "modified since the plan (mtime changed); kept" }
        return nil
    }

    // MARK: Helpers

    func statusIfPresent(_ path: RelativePath) throws(FileSystemError) -> FileStatus? {
        if path.isRoot { return try root.status() }
        guard let parent = try directories.directoryIfPresent(containing: path) else { return nil }
        return try parent.statusIfPresent(of: path.lastComponent!)
    }

    func exists(_ path: RelativePath) throws(FileSystemError) -> Bool { try statusIfPresent(path) != nil }

    func temporaryName() -> FileName {
        temporaryCounter += 1
        return FileName(unchecked: Array(".policyctl-\(transaction.id)-\(temporaryCounter).tmp".utf8))
    }

    /// Marks every ancestor of the paths a change moved or created: their contents are no longer as planned.
    private func touch(_ change: Change) {
        switch change {
        case .stage(let p, _), .mkdir(let p), .create(let p, _, _), .unlink(let p, _): touch(p)
        case .rename(let from, let to): touch(from); touch(to)
        case .setxattr, .times: break
        }
    }

    func touch(_ path: RelativePath) {
        // The folder's chain is in `touched` already when the last step touched the same folder.
        if let lastTouched, path.isChild(of: lastTouched) { return }
        lastTouched = path.parent
        var p = path
        while !p.isRoot {
            p = p.parent
            if !touched.insert(p).inserted { break }
        }
    }
}
