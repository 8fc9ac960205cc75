// A full disk on a root never applied before has no journal reserve: the begin record itself gets ENOSPC, and
// nothing could be freed. File deletes roll forward (no undo record is ever needed: recovery only finishes
// them), so they can make the room first: each planned plain-file delete is checked just before its unlinkat
// (identity through the folder's descriptor, in use, exactly as the unlink workers check it) and made, in
// batches, until the journal's reserve fits and the transaction can begin. Never a rename, a trash move, a
// directory (staged, so undone on rollback) or anything under --all-or-nothing. The run then goes on as always.

@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyPlan
@_spi(Layers) import StoragePolicyEvaluation

/// The deletes made before the journal could begin on a full disk, and what they freed.
package struct RoomBeforeJournal {
    /// Deletes per batch: the begin is tried again after each one.
    static let batchSize = 64

    let steps: StepList
    package let lock: ApplyLock
    package let options: ApplyOptions
    /// The steps that qualify, in plan order, and how far the batches got.
    private let candidates: [Int]
    private var next = 0
    private let directories: DirectoryCache
    private var inUseCheck: InUseCheck?
    /// The steps made, and the bytes they freed (as allocated on disk).
    package private(set) var done: [Int] = []
    private(set) var bytesFreed: Int64 = 0

    package init(steps: StepList, lock: ApplyLock, options: ApplyOptions) {
        self.steps = steps
        self.lock = lock
        self.options = options
        directories = DirectoryCache(root: lock.state.root, rootStatus: lock.state.rootStatus)
        // A delete the quarantine holds is promised undo: never made plain to make room (the quarantine's own
        // renames need no room).
        candidates = options.allOrNothing || options.stagesEveryDelete ? [] : steps.indices.filter {
            RoomBeforeJournal.qualifies(steps[$0])
                && (options.quarantineWindows[steps[$0].action.rule] == nil || options.quarantineExempt.contains(steps[$0].action.path))
        }
    }

    /// A plain delete of a file (symlink, fifo...) the plan identified: one that needs no undo record.
    static func qualifies(_ step: Step) -> Bool {
        let action = step.action
        guard step.verb == .delete, step.restore == nil, case .delete = action.kind, action.identity != nil,
              let type = action.type, type != .directory, type != .unknown, let name = action.path.lastComponent else { return false }
        // Never the engine's own state; never a .trashinfo (its item, perhaps a directory, goes later, staged).
        if Markers.isEngineState(action.path.bytes.prefix { $0 != 0x2F }) { return false }
        return !name.bytes.reversed().starts(with: TrashFolder.infoSuffix.reversed())
    }

    /// Begins the transaction. On a full disk with no reserve yet (a first run), the begin record gets ENOSPC:
    /// roll-forward file deletes of the plan make room first, a batch at a time, until the reserve fits; they
    /// are returned (nil when none was needed or made) so the run reports them done and skips them.
    static func begin(_ metadata: Transaction.Metadata, steps: StepList, lock: ApplyLock, options: ApplyOptions,
                      journal: Journal) throws(FileSystemError) -> (Transaction, RoomBeforeJournal?) {
        do {
            return (try Transaction.begin(metadata, lock: lock, journal: journal), nil)
        } catch where error.errno == .noSpace {
            var room = RoomBeforeJournal(steps: steps, lock: lock, options: options)
            while true {
                let tried = room.freeBatch()
                journal.reserve.replenish()
                if tried && !journal.reserve.isFull { continue }
                do {
                    let transaction = try Transaction.begin(metadata, lock: lock, journal: journal)
                    return (transaction, room.done.isEmpty ? nil : room)
                } catch where error.errno == .noSpace && tried {}
            }
        }
    }

    /// Makes up to `batchSize` more deletes; false when no candidate was left to try.
    mutating func freeBatch() -> Bool {
        guard next < candidates.count else { return false }
        var made = 0
        while made < RoomBeforeJournal.batchSize && next < candidates.count {
            if let deadline = options.deadline, ContinuousClock.now >= deadline { next = candidates.count; break }
            let i = candidates[next]
            next += 1
            if let freed = deleteIfUnchanged(steps.action(i)) {
                done.append(i)
                bytesFreed += freed
                made += 1
            }
        }
        return true
    }

    /// The delete, identity checked just before the unlinkat; the bytes it freed, or nil when it was not made
    /// (changed, gone, in use, or a call failed: the run's own step handles it then, as it would have).
    private mutating func deleteIfUnchanged(_ action: Action) -> Int64? {
        guard let name = action.path.lastComponent, let identity = action.identity,
              let parent = try? directories.directoryIfPresent(containing: action.path),
              let found = try? parent.statusIfPresent(of: name),
              StepVerifier.refusal(of: found, identity, type: action.type, root: lock.state.rootStatus) == nil else { return nil }
        if options.inUseRules.contains(action.rule) {
            if inUseCheck == nil { inUseCheck = InUseCheck.now(root: lock.state.root, strategy: options.inUseStrategyInEffect) }
            if inUseCheck!.reason(parent: parent, name: name, path: action.path, type: action.type, identity: identity) != nil { return nil }
        }
        options.willChange?(action.path)
        do { try parent.removeFile(name) } catch { return nil }
        CrashPoint.changeMade()
        return found.allocatedSize
    }

    /// The report's line for what was made before the journal began.
    package var summary: String {
        "disk full: freed \(bytesFreed) bytes before journaling (\(done.count) file deletes made before the journal's begin record fit; each checked just before its unlink; they need no undo)"
    }
}
