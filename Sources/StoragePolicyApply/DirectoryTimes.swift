// Agreement with systemd-tmpfiles: removing an entry moves its folder's mtime to now, so cleaning part of an old
// folder would make it look fresh and keep it a whole `after` longer. Apply records a folder's atime and mtime
// before this run first changes its entries and, once the run's changes are made (before the commit), puts them
// back on every folder it removed entries from and added none to, as one journaled change (`times`, undone on
// rollback and recovery). A folder someone else changed meanwhile is left alone: after this run's last removal
// in a folder its mtime and ctime are noted, and any difference at the end (a create, rename, chmod or utime by
// anyone moves ctime) means another writer was there, and the times are theirs. See Docs/journal.md.
// Noted once per run of consecutive removals in a folder (steps are sorted by path) and at the end of every
// group, not after each removal: the value between two of this run's removals was never looked at.

@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyPlan

/// The folders one apply run removed entries from, and their times from before the run changed them.
package final class DirectoryTimes {
    private struct Tracked {
        var accessNs: Int64
        var modificationNs: Int64
        var identity: EntryIdentity
        /// mtime and ctime as this run's last removal left them; nil until one is made.
        var afterOurs: (modificationNs: Int64, changeNs: Int64)?
        /// This run also added an entry (mkdir, rename or move in, a tag): its new times are honest.
        var added = false
        /// The step of the last removal: the `times` intent belongs to it.
        var action = 0
        /// Notes of this folder waiting for the unlink workers: its times are not yet as the run leaves them.
        var waitingNotes = 0
        /// Its times were put back during the run (`intendFinished`): the end leaves it alone.
        var restored = false
    }

    /// `.`: a directory's times are set on its own descriptor.
    package static let itself = FileName(unchecked: [0x2E])

    /// Times an undo sets back on a folder it put entries into: those the folder had before the transaction it
    /// reverses changed it (its `times` intent; for a folder that transaction quarantined, its mtime as planned).
    package struct Target: Sendable, Equatable {
        /// nil: the atime the folder has when this run first changes it.
        package var accessNs: Int64?
        package var modificationNs: Int64
        package var identity: FolderIdentity
    }

    /// An undo's folders to set back (ApplyOptions.folderTimes), by path: only that very folder, and only while
    /// no one else changed it since this run's last change there.
    let targets: [RelativePath: Target]

    package init(targets: [RelativePath: Target] = [:]) { self.targets = targets }

    private var tracked: [RelativePath: Tracked] = [:]
    private var order: [RelativePath] = []
    /// Folders whose times `performRestores` put back, with their handles, for the fsync at the end.
    private var restoredEarly: [(path: RelativePath, handle: DirectoryHandle)] = []
    /// Tracked folders the run may still change (`intendFinished` drops those it has left for good).
    private var open: [RelativePath] = []

    /// The folders whose entries `action` removes and adds.
    private static func folders(_ action: Action) -> (removes: [RelativePath], adds: [RelativePath]) {
        switch action.kind {
        case .delete, .untag: ([action.path.parent], [])
        // `to` is the trash folder, or the item's path in it: either way that folder gains an entry.
        case .trash(let to): ([action.path.parent], [to, to.parent])
        case .rename(let to): ([], [action.path.parent, to.parent])
        case .mkdir, .writeTag: ([], [action.kind == .mkdir ? action.path.parent : action.path])
        case .mkfile, .symlink: ([], [action.path.parent])
        case .setxattr, .unmark, .setPermissions: ([], [])
        }
    }

    /// The folder of the last removal whose times are not noted yet, and its step.
    private var pending: (folder: RelativePath, step: Int)?
    /// The folder the previous step removed from, already tracked: most steps of a flat folder need no lookup.
    private var lastRemovedFrom: RelativePath?

    /// Before a step's changes: notes how the previous removals left their folder, unless this step removes from
    /// the same one; then notes the times of the folders it changes, the first time each is seen.
    func willChange(_ action: Action, in directories: DirectoryCache) {
        if continuesRun(action) != nil { return }
        if let pending { note(pending, in: directories) }
        pending = nil
        lastRemovedFrom = nil
        let (removes, adds) = Self.folders(action)
        for folder in removes + adds where tracked[folder] == nil {
            guard let handle = try? directories.directoryIfPresent(folder), let s = try? handle.status() else { continue }
            tracked[folder] = Tracked(accessNs: s.accessTimeNs, modificationNs: s.modificationTimeNs, identity: s.identity)
            order.append(folder)
            open.append(folder)
        }
    }

    /// After a step's changes were made: marks the folder it removed an entry from, to be noted once the run
    /// moves on to another folder (`willChange`) or ends a group (`settle`).
    func didChange(_ action: Action, step: Int, in directories: DirectoryCache) {
        if let last = continuesRun(action) {
            pending = (last, step)
            return
        }
        let (removes, adds) = Self.folders(action)
        for folder in adds { tracked[folder]?.added = true }
        // A folder an undo sets back: how this change left it, so a writer after it is told apart at the end.
        if !targets.isEmpty {
            for folder in adds where targets[folder] != nil && tracked[folder] != nil {
                if let handle = try? directories.directoryIfPresent(folder), let s = try? handle.status() {
                    tracked[folder]!.afterOurs = (s.modificationTimeNs, s.changeTimeNs)
                    tracked[folder]!.action = step
                }
            }
        }
        for folder in removes where tracked[folder] != nil {
            if let pending, pending.folder != folder { note(pending, in: directories) }
            pending = (folder, step)
        }
        let pendingHere = pending.map { action.path.isChild(of: $0.folder) } ?? false
        lastRemovedFrom = Self.onlyRemovesFrom(action) && pendingHere ? pending?.folder : nil
    }

    /// The tracked folder of the previous removal when `action` only removes another entry from it: such a step
    /// needs no lookup and no note of its own.
    private func continuesRun(_ action: Action) -> RelativePath? {
        guard let last = lastRemovedFrom, Self.onlyRemovesFrom(action), action.path.isChild(of: last) else { return nil }
        return last
    }

    /// Notes how the last removals left their folder; called at the end of every group (before the next one's
    /// journal writes), so the times noted are this run's, not those of someone writing later.
    func settle(in directories: DirectoryCache) {
        if let pending { note(pending, in: directories) }
        pending = nil
        lastRemovedFrom = nil
    }

    /// Set while file deletes are with the unlink workers (BackgroundUnlinks), which may be unlinking in several
    /// folders at once: a folder's note then waits (`noteWaiting`), since its times are not yet as this run's
    /// removals will leave them.
    var notesWait = false
    /// The notes waiting for the workers, in step order, the first `handlesKept` with their folder's descriptor:
    /// the directory cache may drop it (a new group clears it) before the workers are done there, and reopening
    /// it by path for its note was an open, an fstat and a close per folder.
    private var waiting: [(folder: RelativePath, step: Int, handle: DirectoryHandle?)] = []
    private static let handlesKept = 128

    /// The workers' unlinks are finished: notes each waiting folder, in order. `made` gives the step a folder's
    /// note belongs to: the step noted, or when that one's unlink failed the last one made there (nil: none).
    func noteWaiting(in directories: DirectoryCache, made: ((RelativePath, Int) -> Int?)? = nil) {
        notesWait = false
        let notes = waiting
        waiting.removeAll(keepingCapacity: true)
        for (folder, step, handle) in notes {
            tracked[folder]?.waitingNotes -= 1
            let noted = if let made { made(folder, step) } else { step }
            if let noted { record((folder, noted), through: handle, in: directories) }
        }
    }

    /// The workers have finished every unlink of a step below `step`, and none failed: the folders waiting for
    /// those are noted now, while the workers go on in later folders, so a writer there after the run's last
    /// removal keeps its times as when each folder was noted on moving on.
    func noteFinished(before step: Int, in directories: DirectoryCache) {
        var n = 0
        while n < waiting.count && waiting[n].step < step {
            tracked[waiting[n].folder]?.waitingNotes -= 1
            record((waiting[n].folder, waiting[n].step), through: waiting[n].handle, in: directories)
            n += 1
        }
        if n > 0 { waiting.removeFirst(n) }
    }

    private func note(_ pending: (folder: RelativePath, step: Int), in directories: DirectoryCache) {
        if notesWait {
            // Reached now (the steps just made there opened it: a cached handle), fstat'ed when the workers are done.
            let handle = waiting.count < Self.handlesKept && tracked[pending.folder] != nil
                ? try? directories.directoryIfPresent(pending.folder) : nil
            tracked[pending.folder]?.waitingNotes += 1
            return waiting.append((pending.folder, pending.step, handle))
        }
        record(pending, in: directories)
    }

    /// Notes the folder's times as the run's removals left them, through `handle` when one was kept for it.
    private func record(_ pending: (folder: RelativePath, step: Int), through kept: DirectoryHandle? = nil,
                        in directories: DirectoryCache) {
        guard tracked[pending.folder] != nil, let handle = kept ?? (try? directories.directoryIfPresent(pending.folder)),
              let s = try? handle.status() else { return }
        tracked[pending.folder]!.afterOurs = (s.modificationTimeNs, s.changeTimeNs)
        tracked[pending.folder]!.action = pending.step
    }

    /// The step of the last removal not noted yet.
    var pendingStep: Int? { pending?.step }

    /// The last removals `didChange` counted in the pending folder failed (they were made on worker threads and
    /// reported later): the folder's `times` intent belongs to the last removal made there (`lastMade`), or to none.
    func lastRemovalsFailed(lastMade: Int?) {
        guard let folder = pending?.folder else { return }
        pending = lastMade.map { (folder, $0) }
        if lastMade == nil { lastRemovedFrom = nil }
    }

    /// A delete or untag: removes one entry from its parent and adds nothing anywhere.
    private static func onlyRemovesFrom(_ action: Action) -> Bool {
        switch action.kind {
        case .delete, .untag: true
        default: false
        }
    }

    /// Puts back the recorded times, each as a journaled change, on every folder still as this run left it; then
    /// starts the fsyncs of the folders restored.
    package func restore(in transaction: Transaction) throws(FileSystemError) {
        settle(in: transaction.directories)
        // A batch at a time: the handle each folder was checked through is the one its times are set through,
        // not opened again by path (a container's 600 folders were each opened twice here), and a batch holds
        // few descriptors. One fsync per batch makes its intents durable first.
        var changes: [(change: Change, action: Int, identity: EntryIdentity, handle: DirectoryHandle)] = []
        // Every folder's times go on before any of the folders is synced: on a file system with one journal the
        // first fsync then commits all of them at once. Synced one by one as restored, each fsync committed the
        // times just set (and each next utimensat waited for that commit): a journal commit per folder.
        var restored = restoredEarly
        restoredEarly = []
        for folder in order {
            if changes.count == DirectoryTimes.batch {
                try restore(changes, in: transaction, keeping: &restored)
                changes.removeAll(keepingCapacity: true)
            }
            guard let t = tracked[folder], !t.restored, let change = restoring(folder, t, in: transaction) else { continue }
            changes.append(change)
        }
        try restore(changes, in: transaction, keeping: &restored)
        // Their last change in this run: synced through the handle at hand, not reopened at commit.
        transaction.syncRestored(restored)
    }

    /// The `times` change that puts `folder`'s recorded times back, with the handle it was checked through; nil
    /// when the run added to it, noted no removal there, it is gone or replaced, someone else changed it since
    /// the run's last removal (its mtime or ctime moved), or its times are already the recorded ones.
    private func restoring(_ folder: RelativePath, _ t: Tracked, in transaction: Transaction)
        -> (change: Change, action: Int, identity: EntryIdentity, handle: DirectoryHandle)? {
        if let target = targets[folder] {
            guard let after = t.afterOurs, let handle = try? transaction.directories.directoryIfPresent(folder),
                  let now = try? handle.status(), now.device == t.identity.device, now.inode == t.identity.inode,
                  now.device == target.identity.device, now.inode == target.identity.inode,
                  now.modificationTimeNs == after.modificationNs, now.changeTimeNs == after.changeNs else { return nil }
            let atime = target.accessNs ?? t.accessNs
            guard now.accessTimeNs != atime || now.modificationTimeNs != target.modificationNs else { return nil }
            return (.times(path: folder, accessNs: atime, modificationNs: target.modificationNs,
                           previousAccessNs: now.accessTimeNs, previousModificationNs: now.modificationTimeNs),
                    t.action, now.identity, handle)
        }
        guard !t.added, let after = t.afterOurs,
              let handle = try? transaction.directories.directoryIfPresent(folder), let now = try? handle.status(),
              now.device == t.identity.device, now.inode == t.identity.inode,
              now.modificationTimeNs == after.modificationNs, now.changeTimeNs == after.changeNs,
              now.accessTimeNs != t.accessNs || now.modificationTimeNs != t.modificationNs else { return nil }
        return (.times(path: folder, accessNs: t.accessNs, modificationNs: t.modificationNs,
                       previousAccessNs: now.accessTimeNs, previousModificationNs: now.modificationTimeNs),
                t.action, now.identity, handle)
    }

    // MARK: During the run

    /// A folder's times put back before the run's end: its journaled intent and the handle it was checked through.
    struct Restoring {
        fileprivate let intent: Intent
        fileprivate let path: RelativePath
        fileprivate let handle: DirectoryHandle
    }

    /// For a run of deletes only, in descending path order (every path under `F/` runs before any path that
    /// sorts below `F/`): the folders the run has left for good once it reaches `next` get their times back now,
    /// not at the end, so their `utimensat` overlaps the rest of the run instead of waiting for it (a container's
    /// 300 folders were 5 ms between its last unlink and its commit). Their fsyncs stay at the commit. Each is checked as at the
    /// end and its `times` intent journaled, made durable by the next group's fsync; `performRestores` sets
    /// them after it. A folder whose last removals are still with the workers, or not yet noted, waits.
    func intendFinished(before next: RelativePath, in transaction: Transaction) -> [Restoring] {
        var out: [Restoring] = []
        var kept = 0
        for k in open.indices {
            let folder = open[k]
            // At most a batch at a time: each holds its folder's descriptor until the group's fsync (1,200 folders
            // left at one group's start ran a 1,024-descriptor run out); the rest wait for a later group or the end.
            guard out.count < Self.batch, let t = tracked[folder], Self.isLeft(folder, at: next), t.waitingNotes == 0,
                  pending?.folder != folder, lastRemovedFrom != folder else {
                open[kept] = folder
                kept += 1
                continue
            }
            tracked[folder]!.restored = true
            guard let change = restoring(folder, t, in: transaction) else { continue }
            out.append(Restoring(intent: transaction.intend(change.change, action: change.action, identity: change.identity),
                                 path: folder, handle: change.handle))
        }
        open.removeLast(open.count - kept)
        return out
    }

    /// Sets the times `intendFinished` journaled (now durable by the group's fsync); the commit syncs the folders.
    func performRestores(_ restoring: [Restoring], in transaction: Transaction) throws(FileSystemError) {
        // Synced at the end with the others: an fsync while the workers unlink elsewhere writes the inode table
        // blocks their unlinks change, and they wait for that write (the run was slower, not faster).
        for r in restoring {
            try Self.set(r.intent, r.path, r.handle, in: transaction, keeping: &restoredEarly, upTo: Self.keptEarly)
        }
    }

    /// True when no path at or below `next` in byte order lies under `folder`: `next` sorts before `folder/`.
    /// The root holds every path: it is left only at the end.
    static func isLeft(_ folder: RelativePath, at next: RelativePath) -> Bool {
        let f = folder.bytes, p = next.bytes
        guard !f.isEmpty else { return false }
        let n = min(f.count, p.count)
        let c = f.withUnsafeBufferPointer { x in p.withUnsafeBufferPointer { y in n == 0 ? 0 : system_memcmp(y.baseAddress!, x.baseAddress!, n) } }
        if c != 0 { return c < 0 }
        // `next` is `folder` or a prefix of it (before `folder/`), or continues it: left when its next byte sorts before `/`.
        return p.count <= f.count || p[f.count] < 0x2F
    }

    /// Folders' times restored by one batch of intents (and as many descriptors held).
    private static let batch = 128
    /// Restored folders whose descriptors are kept for their fsyncs; the commit reopens any others.
    private static let keptForSync = 256
    /// Of those, the ones restored during the run: held while the groups' own folders are open (DirectoryCache's
    /// 256, the unlink workers' notes' 128, a batch being restored), so fewer, to stay far below a 1,024 limit.
    private static let keptEarly = 128

    private func restore(_ changes: [(change: Change, action: Int, identity: EntryIdentity, handle: DirectoryHandle)],
                         in transaction: Transaction, keeping restored: inout [(path: RelativePath, handle: DirectoryHandle)]) throws(FileSystemError) {
        guard !changes.isEmpty else { return }
        let intents = changes.map { transaction.intend($0.change, action: $0.action, identity: $0.identity) }
        try transaction.makeDurable()
        for (intent, change) in zip(intents, changes) {
            try Self.set(intent, change.change.path, change.handle, in: transaction, keeping: &restored, upTo: Self.keptForSync)
        }
    }

    /// Carries out a folder's durable `times` intent on the descriptor its state was checked through, and keeps
    /// that descriptor for the commit's fsync while fewer than `limit` are kept (the commit reopens the others).
    private static func set(_ intent: Intent, _ path: RelativePath, _ handle: DirectoryHandle, in transaction: Transaction,
                            keeping kept: inout [(path: RelativePath, handle: DirectoryHandle)], upTo limit: Int) throws(FileSystemError) {
        do {
            try transaction.perform(intent, on: handle)
        } catch where FailureScope(error).isItemLevel {
            // The folder keeps the times the removals gave it: what apply did before this existed.
        }
        if kept.count < limit { kept.append((path, handle)) }
    }
}
