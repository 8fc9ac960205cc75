// Undoes a transaction's changes in reverse order by looking at the tree, so running it twice (after a crash
// mid-rollback) converges. Never deletes anything: what cannot go back stays in staging and is reported. The
// one change that goes forward instead is a roll-forward `unlink`: it is finished, only on an entry that still
// has the identity, type and mount its intent recorded.

@_spi(Layers) import StoragePolicyFileSystem

package struct Rollback {
    /// Something that could not be put back; it is kept, never removed.
    package struct Kept: Sendable, Hashable {
        package var path: RelativePath
        package var reason: String
    }

    package struct Result: Sendable {
        /// Changes undone by this run.
        var undone = 0
        /// Roll-forward deletes this run finished (recovery after a crash): counted apart, they went forward.
        package var finished = 0
        package var kept: [Kept] = []
        /// Roll-forward deletes that stayed done (made by the run, or finished now or by an earlier recovery),
        /// and their recorded sizes: the end record says so (`partially rolled back`, Docs/journal.md).
        var deletesDone = 0
        var bytesDone: Int64 = 0
        /// Undo steps that failed with an I/O error, or changes still found made after their undo: the rollback
        /// is incomplete (no end record), run recovery again.
        package var failures: [String] = []
        /// Journal writes that failed; the tree is restored but the journal may not say so.
        var journalErrors: [FileSystemError] = []
        var complete: Bool { failures.isEmpty }
    }

    private enum Undo {
        case nothing
        case undone([RelativePath])
        case kept(Kept)
    }

    package let transaction: String
    package let lock: ApplyLock
    package let journal: Journal
    private(set) var sequence: Int
    let intents: [Intent]
    var undone: Set<Int>
    private let directories: DirectoryCache
    private var staging: DirectoryHandle?
    private var stagingParent: DirectoryHandle?
    /// Entries whose xattrs, mode or owner an undo put back: their own inodes are synced with the batch, as the
    /// folders are (a folder's fsync does not make an entry's attributes durable).
    private var reattributed: Set<RelativePath> = []
    /// This transaction's own quarantine (its deletes held back), opened on first need.
    private var quarantine: QuarantineFolders?
    /// Other transactions' quarantine folders (an undo's restores go back into them), by transaction.
    private var otherQuarantines: [String: QuarantineFolders] = [:]
    /// Quarantine windows whose entries changed since the last `undone` record: fsynced with it, as staging is.
    private var windowsTouched: [ObjectIdentifier: DirectoryHandle] = [:]
    /// Set by recovery when the journal had damaged or refused records: staged entries no intent accounts
    /// for are then kept (reported, never removed) instead of failing every later recovery.
    var unaccountedAreKept = false

    package init(transaction: String, lock: ApplyLock, journal: Journal, sequence: Int, intents: [Intent], undone: Set<Int>) {
        self.transaction = transaction
        self.lock = lock
        self.journal = journal
        self.sequence = sequence
        self.intents = intents
        self.undone = undone
        self.directories = DirectoryCache(root: lock.state.root, rootStatus: lock.state.rootStatus)
    }

    private mutating func record(_ type: JournalRecord.Kind) -> JSONWriter {
        sequence += 1
        return Transaction.header(id: transaction, sequence: sequence, type: type)
    }

    private mutating func write(_ w: borrowing JSONWriter, flush: Bool, into result: inout Result) {
        journal.append(w)
        guard flush else { return }
        do { try journal.flush() } catch { result.journalErrors.append(error) }
    }

    /// What the second look says of a change it finds still pending: a roll-forward delete is finished, not undone.
    static func stillPending(_ intent: Intent) -> String {
        if case .unlink = intent.change { return "its roll-forward delete is not finished yet (op \(intent.op)); the next recovery retries it" }
        return "still changed after its undo (op \(intent.op))"
    }

    package mutating func run(reason: String) -> Result {
        var result = Result()
        var w = record(.rollback)
        w.string("reason", reason)
        write(w, flush: true, into: &result)

        let name = lock.state.stagingName(for: transaction)
        do {
            // Checked like every folder of state: a staging folder someone else made is never used.
            let opened = try lock.state.openStaging(for: transaction)
            stagingParent = opened?.parent
            staging = opened?.staging
        } catch where error.errno == .noSuchFile {
            // Never made (a crash before the staging folder existed), or already removed.
        } catch {
            // Without staging nothing staged can go back, and the folder would outlive the transaction.
            result.failures.append(error.description)
            return result
        }

        var batch: [Int] = []
        var touched: Set<RelativePath> = []
        for intent in intents.reversed() where !undone.contains(intent.op) {
            let outcome: Undo
            do {
                outcome = try undo(intent, act: true)
            } catch {
                result.failures.append(error.description)
                continue
            }
            switch outcome {
            case .nothing:
                // Not recorded as undone: the next recovery looks again (a check can misread the tree once).
                break
            case .undone(let directories):
                switch intent.change {
                case .unlink, .purge: result.finished += 1
                default: result.undone += 1
                }
                touched.formUnion(directories)
                CrashPoint.changeMade()
                // Only an undo that acted is recorded, so a resumed recovery skips exactly what it did.
                batch.append(intent.op)
                undone.insert(intent.op)
            case .kept(let kept):
                if !result.failures.isEmpty, case .mkdir = intent.change {
                    // An undo that failed earlier in this run (a file it should have removed) may be what keeps this
                    // directory from being empty: not final, the next recovery tries again.
                    continue
                }
                result.kept.append(kept)
                var k = record(.kept)
                k.int("op", intent.op)
                k.path("path", kept.path)
                k.string("reason", kept.reason)
                write(k, flush: false, into: &result)
            }
            if batch.count >= 64 {
                progress(&batch, touched: &touched, into: &result)
            }
        }
        progress(&batch, touched: &touched, into: &result)
        guard result.complete else { return result }

        // A second look before the transaction is closed for good: a change the first pass judged "not made"
        // (a check that misread the tree) is still there. Then it is not closed, and the next recovery retries.
        for intent in intents.reversed() {
            do {
                if case .undone = try undo(intent, act: false) {
                    result.failures.append("\(intent.change.path.escaped): \(Self.stillPending(intent))")
                } else if case .unlink = intent.change, try deleteStayedDone(intent) {
                    result.deletesDone += 1
                    result.bytesDone += intent.identity?.size ?? 0
                }
            } catch {
                result.failures.append(error.description)
            }
        }
        guard result.complete else { return result }

        if let stagingParent {
            // Empty once everything went back; kept items keep it (and are listed in the journal).
            do {
                try stagingParent.removeDirectory(name)
                try stagingParent.sync()
            } catch where error.errno == .noSuchFile {
            } catch where error.errno == .directoryNotEmpty {
                let keptNames = Set(intents.compactMap { intent -> FileName? in
                    guard case .stage(let path, let staged) = intent.change, result.kept.contains(where: { $0.path == path }) else { return nil }
                    return staged
                })
                let left = ((try? staging?.entries()) ?? []).map(\.name).filter { !keptNames.contains($0) }
                if !left.isEmpty && unaccountedAreKept {
                    for name in left {
                        let kept = Kept(path: RelativePath([name]), reason: "staged by a damaged journal record; kept as \(lock.state.stagingPath(for: transaction))/\(name.escaped)")
                        result.kept.append(kept)
                        var k = record(.kept)
                        k.path("path", kept.path)
                        k.string("reason", kept.reason)
                        write(k, flush: false, into: &result)
                    }
                } else if !left.isEmpty {
                    result.failures.append("staging still holds \(left.map(\.escaped).joined(separator: ", ")) not accounted for")
                    return result
                }
            } catch {
                result.failures.append(error.description)
                return result
            }
        }
        // Its quarantine goes too once everything in it went back (kept items keep it, and are listed).
        do { try ownQuarantine()?.removeIfEmpty() } catch {
            result.failures.append(error.description)
            return result
        }
        var end = record(.end)
        // The journal tells what stayed done: file deletes the run made or recovery finished are not rolled back.
        if result.deletesDone > 0 {
            end.string("outcome", TransactionSummary.Outcome.partiallyRolledBack.rawValue)
            var c = JSONWriter()
            c.int(named: StepVerb.delete.rawValue, result.deletesDone)
            end.object("counts", c)
            end.int("bytesFreed", result.bytesDone)
        } else {
            end.string("outcome", TransactionSummary.Outcome.rolledBack.rawValue)
        }
        end.string("time", WallClock.rfc3339(ns: WallClock.nowNs()))
        if !result.kept.isEmpty { end.int("kept", result.kept.count) }
        write(end, flush: true, into: &result)
        return result
    }

    /// Undoes `intents` (one step's changes already made) in reverse order and fsyncs the directories that
    /// changed, writing no record: the caller records the step as skipped afterwards. Returns nil when every
    /// change is back (or was never made), otherwise what stopped it; nothing is ever deleted here either.
    mutating func revert() -> String? {
        let name = FileName(unchecked: Array(transaction.utf8))
        staging = try? lock.state.stagingParent(create: false)?.openDirectory(name)
        var touched: Set<RelativePath> = []
        for intent in intents.reversed() {
            do {
                switch try undo(intent, act: true) {
                case .nothing: break
                case .undone(let directories):
                    touched.formUnion(directories)
                    CrashPoint.changeMade()
                case .kept(let kept): return "\(kept.path.escaped): \(kept.reason)"
                }
                // The second look, as a full rollback does: a change still there is not undone.
                if case .undone = try undo(intent, act: false) {
                    return "\(intent.change.path.escaped): \(Self.stillPending(intent))"
                }
            } catch {
                return error.description
            }
        }
        do {
            for path in touched.sorted(by: >) { try directories.directoryIfPresent(path)?.sync() }
            for path in reattributed.sorted(by: >) { try directories.syncEntry(path) }
            reattributed.removeAll()
            try staging?.sync()
            for window in windowsTouched.values { try window.sync() }
            windowsTouched.removeAll()
        } catch {
            return error.description
        }
        return nil
    }

    /// True when the entry a roll-forward `unlink` recorded is no longer at its path (the run made it, or a
    /// recovery finished it); false when it is still there, modified in place (left alone, not deleted).
    private func deleteStayedDone(_ intent: Intent) throws(FileSystemError) -> Bool {
        guard let identity = intent.identity, let name = intent.change.path.lastComponent,
              let parent = try directories.directoryIfPresent(containing: intent.change.path),
              let status = try parent.statusIfPresent(of: name) else { return true }
        return status.device != identity.device || status.inode != identity.inode
    }

    /// Makes the undos so far durable (directories first, then the `undone` record naming them).
    private mutating func progress(_ batch: inout [Int], touched: inout Set<RelativePath>, into result: inout Result) {
        guard !batch.isEmpty else { return }
        for path in touched.sorted(by: >) {
            do {
                try directories.directoryIfPresent(path)?.sync()
            } catch {
                result.failures.append(error.description)
            }
        }
        for path in reattributed.sorted(by: >) {
            do {
                try directories.syncEntry(path)
            } catch {
                result.failures.append(error.description)
            }
        }
        reattributed.removeAll()
        try? staging?.sync()
        for window in windowsTouched.values {
            do { try window.sync() } catch { result.failures.append(error.description) }
        }
        windowsTouched.removeAll()
        touched.removeAll()
        var w = record(.undone)
        w.integers("ops", batch)
        write(w, flush: true, into: &result)
        batch.removeAll()
    }

    /// This transaction's quarantine folder, checked (owner, mode, device); nil when it was never made or is gone.
    private mutating func ownQuarantine() throws(FileSystemError) -> QuarantineFolders? {
        if let quarantine { return quarantine }
        quarantine = try lock.state.openQuarantine(for: transaction, identity: nil)
        return quarantine
    }

    private mutating func otherQuarantine(_ id: String, _ folder: FolderIdentity) throws(FileSystemError) -> QuarantineFolders? {
        if let open = otherQuarantines[id] { return open }
        let opened = try lock.state.openQuarantine(for: id, identity: folder)
        otherQuarantines[id] = opened
        return opened
    }

    /// Undoes one change if the tree shows it was made; returns the directories whose entries changed. With
    /// `act` false it only looks: `.undone` then means "still made, would be undone".
    private mutating func undo(_ intent: Intent, act: Bool) throws(FileSystemError) -> Undo {
        switch intent.change {
        case .quarantine(let path, let slot, _, _, _):
            // As a staged delete: back from the quarantine to its path, never replacing anything.
            let place = "\(lock.state.quarantinePath(for: transaction))/\(slot.until)/\(slot.name.escaped)"
            guard slot.transaction == transaction, let window = try ownQuarantine()?.window(slot.until, state: lock.state),
                  try window.statusIfPresent(of: slot.name) != nil else { return .nothing }
            guard let parent = try directories.directoryIfPresent(containing: path) else {
                return .kept(Kept(path: path, reason: "its folder is gone; kept as \(place)"))
            }
            if !act, try parent.statusIfPresent(of: path.lastComponent!) != nil {
                return .kept(Kept(path: path, reason: "something new is at that path; kept as \(place)"))
            }
            guard act else { return .undone([]) }
            do {
                try window.rename(slot.name, to: path.lastComponent!, in: parent, noReplace: true)
            } catch where error.errno == .fileExists {
                return .kept(Kept(path: path, reason: "something new is at that path; kept as \(place)"))
            }
            windowsTouched[ObjectIdentifier(window)] = window
            return .undone([path.parent])

        case .unquarantine(let slot, let folder, let to):
            // An undo's restore goes back into the quarantine it came from, only while `to` is still what it moved.
            guard let identity = intent.identity,
                  let destination = try directories.directoryIfPresent(containing: to),
                  let status = try destination.statusIfPresent(of: to.lastComponent!),
                  status.device == identity.device, status.inode == identity.inode else { return .nothing }
            guard let window = try otherQuarantine(slot.transaction, folder)?.window(slot.until, state: lock.state) else {
                return .kept(Kept(path: to, reason: "the quarantine it came from is gone; kept at \(to.escaped)"))
            }
            if !act, try window.statusIfPresent(of: slot.name) != nil {
                return .kept(Kept(path: to, reason: "its place in the quarantine is taken; kept at \(to.escaped)"))
            }
            guard act else { return .undone([]) }
            do {
                try destination.rename(to.lastComponent!, to: slot.name, in: window, noReplace: true)
            } catch where error.errno == .fileExists {
                return .kept(Kept(path: to, reason: "its place in the quarantine is taken; kept at \(to.escaped)"))
            }
            windowsTouched[ObjectIdentifier(window)] = window
            directories.forget(under: to)
            return .undone([to.parent])

        case .purge(let id, let until, let folder):
            // Rolled forward: the window is removed whole, as the purge meant to (a half-removed one included).
            guard let quarantine = try otherQuarantine(id, folder), try quarantine.window(until, state: lock.state) != nil else {
                return .nothing
            }
            guard act else { return .undone([]) }
            try Transaction.purgeWindow(id, until: until, folder: folder, state: lock.state) { _, _ throws(FileSystemError) in quarantine }
            otherQuarantines[id] = nil
            return .undone([])

        case .stage(let path, let name):
            guard let staging, try staging.statusIfPresent(of: name) != nil else { return .nothing }
            guard let parent = try directories.directoryIfPresent(containing: path) else {
                return .kept(Kept(path: path, reason: "its folder is gone; kept as \(lock.state.stagingPath(for: transaction))/\(name)"))
            }
            if !act, try parent.statusIfPresent(of: path.lastComponent!) != nil {
                return .kept(Kept(path: path, reason: "something new is at that path; kept as \(lock.state.stagingPath(for: transaction))/\(name)"))
            }
            guard act else { return .undone([]) }
            do {
                try staging.rename(name, to: path.lastComponent!, in: parent, noReplace: true)
            } catch where error.errno == .fileExists {
                return .kept(Kept(path: path, reason: "something new is at that path; kept as \(lock.state.stagingPath(for: transaction))/\(name)"))
            }
            return .undone([path.parent])

        case .rename(let from, let to):
            guard let identity = intent.identity,
                  let destination = try directories.directoryIfPresent(containing: to),
                  let status = try destination.statusIfPresent(of: to.lastComponent!),
                  status.device == identity.device, status.inode == identity.inode else { return .nothing }
            guard let source = try directories.directoryIfPresent(containing: from) else {
                return .kept(Kept(path: from, reason: "its folder is gone; kept at \(to.escaped)"))
            }
            if !act, try source.statusIfPresent(of: from.lastComponent!) != nil {
                return .kept(Kept(path: from, reason: "something new is at that path; kept at \(to.escaped)"))
            }
            guard act else { return .undone([]) }
            do {
                try destination.rename(to.lastComponent!, to: from.lastComponent!, in: source, noReplace: true)
            } catch where error.errno == .fileExists {
                return .kept(Kept(path: from, reason: "something new is at that path; kept at \(to.escaped)"))
            }
            directories.forget(under: to)
            return .undone([from.parent, to.parent])

        case .mkdir(let path):
            guard let parent = try directories.directoryIfPresent(containing: path),
                  let status = try parent.statusIfPresent(of: path.lastComponent!),
                  status.type == .directory else { return .nothing }
            if !act {
                let inside = try parent.openDirectory(path.lastComponent!).entries()
                return inside.isEmpty ? .undone([]) : .kept(Kept(path: path, reason: "created by this transaction but no longer empty; kept"))
            }
            do {
                try parent.removeDirectory(path.lastComponent!)
            } catch where error.errno == .directoryNotEmpty {
                return .kept(Kept(path: path, reason: "created by this transaction but no longer empty; kept"))
            } catch where error.errno == .noSuchFile {
                return .nothing
            }
            directories.forget(under: path)
            return .undone([path.parent])

        case .setxattr(let path, let attribute, let value, let previous):
            guard let parent = try directories.directoryIfPresent(containing: path) else { return .nothing }
            let status: FileStatus?
            if let last = path.lastComponent { status = try parent.statusIfPresent(of: last) } else { status = try parent.status() }
            guard let status, status.type != .symlink else { return .nothing }
            if let identity = intent.identity, status.device != identity.device || status.inode != identity.inode {
                return .nothing
            }
            let current = try parent.extendedAttribute(attribute, of: path.lastComponent)
            guard !ExclusionMarker.same(attribute, current, previous) else { return .nothing }
            // Only put back what this transaction wrote: a value someone else set since is theirs. (An Apple
            // exclusion the documented call wrote may differ in its bytes from the one planned.)
            guard ExclusionMarker.same(attribute, current, value) else {
                return .kept(Kept(path: path, reason: "attribute \(attribute) changed by someone else since; left as it is"))
            }
            guard act else { return .undone([]) }
            if let previous {
                try parent.setExtendedAttribute(attribute, to: previous, of: path.lastComponent)
            } else {
                try parent.removeExtendedAttribute(attribute, of: path.lastComponent)
            }
            // The entry's own inode changed, not its folder's entries: synced with the batch (syncEntry).
            reattributed.insert(path)
            return .undone([])

        case .permissions(let path, let set, let previous):
            // A directory this transaction created has nothing to put back: its mkdir's undo removes it.
            guard let previous, let identity = intent.identity else { return .nothing }
            guard let directory = try directories.directoryIfPresent(path) else {
                let outcome = try revertFilePermissions(path, set: set, previous: previous, identity: identity, act: act)
                if act, case .undone = outcome { reattributed.insert(path) }
                return outcome
            }
            let status = try directory.status()
            guard status.type == .directory, status.device == identity.device, status.inode == identity.inode,
                  !previous.matches(status) else { return .nothing }
            // Only what this transaction set is put back: a mode or owner someone else set since is theirs.
            guard set.matches(status) else {
                return .kept(Kept(path: path, reason: "mode or owner changed by someone else since; left as it is"))
            }
            guard act else { return .undone([]) }
            if previous.owner != nil || previous.group != nil { try directory.setOwner(previous.owner, group: previous.group) }
            if let mode = previous.mode { try directory.setPermissions(mode) }
            reattributed.insert(path)
            return .undone([])

        case .unlink(let path, let type):
            // Rolled forward, never back: finished when the entry is still exactly what the intent recorded.
            // Anything else at that name (a co-tenant's swap, a reused inode of another type) is left alone.
            guard let identity = intent.identity, let name = path.lastComponent,
                  let parent = try directories.directoryIfPresent(containing: path),
                  let status = try parent.statusIfPresent(of: name),
                  status.type == type, type != .directory, status.device == identity.device, status.inode == identity.inode,
                  status.size == identity.size, status.modificationTimeNs == identity.modificationTimeNs,
                  status.isOnSameMount(as: lock.state.rootStatus) else { return .nothing }
            guard act else { return .undone([]) }
            do {
                try parent.removeFile(name)
            } catch where DirectoryCache.meansAbsent(error.errno) || error.errno == .isDirectory {
                return .nothing
            } catch where FailureScope(error).isItemLevel {
                return .kept(Kept(path: path, reason: "its delete could not be finished (\(error.errno)); left in place"))
            }
            return .undone([path.parent])

        case .times(let path, let atime, let mtime, let previousAtime, let previousMtime):
            // Only what this transaction set goes back: times someone set since are theirs.
            guard let identity = intent.identity, let directory = try directories.directoryIfPresent(path) else { return .nothing }
            let status = try directory.status()
            guard status.device == identity.device, status.inode == identity.inode,
                  status.accessTimeNs == atime, status.modificationTimeNs == mtime else { return .nothing }
            guard act else { return .undone([]) }
            try directory.setTimes(of: DirectoryTimes.itself, accessNs: previousAtime, modificationNs: previousMtime)
            return .undone([])

        case .symlink(let path, let target):
            guard let name = path.lastComponent, let parent = try directories.directoryIfPresent(containing: path),
                  let status = try parent.statusIfPresent(of: name), status.type == .symlink,
                  status.userID == system_geteuid(), try parent.linkTarget(of: name) == target else { return .nothing }
            guard act else { return .undone([]) }
            try parent.removeFileIfPresent(name)
            return .undone([path.parent])

        case .layoutFile(let path, let temp, let contents, _):
            guard let parent = try directories.directoryIfPresent(containing: path) else { return .nothing }
            var changed = false
            if try parent.statusIfPresent(of: temp) != nil {
                if act { try parent.removeFileIfPresent(temp) }
                changed = true
            }
            if let status = try parent.statusIfPresent(of: path.lastComponent!), status.type == .regular, status.linkCount == 1,
               status.size == Int64(contents.count),
               try parent.readFile(path.lastComponent!, limit: contents.count + 1) == contents {
                if act { try parent.removeFileIfPresent(path.lastComponent!) }
                changed = true
            }
            return changed ? .undone([path.parent]) : .nothing

        case .create(let path, let temp, let contents):
            guard let parent = try directories.directoryIfPresent(containing: path) else { return .nothing }
            var changed = false
            if try parent.statusIfPresent(of: temp) != nil {
                if act { try parent.removeFileIfPresent(temp) }
                changed = true
            }
            if let status = try parent.statusIfPresent(of: path.lastComponent!), status.type == .regular,
               status.size == Int64(contents.count),
               try parent.readFile(path.lastComponent!, limit: contents.count + 1) == contents {
                if act { try parent.removeFileIfPresent(path.lastComponent!) }
                changed = true
            }
            return changed ? .undone([path.parent]) : .nothing
        }
    }

    /// A layout file's mode and owner put back (`fix: true` changed them): on its own descriptor, opened without
    /// following anything and only while it is still the file changed (LayoutFileAccess.open), and only when what it
    /// has now is what the transaction set.
    private func revertFilePermissions(_ path: RelativePath, set: Permissions, previous: Permissions, identity: EntryIdentity,
                                       act: Bool) throws(FileSystemError) -> Undo {
        guard let name = path.lastComponent, let folder = try directories.directoryIfPresent(containing: path),
              case .opened(let file, let status) = try LayoutFileAccess.open(name, in: folder, expecting: identity),
              !previous.matches(status) else { return .nothing }
        guard set.matches(status) else {
            return .kept(Kept(path: path, reason: "mode or owner changed by someone else since; left as it is"))
        }
        guard act else { return .undone([]) }
        try LayoutFileAccess.apply(previous, to: file)
        return .undone([])
    }
}
