// How one apply (or trash, or restore) runs: the blast-radius cap, the time budget, and what the journal's
// begin record says about where the work came from. A value; holds no handles.

@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyModel

/// How one apply runs: the blast-radius cap, the time budget, and what the journal records about its origin.
package struct ApplyOptions: Sendable {
    /// The root as an absolute path: recorded in the journal and written into FreeDesktop `.trashinfo` files.
    package var rootPath: String
    /// Refuse, before changing anything, a plan deleting more entries than this.
    package var maxDelete: DeleteLimit?
    /// How the cap is named in the refusal, e.g. `--max-delete 1000` or `the policy's max-delete 10%`.
    package var maxDeleteLabel: String?
    /// Past this instant the run stops and rolls back what it did.
    package var deadline: ContinuousClock.Instant?
    /// How the budget is named in the rollback reason, e.g. `--max-runtime 30s`.
    package var deadlineLabel: String?
    /// The layout of trash folders that must be created; existing ones are detected.
    package var trashLayout: TrashRetention.Layout
    /// The policy file, recorded in the journal.
    package var policyPath: String?
    /// The policy's digest, recorded in the journal.
    package var policySHA256: String?
    /// The plan file applied, recorded in the journal.
    package var planFile: String?
    /// Intents per journal fsync in the first group; each next group is twice as large, up to 16 times this,
    /// so a small apply journals in small steps and a large one needs few fsyncs.
    package var groupSize: Int
    /// Strict mode (`--all-or-nothing`): an error on one entry (EACCES, EPERM, ENAMETOOLONG...) rolls the whole
    /// transaction back instead of skipping that entry. Entries that changed or vanished are skipped either way.
    package var allOrNothing: Bool
    /// Rules whose deletes are checked again, just before each one, for a process using the target (/proc read
    /// once when the first such delete comes, a BSD flock probed on the target itself): see InUseCheck.
    package var inUseRules: Set<String> = []
    /// How those checks learn which files are in use; nil: the platform's (see `inUseStrategyInEffect`).
    package var inUseStrategy: (any InUseStrategy)?
    /// The files the app says are busy (the library's `inUse` hook): see PlanOptions.busyFiles.
    package var busyFiles: (@Sendable (RelativePath) -> Bool)?

    /// `inUseStrategy`, or the platform's over `busyFiles`.
    package var inUseStrategyInEffect: any InUseStrategy {
        inUseStrategy ?? InUseStrategies.platform(busy: busyFiles)
    }
    /// The owner and group filters of the rules that have them, by rule name: a saved plan records neither, so
    /// each change of such a rule checks the entry's owner and group again just before it (StepVerifier).
    package var ownershipFilters: [String: EntryFilters] = [:]
    /// The owner each layout entry names, by path: `fix: true` changes an existing entry only when root, the euid
    /// or this owner owns it (Preflight.fixRefusal), checked again on the descriptor apply changes.
    package var layoutOwners: [RelativePath: UInt32] = [:]
    /// Stage every delete (rename into staging, purge after the commit) instead of deleting files roll-forward
    /// with `unlinkat`: the older design, kept for `--all-or-nothing` and for benchmarks comparing the two.
    package var stagesEveryDelete = false
    /// Checked file deletes are unlinked on worker threads (UnlinkWorkers).
    package var unlinksInBackground = true
    /// Looked at before each group: once set, the run stops there and rolls back as a crash would be after
    /// `recover` (the file deletes made stay made), with the rollback reason `cancelled` (ApplyRun.Cancelled).
    package var cancellation: CancellationFlag?
    /// Fewest consecutive file deletes of a group (in any folders) that go to worker threads; a smaller run is
    /// carried out on the run's own thread (BackgroundUnlinks.choose). Tests set 1 to send every one to a worker.
    package var unlinkWorkersFrom = 64
    /// The run's thread carries out the workers' jobs itself when it would otherwise wait for them
    /// (UnlinkWorkers.finish). Tests that tell the workers' unlinks from the run's own by thread turn it off.
    package var runThreadHelpsWorkers = true
    /// Rules whose deletes are held in the quarantine, with their windows in seconds (Policy.quarantineWindows:
    /// the policy decides, never a saved plan); empty: every delete is a plain delete.
    package var quarantineWindows: [String: Int64] = [:]
    /// Deletes the plan marks as never quarantined (a pressure rule's evictions: they must free space now).
    package var quarantineExempt: Set<RelativePath> = []
    /// An undo's folders whose times go back to what they were before the transaction it reverses (DirectoryTimes).
    package var folderTimes: [RelativePath: DirectoryTimes.Target] = [:]
    /// Tests only: called with a step's path after its target was checked and before it is changed, so race
    /// tests can change the tree exactly in that window. For a file delete made by an unlink worker it runs on
    /// that worker's thread, between the worker's check and its unlink.
    var willChange: (@Sendable (RelativePath) -> Void)?

    /// Options; only the root path is required.
    package init(rootPath: String, maxDelete: DeleteLimit? = nil, maxDeleteLabel: String? = nil,
                deadline: ContinuousClock.Instant? = nil, deadlineLabel: String? = nil,
                trashLayout: TrashRetention.Layout = .automatic, policyPath: String? = nil,
                policySHA256: String? = nil, planFile: String? = nil, groupSize: Int = 256, allOrNothing: Bool = false) {
        self.rootPath = rootPath; self.maxDelete = maxDelete; self.maxDeleteLabel = maxDeleteLabel
        self.deadline = deadline; self.deadlineLabel = deadlineLabel; self.trashLayout = trashLayout
        self.policyPath = policyPath; self.policySHA256 = policySHA256; self.planFile = planFile
        self.groupSize = max(1, groupSize)
        self.allOrNothing = allOrNothing
    }
}
