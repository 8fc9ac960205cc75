// The first part of a step's way through a run: a step in, the changes it plans out (each with the identity it
// expects), before anything is journaled. Per kind it looks at the tree as it is now (a mkdir already made, an
// xattr already set...), follows directories this run moved, names staging and temporary entries, and for trash
// moves and restores resolves the folder they use (StepPreparerTrash.swift, RunTrashFolders). It changes nothing
// on disk; the changes are journaled as intents and made later by the run.

@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyPlan

package final class StepPreparer {
    package enum Preparation {
        case changes([(Change, EntryIdentity?)], destination: RelativePath?)
        /// A file's roll-forward unlink, its one change: apart from `.changes`, so the commonest step makes no
        /// array of changes, nor of intents (two arrays made and freed per delete on the run's thread).
        case fileDelete(Change, EntryIdentity?)
        case unchanged(String)
        case skip(String)
        /// A call on this entry failed (EACCES, EPERM...): skipped with the error.
        case failed(FileSystemError)
    }

    let ledger: StepLedger
    package let options: ApplyOptions
    package let trash: RunTrashFolders
    /// When this run trashes items (seconds): what the trash records say.
    let nowSeconds: Int64
    package var directories: DirectoryCache { ledger.transaction.directories }
    /// Directories mkdir steps will create: later steps may rely on them before they exist.
    package var planned: Set<RelativePath> = []
    /// Directories an undo puts back from the quarantine: entries restored into them may be prepared before.
    var restoring: Set<RelativePath> = []
    /// The last rule whose quarantine window was looked up, and its window (nil: none).
    private var lastWindow: (rule: String, seconds: Int64?)?
    /// Directories renamed by steps of the current group that are prepared but not yet made (an undo reverses
    /// nested renames shallowest first): a later step's path inside one is looked for where it is until then.
    private var pendingMoves: [(from: RelativePath, to: RelativePath)] = []
    /// Names chosen in trash folders by prepared but not yet performed steps.
    var reserved: [RelativePath: Set<FileName>] = [:]
    private var temporaryCounter = 0

    package init(ledger: StepLedger, options: ApplyOptions, kind: TransactionKind, nowSeconds: Int64) {
        self.ledger = ledger
        self.options = options
        self.nowSeconds = nowSeconds
        trash = RunTrashFolders(ledger: ledger, options: options, kind: kind)
    }

    /// Step `i` as it is now (`ledger.followMoves(i)`, which the caller carries on to the step's changes) and
    /// what it changes. A target (or its folder) that is gone by the time its intent is prepared is skipped, not a
    /// failure; so is one a call fails on (EACCES, EPERM...), with the error.
    package func prepare(_ i: Int, _ step: Step) throws(FileSystemError) -> Preparation {
        do {
            return try prepareChanges(i, step)
        } catch where DirectoryCache.meansAbsent(error.errno) {
            return .skip(error.errno == .noSuchFile ? "vanished since the plan" : "its folder is no longer a directory (a symlink?); not followed")
        } catch where FailureScope(error).isItemLevel {
            return .failed(error)
        }
    }

    /// A new group: every step prepared before it has been made.
    func startGroup() { pendingMoves.removeAll(keepingCapacity: true) }

    /// Where `path` is until the group's prepared directory renames are made: under a rename's destination, it is
    /// still under the rename's source.
    private func beforePendingMoves(_ path: RelativePath) -> RelativePath {
        var p = path
        for (from, to) in pendingMoves.reversed() {
            if let inner = p.relative(to: to) { p = inner.isRoot ? from : from.appending(inner) }
        }
        return p
    }

    /// Why a step cannot run because a step it depends on was skipped, or nil.
    func dependencyReason(_ action: Action) -> String? {
        // Nothing skipped or failed yet (the common case): nothing to look up for each ancestor.
        if ledger.notCreated.isEmpty && ledger.holdsFailure.isEmpty && trash.unavailable.isEmpty { return nil }
        var targets = [action.path]
        if case .rename(let to) = action.kind { targets.append(to) }
        if !trash.unavailable.isEmpty, let folder = trash.folderPath(of: action), let why = trash.unavailable[folder] {
            return why
        }
        for target in targets {
            var p = target
            while true {
                if let why = ledger.notCreated[p] { return "depends on the directory \(p.escaped), which was not created (\(why))" }
                if p.isRoot { break }
                p = p.parent
            }
        }
        if StepLedger.removes(action), let inner = ledger.holdsFailure[action.path] {
            return "holds \(inner.escaped), which could not be removed; kept"
        }
        return nil
    }

    func temporaryName() -> FileName {
        temporaryCounter += 1
        return FileName(unchecked: Array(".policyctl-\(ledger.transaction.id)-\(temporaryCounter).tmp".utf8))
    }

    private func prepareChanges(_ i: Int, _ step: Step) throws(FileSystemError) -> Preparation {
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
        let transaction = ledger.transaction
        switch action.kind {
        case .delete:
            if let held = try quarantined(step, i) { return held }
            if let r = step.record {
                // A trash item and its record are one unit: both staged, so a rollback or recovery puts both back
                // and a crash never leaves the item without the record that dates it (Units.swift).
                let record = ledger.followMoves(r).action
                return .changes([(.stage(path: path, name: transaction.stagingName()), action.identity),
                                 (.stage(path: record.path, name: transaction.stagingName()), record.identity)],
                                destination: nil)
            }
            // A file, symlink, fifo... is deleted roll-forward: its intent is durable, its identity checked just
            // before `unlinkat`, and recovery finishes it. Directories (whose contents may change meanwhile) and
            // every delete under --all-or-nothing (which promises undo) are staged.
            if let type = action.type, type != .directory, type != .unknown, !options.allOrNothing, !options.stagesEveryDelete {
                return .fileDelete(.unlink(path: path, type: type), action.identity)
            }
            return .changes([(.stage(path: path, name: transaction.stagingName()), action.identity)], destination: nil)

        case .rename(let destination):
            if let reason = Self.forbiddenDestination(destination, source: path) { return .skip(reason) }
            if try !directories.exists(beforePendingMoves(path)) { return .skip("vanished since the plan") }
            if try directories.exists(beforePendingMoves(destination)) { return .skip("\(destination.escaped) already exists; nothing replaced") }
            if action.type == .directory { pendingMoves.append((path, destination)) }
            return .changes([(.rename(from: path, to: destination), action.identity)], destination: destination)

        case .trash:
            return try prepareTrash(action)

        case .mkdir:
            if path.isRoot { return .unchanged("the root exists") }
            if let status = try directories.statusIfPresent(path) {
                return status.type == .directory ? .unchanged("already exists")
                    : .skip("a \(status.type.rawValue) is where a directory must be; not replaced")
            }
            planned.insert(path)
            return .changes([(.mkdir(path: path), nil)], destination: nil)

        case .mkfile(let content, let mode, let owner, let group):
            if let status = try directories.statusIfPresent(path) {
                return status.type == .regular ? .unchanged("already exists")
                    : .skip("a \(status.type.rawValue) is where the layout file must be; not replaced")
            }
            return .changes([(.layoutFile(path: path, temp: temporaryName(), contents: content,
                                          set: Permissions(mode: mode, owner: owner, group: group)), nil)], destination: nil)

        case .symlink(let target):
            if let status = try directories.statusIfPresent(path) {
                return status.type == .symlink ? .unchanged("already exists")
                    : .skip("a \(status.type.rawValue) is where the layout symlink must be; not replaced")
            }
            return .changes([(.symlink(path: path, target: target), nil)], destination: nil)

        case .untag:
            // Staged (so a rollback puts it back), then checked again where no one can swap it (BackupInclusion).
            guard action.identity != nil else { return .skip("the plan records no identity for it; not touched") }
            return .changes([(.stage(path: path, name: transaction.stagingName()), action.identity)], destination: nil)

        case .setxattr, .unmark:
            return try prepareAttribute(step)

        case .setPermissions(let mode, let owner, let group):
            return try preparePermissions(action, set: Permissions(mode: mode, owner: owner, group: group))

        case .writeTag:
            let tag = path.appending(Markers.cacheTagName)
            if let status = try directories.statusIfPresent(tag) {
                if status.type == .regular,
                   let bytes = try? directories.directory(path).readFile(Markers.cacheTagName, limit: 4096),
                   bytes.starts(with: Array(Markers.cacheTagSignature.utf8)) {
                    return .unchanged("already tagged")
                }
                return .skip("a different CACHEDIR.TAG is there; not replaced")
            }
            if try directories.statusIfPresent(path) == nil && !planned.contains(path) { return .skip("vanished since the plan") }
            let contents = Array(Markers.cacheTagContents.utf8)
            return .changes([(.create(path: tag, temp: temporaryName(), contents: contents), nil)], destination: nil)
        }
    }

    /// A delete held back in the quarantine, when its rule has a window and this transaction's quarantine exists:
    /// a rename there (with its record, for a trash item: both, one unit), recording the folder it leaves.
    private func quarantined(_ step: Step, _ i: Int) throws(FileSystemError) -> Preparation? {
        let action = step.action
        guard !options.quarantineWindows.isEmpty else { return nil }
        // Consecutive deletes mostly share a rule: its window is looked up once per run of it.
        let seconds: Int64?
        if let last = lastWindow, last.rule == action.rule { seconds = last.seconds } else {
            seconds = options.quarantineWindows[action.rule]
            lastWindow = (action.rule, seconds)
        }
        guard let seconds, options.quarantineExempt.isEmpty || !options.quarantineExempt.contains(action.path),
              let slot = ledger.transaction.quarantineSlot(window: seconds) else { return nil }
        let parent = FolderRecord(try directories.statusOfDirectory(containing: action.path))
        var changes: [(Change, EntryIdentity?)] = [(.quarantine(path: action.path, slot: slot, type: action.type ?? .unknown, parent: parent, bytes: action.bytes),
                                                   action.identity)]
        if let r = step.record, let recordSlot = ledger.transaction.quarantineSlot(window: seconds) {
            let record = ledger.followMoves(r).action
            let recordParent = FolderRecord(try directories.statusOfDirectory(containing: record.path))
            changes.append((.quarantine(path: record.path, slot: recordSlot, type: record.type ?? .unknown, parent: recordParent, bytes: record.bytes),
                            record.identity))
        }
        return .changes(changes, destination: nil)
    }

    private func prepareAttribute(_ step: Step) throws(FileSystemError) -> Preparation {
        let action = step.action
        let path = action.path
        // An undo (or `unmark`) puts an attribute back to absent: the step's verb says so (see Undo.swift).
        let (name, setValue): (String, [UInt8]) = switch action.kind {
        case .setxattr(let name, let value): (name, value)
        case .unmark(let name): (name, [])
        default: ("", [])
        }
        let value: [UInt8]? = step.verb == .unset || action.kind == .unmark(name: name) ? nil : setValue
        guard let status = try directories.statusIfPresent(path) else {
            guard planned.contains(path) else { return .skip("vanished since the plan") }
            return .changes([(.setxattr(path: path, attribute: name, value: value, previous: nil), nil)], destination: nil)
        }
        if status.type == .symlink { return .skip("is a symlink; attributes are never set through one") }
        let current = try directories.directory(containing: path).extendedAttribute(name, of: path.lastComponent)
        // Two Apple exclusions are one, whatever bytes the documented call wrote (ExclusionMarker.same).
        if ExclusionMarker.same(name, current, value) { return .unchanged(value == nil ? "\(name) already absent" : "\(name) already set") }
        return .changes([(.setxattr(path: path, attribute: name, value: value, previous: current), status.identity)], destination: nil)
    }

    static func forbiddenDestination(_ destination: RelativePath, source: RelativePath) -> String? {
        if destination.isRoot { return "the destination is the root itself" }
        if let first = destination.components.first, Markers.isEngineState(first.bytes) { return "the destination is inside .policyctl" }
        if destination.hasPrefix(source) { return "the destination is inside the entry itself" }
        return nil
    }
}
