// Trash, restore and undo through the engine: the same session as apply (root opened, lock, recovery first,
// each step an ApplyEvent), then the applier's own trash, restore or undo as one journaled transaction.

@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyModel
@_spi(Layers) import StoragePolicyApply

extension StorageEngine {
    /// Where a trash, restore or undo runs, and how it waits.
    public struct Session: Sendable {
        /// The root as given.
        public var root: String
        /// The lock and journal outside the root (see ``StorageEngine/stateDirectory``).
        public var stateDirectory: String?
        /// Wait for another run holding the lock, or send ``ApplyEvent/lockHeld(pid:)`` and throw.
        public var waitForLock = true

        public init(root: String, stateDirectory: String? = nil, waitForLock: Bool = true) {
            self.root = root; self.stateDirectory = stateDirectory; self.waitForLock = waitForLock
        }
    }

    /// What a trash folder holds (each item's name, origin and time), sorted by name. Reads only; takes no lock.
    public static func trashItems(in folder: RelativePath, layout: TrashRetention.Layout, session: Session,
                                  events: (ApplyEvent) -> Void = { _ in }) throws(EngineError) -> [TrashedItem] {
        guard let opened = try EngineSession.open(root: session.root, stateDirectory: session.stateDirectory,
                                                  create: true, events: events) else { return [] }
        do {
            let handle = try DirectoryHandle.open(root: session.root)
            return try TrashListing.items(in: folder, root: handle, rootPath: opened.rootPath, layout: layout, state: opened.state)
        } catch {
            throw .fileSystem(error)
        }
    }

    /// Moves `paths` into the trash folder (`layout`), journaled like an apply, after recovery under the lock.
    public static func trash(_ paths: [RelativePath], into folder: RelativePath, layout: TrashRetention.Layout,
                             policy: String = "-", policyPath: String? = nil, session: Session,
                             events: (ApplyEvent) -> Void = { _ in }) throws(EngineError) -> ApplyReport {
        try trashTransaction(layout: layout, policyPath: policyPath, session: session, events: events) { applier, options throws(ApplyError) in
            try applier.trash(paths, into: folder, policy: policy, options: options)
        }
    }

    /// The trash folder the FreeDesktop specification gives the running user on the volume whose top folder
    /// (mount point) is `top`: `.Trash/UID` inside a root-owned, sticky `.Trash`, else `.Trash-UID`, relative to
    /// `top`; and a note when a `.Trash` there was passed over. Reads only.
    public static func volumeTrashFolder(top: String) throws(EngineError) -> (folder: RelativePath, note: String?) {
        let handle: DirectoryHandle
        do { handle = try DirectoryHandle.open(root: top) } catch { throw .fileSystem(error) }
        return TrashVolume.folder(top: handle, uid: system_geteuid())
    }

    /// Puts the items `names` of the trash folder back where they came from (or, for one name, to `destination`,
    /// a root-relative path whose folder exists), journaled like an apply; never replacing anything.
    public static func restore(_ names: [FileName], from folder: RelativePath, to destination: RelativePath? = nil,
                               layout: TrashRetention.Layout,
                               policy: String = "-", policyPath: String? = nil, session: Session,
                               events: (ApplyEvent) -> Void = { _ in }) throws(EngineError) -> ApplyReport {
        try trashTransaction(layout: layout, policyPath: policyPath, session: session, events: events) { applier, options throws(ApplyError) in
            try applier.restore(names, from: folder, to: destination, policy: policy, options: options)
        }
    }

    /// Empties the trash folder: every item (with `olderThan`, those trashed longer ago), with its record, as the
    /// trash rule's retention deletes them (`retain: olderThan`, or 0): planned and applied as one journaled
    /// apply, so an interrupted one is finished or rolled back by recovery, and an item whose date cannot be told
    /// (no `.trashinfo`, an unreadable or untrusted one) is kept and reported as the rule keeps it.
    public static func emptyTrash(_ folder: RelativePath, layout: TrashRetention.Layout, olderThan: PolicyDuration?,
                                  session: Session, events: (ApplyEvent) -> Void = { _ in }) throws(EngineError) -> ApplyResult {
        let retention = TrashRetention(retain: olderThan ?? PolicyDuration(seconds: 0), layout: layout)
        let rule = Rule(name: "trash-empty", path: folder, kind: .trash(retention))
        var request = ApplyRequest(root: session.root, source: .policy(Policy(name: "policyctl-trash-empty", rules: [rule])))
        request.stateDirectory = session.stateDirectory
        request.waitForLock = session.waitForLock
        guard let result = try apply(request, events: events) else { throw .apply(.refused("trash --empty declined; nothing was changed")) }
        return result
    }

