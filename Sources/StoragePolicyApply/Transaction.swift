// One transaction under ROOT/.policyctl: begin record, intents made durable before their changes, the
// changes themselves, commit, purge of staging, end record. Never makes a change whose intent is not durable.
@_spi(Layers) import StoragePolicyFileSystem

package final class Transaction {
    /// What the begin record says about a transaction.
    package struct Metadata {
        /// `apply`, `trash` or `restore`.
        package var kind: TransactionKind
        package var policy: String
        package var policySHA256: String?
        package var policyPath: String?
        package var planFile: String?
        package var rootPath: String
        package var actions: Int
        /// For an undo: the transaction it reverses.
        var reverses: String? = nil
        /// The quarantine windows (seconds) its deletes are held for: a quarantine folder is made at begin with a
        /// subfolder per window's end. Empty: nothing is quarantined.
        var quarantineWindows: Set<Int64> = []
    }

    /// The journal format this build writes (the `format` of every begin record): 2 since the quarantine
    /// (Docs/journal.md, "Format versions"). A begin without it is format 1, read as before.
    package static let journalFormat = 2

    // One thread (the run's) uses a transaction, and no access to its state overlaps another: the per-intent
    // state below skips the dynamic exclusivity checks (several per journaled delete).
    package let id: String
    /// `id`'s bytes, as every record of the transaction writes them.
    private let idBytes: [UInt8]
    package let lock: ApplyLock
    package let journal: Journal
    package let directories: DirectoryCache
    /// The fsyncs of the folders this run changed, all finished before the commit record (or the rollback).
    private let syncs = FolderSyncs()
    private(set) var staging: DirectoryHandle
    private let stagingParent: DirectoryHandle
    /// Every intent journaled so far, in order: what an in-process rollback undoes.
    @exclusivity(unchecked) private(set) var intents: [Intent] = []
    /// How many of `intents` are durable in the journal: only those may have been made, and only those are
    /// finished or undone by a rollback (a roll-forward unlink is never finished without its durable intent).
    @exclusivity(unchecked) private var durableIntents = 0
    /// Ops of the changes made so far: a roll-forward unlink not among them when the run fails was never made.
    /// A bit per op (ops are numbered 1, 2, 3... by `intend`): a set of a million Ints was several MB.
    @exclusivity(unchecked) private var made = OpBits()
    /// Steps recorded as skipped (none of their changes were made): undo leaves them alone.
    private(set) var skippedActions: Set<Int> = []
    @exclusivity(unchecked) private var sequence = 0
    @exclusivity(unchecked) private var nextOp = 1
    private var nextStagingNumber = 1
    /// Directories whose entries changed: fsynced before the commit record is written.
    @exclusivity(unchecked) private var dirty: Set<RelativePath> = []
    /// The folder marked dirty last: a flat folder's removals then need no parent path and no hashing.
    @exclusivity(unchecked) private var lastDirty: RelativePath?
    /// The directories this run's mkdirs made, by the dev and ino read from the descriptor opened (O_NOFOLLOW,
    /// O_DIRECTORY) right after each mkdirat and found owned by the euid and empty: a later mode or owner change
    /// of the path goes only to that very directory (StepPreparerPermissions), never to one swapped in.
    package private(set) var madeDirectories: [RelativePath: EntryIdentity] = [:]
    /// Entries whose own metadata (an xattr, mode, owner) changed: their inodes are fsynced before the commit too.
    @exclusivity(unchecked) private var attributed: Set<RelativePath> = []
    /// This transaction's quarantine (QuarantineFolders.swift), when its deletes are held back; nil otherwise, or
    /// when it could not be made (`quarantineUnavailable` then says why: those deletes are plain deletes).
    private(set) var quarantine: QuarantineFolders?
    package private(set) var quarantineUnavailable: String?
    /// Window ends by window length in seconds, as the subfolders are named.
    private(set) var untils: [Int64: String] = [:]
    /// The quarantine windows this run moved entries into (fsynced before the commit), and the last one added.
    private var quarantineDirty: Set<String> = []
    private var lastQuarantineDirty: String?
    /// Other transactions' quarantine folders an undo or a purge acts on, opened and identity-checked once.
    private var otherQuarantines: [String: QuarantineFolders] = [:]
    /// Their windows an undo took entries out of: fsynced before the commit, as every changed folder is.
    private var windowsDirty: [ObjectIdentifier: DirectoryHandle] = [:]

    private init(id: String, lock: ApplyLock, journal: Journal, staging: DirectoryHandle, stagingParent: DirectoryHandle) {
        self.id = id
        self.lock = lock
        self.journal = journal
        self.staging = staging
        self.stagingParent = stagingParent
        self.directories = DirectoryCache(root: lock.state.root, rootStatus: lock.state.rootStatus)
        precondition(JournalRecord.isValidTransaction(id), "a transaction id is a plain name")
        idBytes = Array(id.utf8)
    }

    /// Writes and fsyncs the begin record, then creates the staging folder `.policyctl/staging/<id>`.
    static func begin(_ metadata: Metadata, lock: ApplyLock, journal: Journal) throws(FileSystemError) -> Transaction {
        let now = WallClock.nowNs()
        let random = String(UInt32.random(in: 0...UInt32.max), radix: 16)
        let id = WallClock.compactUTC(ns: now) + "-" + String(repeating: "0", count: 8 - random.count) + random
        var w = Transaction.header(id: id, sequence: 1, type: .begin)
        w.string("time", WallClock.rfc3339(ns: now))
        w.int("timeNs", now)
        w.string("kind", metadata.kind.rawValue)
        w.string("policy", metadata.policy)
        if let sha = metadata.policySHA256 { w.string("policySHA256", sha) }
        if let path = metadata.policyPath { w.string("policyPath", path) }
        if let plan = metadata.planFile { w.string("plan", plan) }
        w.string("root", metadata.rootPath)
        w.int("rootDev", lock.state.rootStatus.device)
        w.int("rootIno", lock.state.rootStatus.inode)
        w.string("staging", lock.state.stagingPath(for: id))
        if !metadata.quarantineWindows.isEmpty { w.string("quarantine", lock.state.quarantinePath(for: id)) }
        w.int("format", journalFormat)
        w.int("actions", metadata.actions)
        if let reverses = metadata.reverses { w.string("reverses", reverses) }
        w.string("tool", StoragePolicyVersion.tool)
        w.int("pid", Int(system_getpid()))
        journal.append(w)
        try journal.flush()
        // The begin record is durable first, so a staging folder never exists without a journal entry.
        let name = lock.state.stagingName(for: id)
        do {
            // A fresh folder for each transaction: created exclusively (0700), checked through its descriptor.
            let (parent, staging) = try makeStaging(for: id, state: lock.state, journal: journal)
            let t = Transaction(id: id, lock: lock, journal: journal, staging: staging, stagingParent: parent)
            t.sequence = 1
            if !metadata.quarantineWindows.isEmpty { t.makeQuarantine(windows: metadata.quarantineWindows, now: now) }
            // Most steps journal one intent: room for them all at once, so a large run's array is not grown
            // by doubling (which held the old and the new array at once, and up to twice the room needed).
            t.intents.reserveCapacity(metadata.actions + metadata.actions / 8 + 16)
            return t
        } catch {
            // Nothing was changed: close the transaction at once rather than leave it for recovery.
            if let parent = try? lock.state.stagingParent(create: false) { try? parent.removeDirectory(name) }
            var w = Transaction.header(id: id, sequence: 2, type: .end)
            w.string("outcome", TransactionSummary.Outcome.rolledBack.rawValue)
            w.string("time", WallClock.rfc3339(ns: WallClock.nowNs()))
            w.string("reason", "could not set up staging: \(error)")
            journal.append(w)
            try? journal.flush()
            throw error
        }
    }

    /// Creates `.policyctl/staging/<name>` (and `staging` itself the first time), returning `staging`. A
    /// directory needs a block on most filesystems: on a full disk the journal's reserve is for this too.
    /// The transaction's staging folder; on ENOSPC the journal's reserve is given back and it is tried once more.
    private static func makeStaging(for id: String, state: StateDirectory,
                                    journal: Journal) throws(FileSystemError) -> (parent: DirectoryHandle, staging: DirectoryHandle) {
        do {
            return try state.createStaging(for: id)
        } catch where error.errno == .noSpace {
            guard journal.reserve.release() else { throw error }
            return try state.createStaging(for: id)
        }
    }

    /// Makes this transaction's quarantine folder (after the begin record is durable, as staging is). Where it
    /// cannot be made (a planted name, no room for a folder, a refused state folder), its deletes are plain deletes
    /// and the run says so: a quarantine is never improvised somewhere else.
    private func makeQuarantine(windows: Set<Int64>, now: Int64) {
        for seconds in windows {
            let (window, o1) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
            let (end, o2) = now.addingReportingOverflow(window)
            untils[seconds] = WallClock.compactUTC(ns: o1 || o2 ? Int64.max : end)
        }
        do {
            quarantine = try lock.state.createQuarantine(for: id, untils: Array(Set(untils.values)).sorted())
        } catch {
            quarantine = nil
            untils = [:]
            quarantineUnavailable = "\(lock.state.quarantinePath(for: id)): \(error)"
        }
    }

    /// The slot a delete held for `window` seconds goes to (a fresh name in that window's subfolder); nil when
    /// this transaction quarantines nothing for that window.
    func quarantineSlot(window seconds: Int64) -> QuarantineSlot? {
        guard let until = untils[seconds] else { return nil }
        return QuarantineSlot(transaction: id, until: until, name: stagingName())
    }

    /// The window subfolder a slot of this transaction's quarantine is in.
    func quarantineWindow(_ slot: QuarantineSlot) -> DirectoryHandle? {
        slot.transaction == id ? quarantine?.windows[slot.until] : nil
    }

    /// Another transaction's quarantine window (for an undo or a purge), its folder checked to be the one `folder`
    /// names; nil when that window is not there (purged).
    func otherQuarantineWindow(_ slot: QuarantineSlot, folder: FolderIdentity) throws(FileSystemError) -> DirectoryHandle? {
        try otherQuarantine(slot.transaction, folder: folder)?.window(slot.until, state: lock.state)
    }

    func otherQuarantine(_ transaction: String, folder: FolderIdentity) throws(FileSystemError) -> QuarantineFolders? {
        if let open = otherQuarantines[transaction] { return open }
        guard let opened = try lock.state.openQuarantine(for: transaction, identity: folder) else { return nil }
        otherQuarantines[transaction] = opened
        return opened
    }

    static func header(id: String, sequence: Int, type: JournalRecord.Kind) -> JSONWriter {
        var w = JSONWriter()
        w.string("tx", id)
        w.int("seq", sequence)
        w.literalString("type", type.literal)
        return w
    }

    private func record(_ type: JournalRecord.Kind) -> JSONWriter {
        var w = JSONWriter()
        header(type, into: &w)
        return w
    }

    /// The next record's first fields: the transaction, its sequence number, its type.
    private func header(_ type: JournalRecord.Kind, into w: inout JSONWriter) {
        sequence += 1
        Self.header(idBytes: idBytes, sequence: sequence, type: type, into: &w)
    }

    /// A record's first fields as `header(id:sequence:type:)` writes them, from an id checked once (letters,
    /// digits, '-', '_': nothing to escape) and copied into every record: escaping it again was a sixth of a
    /// delete's intent record. Keys joined with the literals around them (JournalLiteralNameTests).
    static func header(idBytes: [UInt8], sequence: Int, type: JournalRecord.Kind, into w: inout JSONWriter) {
        w.fields(#""tx":""#)
        idBytes.withUnsafeBufferPointer { if let start = $0.baseAddress { w.bytes(start, $0.count) } }
        w.literal(#"","seq":"#)
        w.integer(sequence)
        w.literal(#","type":""#)
        w.literal(type.literal)
        w.byte(0x22)
    }

    // MARK: Intents and changes

    /// A fresh name inside the staging folder: sequence numbers, so staged names never collide.
    func stagingName() -> FileName {
        defer { nextStagingNumber += 1 }
        return FileName(unchecked: Array(String(nextStagingNumber).utf8))
    }

    /// A temporary file name for `create`, unique to this transaction.
    func temporaryName() -> FileName {
        FileName(unchecked: Array(".policyctl-\(id)-\(nextOp).tmp".utf8))
    }

    /// Journals the intent to make `change` (buffered: durable after `makeDurable`).
    @discardableResult
    func intend(_ change: Change, action: Int, identity: EntryIdentity?) -> Intent {
        let intent = Intent(op: nextOp, action: action, change: change, identity: identity)
        nextOp += 1
        journal.appendRecord { w in
            header(.intent, into: &w)
            intent.encode(into: &w)
        }
        intents.append(intent)
        return intent
    }

    /// Makes every journaled record durable (one fsync for the whole group).
    func makeDurable() throws(FileSystemError) {
        try journal.flush()
        durableIntents = intents.count
    }

    /// Records that a step was not carried out, and why (not flushed on its own: nothing depends on it). For a
    /// step skipped because a call failed, `error` adds its errno and call, so the journal names them.
    func skip(action: Int, path: RelativePath, verb: StepVerb, reason: String, error: FileSystemError? = nil) {
        skippedActions.insert(action)
        var w = record(.skip)
        w.int("action", action)
        w.string("verb", verb.rawValue)
        w.path("path", path)
        w.string("reason", reason)
        if let error {
            w.string("errno", error.errno.name)
            w.string("call", error.operation.name)
        }
        journal.append(w)
    }

    /// Undoes the changes a step made before a later change of the same step failed, newest first, and makes
    /// the undo durable, so the step can be recorded as skipped (recovery then leaves all its intents alone).
    /// Returns nil when everything went back, otherwise why not: the caller must then roll back the run.
    func revert(_ made: [Intent]) -> String? {
        var rollback = Rollback(transaction: id, lock: lock, journal: journal, sequence: sequence, intents: made, undone: [])
        let failure = rollback.revert()
        // Entries moved back: handles cached under their old and new paths no longer name them.
        for intent in made {
            directories.forget(under: intent.change.path)
            if case .rename(_, let to) = intent.change { directories.forget(under: to) }
            dirty.insert(intent.change.path.parent)
        }
        return failure
    }

    /// Makes one change. The caller has checked the target's identity just before. On a full disk (a
    /// `.trashinfo`, a cache tag or a directory meeting ENOSPC) the journal's reserve is given back and the
    /// change tried once more: every change can be retried, a failed one left nothing behind. `folder`: a folder's
    /// own descriptor that its state was just checked through, for a `times` change on it (DirectoryTimes.restore):
    /// the times go on the folder that was checked, not on one reopened by path.
    func perform(_ intent: Intent, on folder: DirectoryHandle? = nil) throws(FileSystemError) {
        do {
            try make(intent.change, identity: intent.identity, on: folder)
        } catch where error.errno == .noSpace {
            guard journal.reserve.release() else { throw error }
            try make(intent.change, identity: intent.identity, on: folder)
        }
        made.insert(intent.op)
        CrashPoint.changeMade()
    }

    /// The caller hands `intent`'s unlink (checked just before) to worker threads: its folder is synced at commit.
    func unlinkingElsewhere(_ intent: Intent) {
        markDirty(containing: intent.change.path)
    }

    /// A worker made `intent`'s unlink.
    func madeElsewhere(op: Int) {
        made.insert(op)
    }

    /// The intent journaled as `op` (intents are kept in the order of their ops).
    func intent(op: Int) -> Intent? {
        var (low, high) = (0, intents.count)
        while low < high {
            let mid = (low + high) / 2
            if intents[mid].op < op { low = mid + 1 } else { high = mid }
        }
        return low < intents.count && intents[low].op == op ? intents[low] : nil
    }

    private func make(_ change: Change, identity: EntryIdentity?, on folder: DirectoryHandle?) throws(FileSystemError) {
        switch change {
        case .stage(let path, let name):
            let parent = try directories.directory(containing: path)
            try parent.rename(path.lastComponent!, to: name, in: staging, noReplace: true)
            directories.forget(under: path)
            dirty.insert(path.parent)
        case .rename(let from, let to):
            let source = try directories.directory(containing: from)
            let destination = try directories.directory(containing: to)
            try source.rename(from.lastComponent!, to: to.lastComponent!, in: destination, noReplace: true)
            directories.forget(under: from)
            dirty.insert(from.parent)
            dirty.insert(to.parent)
        case .mkdir(let path):
            try directories.directory(containing: path).makeDirectory(path.lastComponent!)
            dirty.insert(path.parent)
            FaultInjection.pause(at: .mkdirMade)
            noteMade(path)
        case .setxattr(let path, let attribute, let value, _):
            let parent = try directories.directory(containing: path)
            if let value {
                try parent.setExtendedAttribute(attribute, to: value, of: path.lastComponent)
            } else {
                try parent.removeExtendedAttribute(attribute, of: path.lastComponent)
            }
            attributed.insert(path)
        case .create(let path, let temp, let contents):
            let parent = try directories.directory(containing: path)
            try Transaction.writeFile(contents, named: path.lastComponent!, via: temp, in: parent)
            dirty.insert(path.parent)
        case .unlink(let path, _):
            // The caller checked identity, type and mount just before; unlinkat never follows a symlink.
            try directories.directory(containing: path).removeFile(path.lastComponent!)
            markDirty(containing: path)
        case .times(let path, let atime, let mtime, _, _):
            // On the directory's own descriptor (reached with O_NOFOLLOW from the root): never another's.
            let directory = if let folder { folder } else { try directories.directory(path) }
            try directory.setTimes(of: DirectoryTimes.itself, accessNs: atime, modificationNs: mtime)
        case .layoutFile(let path, let temp, let contents, let set):
            let parent = try directories.directory(containing: path)
            try Transaction.writeFile(contents, named: path.lastComponent!, via: temp, in: parent, permissions: set)
            dirty.insert(path.parent)
        case .symlink(let path, let target):
            try directories.directory(containing: path).makeSymlink(path.lastComponent!, to: target)
            dirty.insert(path.parent)
        case .quarantine(let path, let slot, let type, _, _):
            // A delete held back: a rename into this transaction's quarantine, never replacing anything.
            guard let window = quarantineWindow(slot) else { throw FileSystemError(.renameat2, path: path, errno: .noSuchFile) }
            try directories.directory(containing: path).rename(path.lastComponent!, to: slot.name, in: window, noReplace: true)
            // Only a folder can have handles cached under it (looking cost a pass over every cached one per file).
            if type == .directory || type == .unknown { directories.forget(under: path) }
            markDirty(containing: path)
            if slot.until != lastQuarantineDirty {
                quarantineDirty.insert(slot.until)
                lastQuarantineDirty = slot.until
            }
        case .unquarantine(let slot, let folder, let to):
            // Out of another transaction's quarantine (its folder the one its commit named) into the folder the
            // preparer and the verifier checked: never replacing anything.
            guard let window = try otherQuarantineWindow(slot, folder: folder) else {
                throw FileSystemError(.renameat2, path: to, errno: .noSuchFile)
            }
            try window.rename(slot.name, to: to.lastComponent!, in: directories.directory(containing: to), noReplace: true)
            dirty.insert(to.parent)
            // The window lost an entry: synced once, before the commit, with the other folders.
            windowsDirty[ObjectIdentifier(window)] = window
        case .purge(let transaction, let until, let folder):
            try Transaction.purgeWindow(transaction, until: until, folder: folder, state: lock.state, opened: otherQuarantine)
        case .permissions(let path, let set, _):
            // On the descriptor the step preparer opened (O_NOFOLLOW, component by component) and checked by
            // fstat: never by path, so a symlink swapped in since is never followed. Owner first: a chown by
            // root keeps a directory's setgid bit, and the mode then sets exactly the bits asked for.
            let directory: DirectoryHandle
            do {
                directory = try directories.directory(path)
            } catch where error.errno == .notDirectory || error.errno == .tooManySymbolicLinks {
                // Not a directory: a layout file (`fix: true`), opened and checked again on its own descriptor.
                guard let identity, let name = path.lastComponent else { throw error }
                switch try LayoutFileAccess.open(name, in: directories.directory(containing: path), expecting: identity) {
                case .opened(let file, _): try LayoutFileAccess.apply(set, to: file)
                case .refused: throw FileSystemError(.openat, path: path, errno: .noSuchFile)
                }
                attributed.insert(path)
                return
            }
            // The descriptor is the one checked: its dev and ino must still be those the step was prepared with
            // (a handle opened again since, after the cache was cleared, may name a directory swapped in).
            let status = try directory.status()
            guard let identity, status.device == identity.device, status.inode == identity.inode, status.type == .directory else {
                directories.forget(under: path)
                throw FileSystemError(.fstat, path: path, errno: .noSuchFile)
            }
            if set.owner != nil || set.group != nil { try directory.setOwner(set.owner, group: set.group) }
            if let mode = set.mode { try directory.setPermissions(mode) }
        }
        if case .permissions(let path, _, _) = change { attributed.insert(path) }
    }

    /// Records the directory a mkdirat just made: opened by name from its folder's descriptor (O_NOFOLLOW,
    /// O_DIRECTORY, never across a mount) and kept only when it is a directory owned by the euid with nothing
    /// in it. Anything else took the name between the mkdirat and the open (a co-tenant who can write the folder
    /// renamed it away and put its own there): nothing is recorded, so no mode or owner is set on it.
    private func noteMade(_ path: RelativePath) {
        guard let made = try? directories.directory(path), let status = try? made.status(),
              status.type == .directory, status.userID == system_geteuid(),
              // Out of the fault sweeps' count: a check beside the change, whose failure only keeps the mode.
              FaultInjection.uncounted({ (try? made.entries(limit: 1))?.isEmpty == true }) else {
            directories.forget(under: path)
            return
        }
        madeDirectories[path] = status.identity
    }

    private func markDirty(containing path: RelativePath) {
        if let lastDirty, path.isChild(of: lastDirty) { return }
        let parent = path.parent
        dirty.insert(parent)
        lastDirty = parent
    }

    /// Removes window `until` of `transaction`'s quarantine (its folder checked against `folder`) with everything in
    /// it, then the folder when nothing else is left in it. Nothing there already: done (a purge is rolled forward
    /// and may run twice). Never follows a symlink, never crosses a mount (removeTree).
    static func purgeWindow(_ transaction: String, until: String, folder: FolderIdentity, state: StateDirectory,
                            opened: ((String, FolderIdentity) throws(FileSystemError) -> QuarantineFolders?)? = nil,
                            deadline: ContinuousClock.Instant? = nil) throws(FileSystemError) {
        let found: QuarantineFolders?
        if let opened { found = try opened(transaction, folder) } else { found = try state.openQuarantine(for: transaction, identity: folder) }
        guard let quarantine = found else { return }
        if let window = try quarantine.window(until, state: state) {
            try Transaction.purge(staging: window, named: FileName(unchecked: Array(until.utf8)), in: quarantine.folder, deadline: deadline)
        }
        try quarantine.removeIfEmpty()
    }

    /// Puts an entry this transaction quarantined back where it was (never replacing anything): the step is then
    /// skipped, as `unstage` does for a staged one.
    func unquarantine(path: RelativePath, slot: QuarantineSlot) throws(FileSystemError) {
        guard let window = quarantineWindow(slot) else { throw FileSystemError(.renameat2, path: path, errno: .noSuchFile) }
        try window.rename(slot.name, to: path.lastComponent!, in: directories.directory(containing: path), noReplace: true)
        dirty.insert(path.parent)
    }

    /// Puts a staged entry back where it was (never replacing anything): the step is then skipped, and a
    /// rollback or recovery finds nothing in staging under that name to undo.
    func unstage(path: RelativePath, name: FileName) throws(FileSystemError) {
        let parent = try directories.directory(containing: path)
        try staging.rename(name, to: path.lastComponent!, in: parent, noReplace: true)
        dirty.insert(path.parent)
    }

    /// Writes `contents` to `temp`, fsyncs it, then renames it to `name` without replacing anything: readers
    /// see no file or the whole file, never half of one.
    /// `permissions` (a layout file's) are set on the new file's descriptor before it has its name: owner first,
    /// then the mode, so no one ever sees it under its name with other ones.
    static func writeFile(_ contents: [UInt8], named name: FileName, via temp: FileName,
                          in directory: DirectoryHandle, permissions: Permissions? = nil) throws(FileSystemError) {
        do throws(FileSystemError) {
            let file = try directory.openFile(temp, options: [.writeOnly, .create, .exclusive], permissions: 0o644)
            // O_CREAT|O_EXCL|O_NOFOLLOW made it, so the descriptor is this run's new file: checked anyway (a
            // regular file of the euid's, one link, empty) before anything is written or its owner set.
            let made = try file.status()
            guard made.type == .regular, made.userID == system_geteuid(), made.linkCount == 1, made.size == 0 else {
                throw FileSystemError(.openat, path: directory.path.appending(temp), errno: .fileExists)
            }
            try file.write(contents)
            if let permissions {
                if permissions.owner != nil || permissions.group != nil { try file.setOwner(permissions.owner, group: permissions.group) }
                if let mode = permissions.mode { try file.setPermissions(mode) }
            }
            try file.sync()
            try directory.rename(temp, to: name, noReplace: true)
        } catch {
            try? directory.removeFileIfPresent(temp)
            throw error
        }
    }

    // MARK: Commit and purge

    /// Fsyncs every directory whose entries changed, then writes and fsyncs the commit record: from here on
    /// the transaction is applied, and recovery only finishes the purge.
    func commit(counts: ActionCounts, bytesFreed: Int64, skipped: Int, quarantined: Int = 0, bytesQuarantined: Int64 = 0) throws(FileSystemError) {
        try syncDirectories()
        var w = record(.commit)
        var c = JSONWriter()
        for (key, n) in counts.byName.sorted(by: { $0.key < $1.key }) { c.int(named: key, n) }
        w.object("counts", c)
        w.int("bytesFreed", bytesFreed)
        w.int("skipped", skipped)
        // The quarantine folder it made: every later use (undo, purge, listing) must find this very folder.
        if let quarantine {
            w.int("quarantineDev", quarantine.identity.device)
            w.int("quarantineIno", quarantine.identity.inode)
            w.int("quarantined", quarantined)
            w.int("bytesQuarantined", bytesQuarantined)
        }
        journal.append(w)
        try journal.flush()
    }

    /// The ends of this transaction's quarantine windows (RFC 3339), earliest first.
    var quarantineEnds: [String] {
        Set(untils.values).sorted().map { QuarantineSlot.instant($0).map { WallClock.rfc3339(ns: $0) } ?? $0 }
    }

    /// After the end: a quarantine that holds nothing (every delete skipped) is removed, and so is another
    /// transaction's that an undo emptied.
    func dropEmptyQuarantine() {
        try? quarantine?.removeIfEmpty()
        for other in otherQuarantines.values { try? other.removeIfEmpty() }
    }

    func syncDirectories() throws(FileSystemError) {
        // Started 128 at a time: a run that dirtied thousands of folders overlaps their fsyncs with opening the
        // next ones.
        var handles: [DirectoryHandle] = []
        for path in dirty.sorted(by: >) {
            // A directory staged or renamed later in the same transaction is synced through its parent.
            guard let handle = try directories.directoryIfPresent(path) else { continue }
            handles.append(handle)
            if handles.count == 128 {
                syncs.add(handles)
                handles.removeAll(keepingCapacity: true)
            }
        }
        handles.append(staging)
        // The quarantine's windows gained entries: synced before the commit as every changed folder is.
        if let quarantine {
            for until in quarantineDirty { if let window = quarantine.windows[until] { handles.append(window) } }
        }
        handles += windowsDirty.values
        syncs.add(handles)
        try syncs.wait()
        // The inodes whose xattrs, mode or owner changed (an app trash item's stamps, a marker, a layout entry's
        // mode): a folder synced above holds their names, not these. Few (markers, stamps): one by one.
        for path in attributed.sorted(by: >) where !dirty.contains(path) {
            try directories.syncEntry(path)
        }
        attributed.removeAll()
        dirty.removeAll()
        lastDirty = nil
    }

    /// Folders whose times were just restored through these handles (DirectoryTimes.restore checked each is the
    /// folder this run changed, and the run changes them no more): the dirty ones' fsyncs start now, through
    /// those descriptors, and the commit does not open them once more to sync them.
    func syncRestored(_ folders: [(path: RelativePath, handle: DirectoryHandle)]) {
        var owed: [DirectoryHandle] = []
        for (path, handle) in folders where dirty.remove(path) != nil {
            owed.append(handle)
            // markDirty's shortcut assumes lastDirty is in the set.
            if lastDirty == path { lastDirty = nil }
        }
        syncs.add(owed)
    }

    /// Removes everything staged (through descriptors, never following a symlink), then the staging folder.
    /// Past `deadline` it stops with `.pastDeadline`: the transaction is committed, and recovery finishes it.
    func purge(deadline: ContinuousClock.Instant? = nil) throws(FileSystemError) {
        try Transaction.purge(staging: staging, named: lock.state.stagingName(for: id), in: stagingParent, deadline: deadline)
    }

    /// The end record: the transaction is closed and recovery will leave it alone.
    func end(outcome: TransactionSummary.Outcome, kept: Int = 0) throws(FileSystemError) {
        var w = record(.end)
        w.string("outcome", outcome.rawValue)
        w.string("time", WallClock.rfc3339(ns: WallClock.nowNs()))
        if kept > 0 { w.int("kept", kept) }
        journal.append(w)
        try journal.flush()
    }

    // MARK: Rollback

    /// Undoes every change made so far, in reverse order, recording progress so a crash midway resumes.
    package func rollback(reason: String) -> Rollback.Result {
        // Folder fsyncs still in flight finish first: the rollback's own changes come after them.
        try? syncs.wait()
        // A roll-forward delete the run had not reached (or whose unlink failed) is not made now: the run
        // stopped (an I/O error, --max-runtime), so it is recorded as skipped, durable with the rollback record.
        // Only a crash leaves such intents to recovery, which finishes them.
        for intent in intents.prefix(durableIntents) where !made.contains(intent.op) && !skippedActions.contains(intent.action) {
            if case .unlink(let path, _) = intent.change {
                skip(action: intent.action, path: path, verb: .delete, reason: "not reached before the run stopped")
            }
        }
        var rollback = Rollback(transaction: id, lock: lock, journal: journal, sequence: sequence,
                                intents: intents.prefix(durableIntents).filter { !skippedActions.contains($0.action) }, undone: [])
        let result = rollback.run(reason: reason)
        sequence = rollback.sequence
        return result
    }
}

/// A set of intent ops (1, 2, 3...), a bit each.
struct OpBits {
    private var words: [UInt64] = []

    mutating func insert(_ op: Int) {
        let (w, b) = op.quotientAndRemainder(dividingBy: 64)
        if w >= words.count { words.append(contentsOf: repeatElement(0, count: max(w + 1 - words.count, words.count))) }
        words[w] |= 1 << UInt64(b)
    }

    func contains(_ op: Int) -> Bool {
        let (w, b) = op.quotientAndRemainder(dividingBy: 64)
        return w < words.count && words[w] & (1 << UInt64(b)) != 0
    }
}
