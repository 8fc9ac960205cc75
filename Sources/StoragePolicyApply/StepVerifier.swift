// The checks made just before a step changes anything, and again on what it staged: the target is still the
// entry the plan saw (identity: device, inode, type, size, mtime), on the root's filesystem (mount), not in use
// by a process (in-use rules), its trash or restore folder still trusted. Each answers nil (go) or why the step
// is kept; none changes the tree or the run's record (its only state is the in-use tables it caches). The run
// records the answer (StepLedger).

@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyPlan
@_spi(Layers) import StoragePolicyEvaluation

package final class StepVerifier {
    /// Why a checked step is not carried out.
    package enum Refusal {
        case reason(String)
        case failed(FileSystemError)
    }

    private let ledger: StepLedger
    private let trash: RunTrashFolders
    package let options: ApplyOptions
    package let root: DirectoryHandle
    package let rootStatus: FileStatus
    /// Entries modified after this instant (ns) were changed since the plan: a directory holding one is kept.
    let planTimeNs: Int64?
    private var directories: DirectoryCache { ledger.transaction.directories }
    private var transaction: Transaction { ledger.transaction }
    /// Read on the first delete that needs it: the window since the plan shrinks to this run (see InUseCheck);
    /// its /proc/locks is read again for each group. Held by a class as a `let`, so each delete's question is
    /// asked of it in place: an optional stored struct was copied for every call (retaining every table it holds).
    private var inUse: InUseHolder?
    private final class InUseHolder {
        let check: InUseCheck
        let clearlyFree: ClearlyFree
        init(_ check: InUseCheck) { self.check = check; clearlyFree = check.clearlyFree }
    }
    /// The last rule asked about and its answer: consecutive steps mostly share a rule.
    private var lastInUseRule: (rule: String, checked: Bool)?

    /// `firstReading`: the run's first in-use reading, started before the run (`startFirstReading`); nil: read
    /// on the first delete that needs it.
    package init(ledger: StepLedger, trash: RunTrashFolders, options: ApplyOptions, lock: ApplyLock, planTimeNs: Int64?,
                 firstReading: WorkerPool.Pending<InUseCheck>? = nil) {
        self.ledger = ledger
        self.trash = trash
        self.options = options
        root = lock.state.root
        rootStatus = lock.state.rootStatus
        self.planTimeNs = planTimeNs
        rereading = firstReading
        awaitsFirstGroup = firstReading != nil
    }

    /// The run's first in-use reading, started now on a pool thread, when a delete of `actions` is of a rule that
    /// checks: Applier.apply starts it before it orders the steps and begins the journal. Its /proc/locks read
    /// waits for an RCU grace period (7 to 20 ms on the benchmark machine) and its descriptor scan lists every
    /// process: read lazily, on the first group's first question after the group's journal fsync, the whole run
    /// waited for both while nothing else ran. The reading is still this run's, made after the plan, as each
    /// group's flocks are read at the group's start.
    package static func startFirstReading(for actions: [Action], options: ApplyOptions,
                                          root: DirectoryHandle) -> WorkerPool.Pending<InUseCheck>? {
        guard !options.inUseRules.isEmpty else { return nil }
        // Consecutive actions mostly share a rule: its set is asked once per run of one rule.
        var lastRule: String? = nil
        let checked = actions.withUnsafeBufferPointer { a in
            a.contains { action in
                guard action.isDelete, action.rule != lastRule else { return false }
                lastRule = action.rule
                return options.inUseRules.contains(action.rule)
            }
        }
        guard checked else { return nil }
        // The groups' rereads take their flocks from this reading's listings (shared with the plan's, when the
        // caller handed the plan's strategy on).
        let strategy = options.inUseStrategyInEffect.sharingFlockListings()
        return WorkerPool.shared.compute { InUseCheck.now(root: root, strategy: strategy) }
    }

    /// The group's reread of the flocks, on a pool thread since `startGroup`; taken on the group's first
    /// in-use question (`inUseReason`).
    private var rereading: WorkerPool.Pending<InUseCheck>?
    /// True until the first group starts when the run's first reading was started before the run.
    private var awaitsFirstGroup = false

    /// A new group: the flocks are read again (the open-file table is kept for the run), on a pool thread while
    /// the run prepares and journals the group. Each listing of /proc/locks waits for an RCU grace period (the
    /// kernel takes its lock table's percpu rwsem for writing): 5 to 20 ms, which the group's first in-use
    /// question waited for. The run's listings are shared (FlockListings): the group takes the newest begun at
    /// most 100 ms before, usually the one the previous group began, and begins the next.
    func startGroup() {
        // The first group asks the run's first reading, still being made (it was started before the run).
        if awaitsFirstGroup {
            awaitsFirstGroup = false
            return
        }
        takeRereading()
        guard let check = inUse?.check else { return }
        rereading = WorkerPool.shared.compute { check.rereadingFlocks() }
    }

    /// The group's reread, once finished (waiting for it when it is not yet).
    private func takeRereading() {
        guard let rereading else { return }
        self.rereading = nil
        inUse = InUseHolder(rereading.value)
    }

    /// An entry that vanishes or stops being a directory while it is being checked is skipped, not a failure;
    /// one a call fails on (EACCES, EPERM...) is skipped with the error.
    /// `identityLater`: a file delete whose identity a worker checks just before its unlink; only the rest here.
    package func check(_ step: Step, identityLater: Bool = false) throws(FileSystemError) -> Refusal? {
        do {
            return try verify(step, identityLater: identityLater).map { .reason($0) }
        } catch {
            return try Self.refusal(checking: error)
        }
    }

    /// A call of a check failed: the entry vanished or changed while being checked, or the call fails on this
    /// entry (skipped with the error); anything else stops the run.
    package static func refusal(checking error: FileSystemError) throws(FileSystemError) -> Refusal {
        if DirectoryCache.meansAbsent(error.errno) {
            return .reason(error.errno == .noSuchFile ? "vanished while being checked"
                : "changed while being checked (no longer a directory); not followed")
        }
        guard FailureScope(error).isItemLevel else { throw error }
        return .failed(error)
    }

    /// Just before a trash move: why the folder it goes into, as the rename will use it, is refused; nil when
    /// trusted (or not a trash move).
    func trashDestinationRefusal(_ i: Int) throws(FileSystemError) -> Refusal? {
        guard ledger.steps.isTrashMove(i) else { return nil }
        do {
            return try trashDestinationProblem(i).map { .reason($0) }
        } catch {
            return try Self.refusal(checking: error)
        }
    }

    private func trashDestinationProblem(_ i: Int) throws(FileSystemError) -> String? {
        guard let destination = ledger.report.outcomes.destination(i), let folder = trash.folder(of: ledger.steps[i].action),
              let items = try directories.directoryIfPresent(containing: destination) else { return nil }
        return TrashTrust.problem(try items.status(), at: destination.parent, role: trash.itemsRole(folder))
    }

    /// The preparer of the run, whose folders (made, restored) an undo's restore may go into.
    weak var preparer: StepPreparer?

    /// An undo's restore from the quarantine, just before its rename: the entry is still in its slot and still the
    /// one quarantined, and the folder it goes into still passes (StepPreparer.destinationProblem).
    private func verifyQuarantineRestore(_ action: Action, _ slot: QuarantineSlot, _ folder: FolderIdentity,
                                         _ parent: FolderRecord?) throws(FileSystemError) -> String? {
        guard let window = try transaction.otherQuarantineWindow(slot, folder: folder) else {
            return "its quarantine window was purged: deleted for good"
        }
        guard let item = try window.statusIfPresent(of: slot.name) else { return "no longer in the quarantine of \(slot.transaction)" }
        if let identity = action.identity, let why = StepPreparer.heldMismatch(item, identity) { return why }
        return try preparer?.destinationProblem(action.path, parent: parent, itemOwner: item.userID)
    }

    /// nil when the step's target is still what the plan saw; otherwise why it is skipped.
    private func verify(_ step: Step, identityLater: Bool) throws(FileSystemError) -> String? {
        if case .quarantine(let slot, let folder, let parent)? = step.restore {
            return try verifyQuarantineRestore(step.action, slot, folder, parent)
        }
        let action = step.action
        let path = action.path
        switch action.kind {
        case .mkdir, .mkfile, .symlink:
            guard try directories.directoryIfPresent(containing: path) != nil else { return "its folder is missing or no longer a directory" }
            if let status = try directories.statusIfPresent(path) {
                let wanted: FileType = action.kind == .mkdir ? .directory : action.type ?? .directory
                return status.type == wanted ? "created by someone else meanwhile" : "a \(status.type.rawValue) appeared where the \(action.kind == .mkdir ? "directory" : wanted == .symlink ? "symlink" : "file") goes"
            }
            return nil
        case .untag:
            return try verifyDelete(action)
        case .setxattr, .unmark:
            guard let status = try directories.statusIfPresent(path) else { return "vanished since the plan" }
            if status.type == .symlink { return "replaced by a symlink since the plan (not followed)" }
            if !status.isOnSameMount(as: rootStatus) { return "on another filesystem; never crossed" }
            if let identity = action.identity, ledger.touched.contains(path), status.type == .directory {
                // This run created or moved entries inside it, which moved its mtime: the same directory still gets it.
                if status.device != identity.device || status.inode != identity.inode { return "replaced since the plan; kept" }
            } else if let identity = action.identity, let reason = Self.mismatch(status, identity, type: action.type) {
                return reason
            }
            if status.type != .directory && status.linkCount > 1 {
                return "has \(status.linkCount) hard links; an attribute would change every one of them"
            }
            return nil
        case .setPermissions:
            // A directory this run creates has no identity in the plan: the preparer checks it is the one made.
            guard let status = try directories.statusIfPresent(path) else { return action.identity == nil ? nil : "vanished since the plan" }
            // A layout file (`fix: true`) is checked again on the descriptor it is changed through (LayoutFileAccess).
            let wanted: FileType = action.type == .regular ? .regular : .directory
            guard status.type == wanted else {
                return "a \(status.type.rawValue) is where the layout \(wanted == .regular ? "file" : "directory") must be (never followed); its mode and owner are never changed"
            }
            if wanted == .regular, status.linkCount > 1 { return "has \(status.linkCount) hard links; its mode and owner are never changed" }
            if !status.isOnSameMount(as: rootStatus) { return "on another filesystem; never crossed" }
            if let identity = action.identity, status.device != identity.device || status.inode != identity.inode {
                return "replaced since the plan; its mode and owner are left alone"
            }
            return nil
        case .writeTag:
            guard let status = try directories.statusIfPresent(path) else { return "vanished since the plan" }
            return status.type == .directory ? nil : "no longer a directory"
        case .delete:
            if let reason = try ownershipProblem(action) { return reason }
            if !identityLater, let reason = try verifyDelete(action) { return reason }
            if let r = step.record, let reason = try verifyRecord(ledger.steps[r].action) { return reason }
            return try inUseReason(action)
        case .rename, .trash:
            guard let parent = try directories.directoryIfPresent(containing: path) else {
                return "vanished: its folder is gone or is no longer a directory"
            }
            guard let status = try parent.statusIfPresent(of: path.lastComponent!) else { return "vanished since the plan" }
            if let filters = options.ownershipFilters[action.rule],
               let why = filters.ownershipRejection(userID: status.userID, groupID: status.groupID) {
                return "rule '\(action.rule)' does not select it now (\(why)); kept"
            }
            if !status.isOnSameMount(as: rootStatus) { return "on another filesystem; never crossed" }
            if ledger.touched.contains(path), status.type == .directory, action.type == .directory {
                // This transaction renamed entries inside it, which moved its mtime: the same directory still goes.
                let identity = action.identity!
                return status.device == identity.device && status.inode == identity.inode ? nil : "replaced since the plan; kept"
            }
            if let reason = Self.mismatch(status, action.identity!, type: action.type) { return reason }
            return try restoreDestinationProblem(step, item: status)
        }
    }

    /// Why a delete of a rule with owner: or group: filters is kept: the entry's owner or group is not the
    /// rule's (a saved plan records neither, and anyone who can write it can edit it). One lstat, only for
    /// such rules; nil when it passes, or the rule has no such filter.
    private func ownershipProblem(_ action: Action) throws(FileSystemError) -> String? {
        guard let filters = options.ownershipFilters[action.rule] else { return nil }
        guard let status = try directories.statusIfPresent(action.path) else { return "vanished since the plan" }
        guard let why = filters.ownershipRejection(userID: status.userID, groupID: status.groupID) else { return nil }
        return "rule '\(action.rule)' does not select it now (\(why)); kept"
    }

    /// The staged check; a call on the entry that fails (EACCES on a folder inside it...) refuses the step too.
    func recheckStaged(_ action: Action, _ name: FileName) throws(FileSystemError) -> Refusal? {
        do {
            return try stagedProblem(action, name).map { .reason($0) }
        } catch where FailureScope(error).isItemLevel {
            return .failed(error)
        }
    }

    /// The check again, on the entry now in staging (nothing can swap it there): nil when it is what the plan saw.
    private func stagedProblem(_ action: Action, _ name: FileName) throws(FileSystemError) -> String? {
        try heldProblem(action, name, in: transaction.staging)
    }

    /// The check again on an entry this run moved into its quarantine (renamed first, checked there: the rename is
    /// what a file delete costs, and nothing can swap the entry once it is there). A file replaced in the window
    /// before the rename, or a folder written to, is moved back (the caller) and the step kept.
    func recheckQuarantined(_ action: Action, _ slot: QuarantineSlot) throws(FileSystemError) -> Refusal? {
        guard let window = transaction.quarantineWindow(slot) else { return nil }
        do {
            return try heldProblem(action, slot.name, in: window).map { .reason($0) }
        } catch where FailureScope(error).isItemLevel {
            return .failed(error)
        }
    }

    private func heldProblem(_ action: Action, _ name: FileName, in folder: DirectoryHandle) throws(FileSystemError) -> String? {
        guard let identity = action.identity, let status = try folder.statusIfPresent(of: name) else { return nil }
        if ledger.touched.contains(action.path) {
            guard status.type == .directory, status.device == identity.device, status.inode == identity.inode else {
                return "replaced while being removed; kept"
            }
            return try folder.openDirectory(name).entries().isEmpty ? nil : "written to while being removed; kept"
        }
        if let reason = Self.refusal(of: status, identity, type: action.type, root: rootStatus) { return reason }
        if case .untag = action.kind { return try BackupInclusion.stagedTagProblem(folder, name) }
        if status.type == .directory { return try newerEntry(inDirectory: try folder.openDirectory(name), at: action.path) }
        return nil
    }

    /// A trash item's record, checked with the item: nil when it is still what the plan saw, or already gone (the
    /// item then goes alone, which is the unit's after); otherwise why the item is kept with it.
    private func verifyRecord(_ record: Action) throws(FileSystemError) -> String? {
        guard let parent = try directories.directoryIfPresent(containing: record.path),
              let found = try parent.statusIfPresent(of: record.path.lastComponent!) else { return nil }
        guard let reason = Self.refusal(of: found, record.identity!, type: record.type, root: rootStatus) else { return nil }
        return "its record \(record.path.escaped) \(reason.hasSuffix("; kept") ? String(reason.dropLast(6)) : reason); kept with it"
    }

    private func verifyDelete(_ action: Action) throws(FileSystemError) -> String? {
        let path = action.path
        let identity = action.identity!
        guard let parent = try directories.directoryIfPresent(containing: path) else {
            return "vanished: its folder is gone or is no longer a directory"
        }
        let found = try parent.statusIfPresent(of: path.lastComponent!)
        if let status = found, ledger.touched.contains(path), status.isOnSameMount(as: rootStatus) {
            // Its planned contents went first and changed its mtime: only an empty directory goes now.
            guard status.type == .directory, status.device == identity.device, status.inode == identity.inode else {
                return Self.mismatch(status, identity, type: action.type) ?? "replaced since the plan"
            }
            let directory = try parent.openDirectory(path.lastComponent!)
            return try directory.entries().isEmpty ? nil : "not empty once its planned contents were removed; kept"
        }
        if let reason = Self.refusal(of: found, identity, type: action.type, root: rootStatus) { return reason }
        if let status = found, status.type == .directory {
            return try newerEntry(inDirectory: try parent.openDirectory(path.lastComponent!), at: path)
        }
        return nil
    }

    /// Checked again just before a restore's rename, on the entry as found then (`status`): the folder it goes
    /// into is still root's, the euid's or the item owner's.
    private func restoreDestinationProblem(_ step: Step, item status: FileStatus) throws(FileSystemError) -> String? {
        guard step.restore != nil, case .rename(let to) = step.action.kind,
              let folder = try directories.directoryIfPresent(containing: to) else { return nil }
        return TrashTrust.destinationProblem(try folder.status(), at: to.parent, itemOwner: status.userID)
    }

    private func checksInUse(_ rule: String) -> Bool {
        if let last = lastInUseRule, last.rule == rule { return last.checked }
        let checked = options.inUseRules.contains(rule)
        lastInUseRule = (rule, checked)
        return checked
    }

    /// Why a delete of an in-use-checked rule is kept now (open in a process, flocked), or nil.
    private func inUseReason(_ action: Action) throws(FileSystemError) -> String? {
        guard checksInUse(action.rule), let identity = action.identity else { return nil }
        takeRereading()
        let inUse = self.inUse ?? InUseHolder(InUseCheck.now(root: root, strategy: options.inUseStrategyInEffect.sharingFlockListings()))
        self.inUse = inUse
        // Most deletes are settled from their fields alone (no process has the inode open, /proc/locks rules out
        // a flock, not a directory): `reason` would find nothing, so neither its folder nor its name is looked up.
        if inUse.clearlyFree.answer(type: action.type, identity: identity) { return nil }
        guard let name = action.path.lastComponent,
              let parent = try directories.directoryIfPresent(containing: action.path) else { return nil }
        return inUse.check.reason(parent: parent, name: name, path: action.path, type: action.type, identity: identity,
                                  deadline: options.deadline)
    }

    /// Why a delete's target, found as `status` (nil: gone), is not what the plan saw; nil when it is. Made
    /// here for a directory, by a worker just before the unlink for a file (UnlinkWorkers).
    package static func refusal(of status: FileStatus?, _ identity: EntryIdentity, type: FileType?, root: FileStatus) -> String? {
        guard let status else { return "vanished since the plan" }
        if !status.isOnSameMount(as: root) { return "on another filesystem; never crossed" }
        return mismatch(status, identity, type: type)
    }

    /// Why `status` is not the entry `identity` (of `type`, when the plan says) describes, or nil when it is.
    /// The type is compared too: a freed inode number is often reused at once, by a symlink as easily as a file.
    package static func mismatch(_ status: FileStatus, _ identity: EntryIdentity, type: FileType?) -> String? {
        let replaced = status.device != identity.device || status.inode != identity.inode
        if replaced || (type != nil && status.type != type) {
            return status.type == .symlink ? "replaced by a symlink since the plan (not followed)"
                : "replaced since the plan (another \(status.type.rawValue) has this name now)"
        }
        if status.size != identity.size { return "modified since the plan (size \(identity.size) -> \(status.size)); kept" }
        if status.modificationTimeNs != identity.modificationTimeNs { return "modified since the plan (mtime changed); kept" }
        return nil
    }
}