    /// Undoes the committed `transaction`: `decide` sees what would be undone (under the lock, after recovery)
    /// and returns whether to go on. Returns that plan and the report (nil when `decide` declined or there was
    /// nothing to undo), or nil when the root has no state folder (nothing was ever applied).
    /// - Throws: ``EngineError/undoRefused(_:)`` when the transaction cannot be undone.
    public static func undo(_ transaction: String, session: Session, events: (ApplyEvent) -> Void = { _ in },
                            decide: (UndoPlan) -> Bool) throws(EngineError) -> (plan: UndoPlan, report: ApplyReport?)? {
        try locked(session, create: false, events: events) { lock, rootPath throws(EngineError) in
            let applier = Applier(holding: lock)
            let plan: UndoPlan
            do { plan = try applier.undoPlan(resolve(transaction, in: lock.state, undoable: true)) } catch { throw EngineError.wrap(error) }
            guard decide(plan), !plan.changes.isEmpty else { return (plan, nil) }
            let done = try report(events) { () throws(ApplyError) in
                try applier.undo(plan, options: ApplyOptions(rootPath: rootPath))
            }
            return (plan, done)
        }
    }

    /// `last`: the newest transaction the journal records (for an undo, the newest one an undo can reverse: not
    /// a purge). Any other word is the id itself.
    static func resolve(_ transaction: String, in state: StateDirectory, undoable: Bool) throws -> String {
        guard transaction == "last" else { return transaction }
        let newest = try JournalFiles.newest(in: state) { body in
            !undoable || (body.kind != TransactionKind.purge.rawValue)
        }
        guard let newest else { throw UndoError(message: "the journal has no transaction yet: 'last' names none") }
        return newest
    }

    /// A trash move or a restore under the lock, after recovery, in small groups.
    private static func trashTransaction(layout: TrashRetention.Layout, policyPath: String?, session: Session,
                                         events: (ApplyEvent) -> Void,
                                         _ work: (Applier, ApplyOptions) throws(ApplyError) -> ApplyReport) throws(EngineError) -> ApplyReport {
        let done = try locked(session, create: true, events: events) { lock, rootPath throws(EngineError) in
            var options = ApplyOptions(rootPath: rootPath, trashLayout: layout, policyPath: policyPath.map(PathNormalization.absolute))
            options.groupSize = 64
            return try report(events) { () throws(ApplyError) in try work(Applier(holding: lock), options) }
        }
        // With `create`, the state folder is made or the open throws: nil cannot come back, but is no trap.
        guard let done else { throw .stateFolder(FileSystemError(.mkdir, path: .root, errno: .noSuchFile)) }
        return done
    }

    /// Opens the session, takes the lock and recovers, then runs `body`; nil when there is no state folder
    /// and `create` is false.
    private static func locked<R>(_ session: Session, create: Bool, events: (ApplyEvent) -> Void,
                                  _ body: (ApplyLock, String) throws(EngineError) -> R) throws(EngineError) -> R? {
        guard let opened = try EngineSession.open(root: session.root, stateDirectory: session.stateDirectory,
                                                  create: create, events: events) else { return nil }
        let lock = try opened.lock(wait: session.waitForLock, events: events)
        _ = try opened.recover(holding: lock, events: events)
        return try body(lock, opened.rootPath)
    }

    /// Runs a transaction and sends its outcome as events: each step, the warnings, then committed (or refused/failed).
    static func report(_ events: (ApplyEvent) -> Void, everyItem: Bool = true,
                       _ work: () throws(ApplyError) -> ApplyReport) throws(EngineError) -> ApplyReport {
        let report: ApplyReport
        do { report = try work() } catch {
            if case .refused = error { events(.refused(error)) } else { events(.failed(error)) }
            throw .apply(error)
        }
        let items = report.lazyItems
        for i in items.indices {
            // Without every item, only the skipped ones: a done step's Item is not even made.
            if !everyItem, report.outcomes.isDone(i) { continue }
            let item = items[i]
            if !everyItem, case .unchanged = item.outcome { continue }
            switch item.outcome {
            case .done: events(.done(item))
            case .unchanged(let why): events(.unchanged(item, reason: why))
            case .skipped(let why): events(.skipped(item, reason: why))
            }
        }
        for warning in report.warnings { events(.warning(warning)) }
        events(.committed(report))
        return report
    }
}
