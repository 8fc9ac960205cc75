// Undo of a committed transaction, built from its own journal intents (trusted state): renames go back, trash
// moves are restored, markers and cache tags return to what the journal recorded, layout files and symlinks it made
// go while they are still exactly what it made, directories it created go once empty. Deletes cannot be undone and are named. Every piece re-checks that its target is still what the
// transaction left (dev, ino; size and mtime for files), and the undo runs as a new journaled transaction.

@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyPlan
@_spi(Layers) import StoragePolicyEvaluation

/// What undoing one transaction would do, worked out from the journal and the tree as they are now.
public struct UndoPlan: Sendable {
    /// The transaction reversed.
    public var transaction: String
    /// Its policy name, recorded again on the undo.
    public var policy: String
    /// One line per change undo will make: `rename a -> b`, `restore Trash/files/x -> x`, ...
    public var changes: [String] { steps.map(UndoPlan.describe) }
    /// What cannot be undone: deletes (and what went with them), each with its path.
    public var notUndoable: [String]
    /// Pieces left alone because their target changed since the transaction, or is gone.
    public var skipped: [String]
    var steps: [Step]
    /// The instant the plan was made: a directory to remove that gets an entry after it is kept.
    var madeAtNs: Int64
    /// Folders whose times go back once entries are put back into them (DirectoryTimes.Target).
    var folderTimes: [RelativePath: DirectoryTimes.Target] = [:]
    /// Folders this undo puts back from the quarantine, or makes again as recorded: entries go into them after.
    var restoredFolders: Set<RelativePath> = []
    var madeFolders: Set<RelativePath> = []

    static func describe(_ step: Step) -> String {
        let a = step.action
        switch a.kind {
        case .rename(let to):
            if case .quarantine(let slot, _, _)? = step.restore { return "\(step.verb) \(to.escaped) (from the quarantine of \(slot.transaction))" }
            return "\(step.verb) \(a.path.escaped) -> \(to.escaped)"
        case .setxattr(let name, _): return "\(step.verb) \(name) on \(a.path.escaped)"
        default: return "\(step.verb) \(a.path.escaped)"
        }
    }
}

/// Why a transaction cannot be undone at all.
public struct UndoError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
    package init(message: String) { self.message = message }
}

extension Applier {
    /// What undoing `transaction` would do now. Throws when the journal has no such transaction, when it did
    /// not commit, or when its intents were compacted away (then only its summary is left: nothing to reverse).
    package func undoPlan(_ transaction: String) throws -> UndoPlan {
        let state = lock.state
        guard try state.directory.statusIfPresent(of: Journal.fileName) != nil else {
            throw UndoError(message: "no journal under the root: there is no transaction \(transaction)")
        }
        var begun = false
        var outcome: String?
        var policy = "-"
        var actions = 0
        var intents: [Intent] = []
        var skippedActions = Set<Int>()
        var undoneOps = Set<Int>()
        var quarantineFolder: FolderIdentity?
        // Streamed from the journal (or its history file): only the intents are kept.
        _ = try JournalFiles.withTransaction(transaction, in: state) { record in
            let b = record.body
            switch record.kind {
            case .begin: begun = true; policy = b.policy ?? "-"; actions = b.actions ?? 0
            case .intent: if let intent = Intent(b) { intents.append(intent) }
            case .skip: if let action = b.action { skippedActions.insert(action) }
            case .undone: undoneOps.formUnion(b.ops ?? [])
            case .commit:
                if let dev = b.quarantineDev, let ino = b.quarantineIno { quarantineFolder = FolderIdentity(device: dev, inode: ino) }
            case .end: outcome = b.outcome
            default: break
            }
        }
        guard begun else { throw UndoError(message: "the journal has no transaction \(transaction) ('policyctl journal' lists them)") }
        guard outcome.flatMap(TransactionSummary.Outcome.init(rawValue:)) == .committed else {
            throw UndoError(message: "transaction \(transaction) did not commit (\(outcome ?? "still open; run 'policyctl recover'")): there is nothing to undo")
        }
        if intents.isEmpty && actions > 0 {
            throw UndoError(message: "the journal keeps only the summary of transaction \(transaction), not the changes undo needs (its history file was removed past the policy's journal: { history } limit, or an older policyctl compacted the journal); nothing was changed")
        }
        var plan = UndoPlan(transaction: transaction, policy: policy, notUndoable: [], skipped: [], steps: [], madeAtNs: WallClock.nowNs())
        // A folder's times set back after removals (DirectoryTimes) are not a change undo reverses; they are what
        // the folders it puts entries back into get again (DirectoryTimes.Target).
        for intent in intents where !skippedActions.contains(intent.action) && !undoneOps.contains(intent.op) {
            if case .times(let path, let atime, let mtime, _, _) = intent.change, let identity = intent.identity {
                plan.folderTimes[path] = DirectoryTimes.Target(accessNs: atime, modificationNs: mtime,
                                                              identity: FolderIdentity(device: identity.device, inode: identity.inode))
            }
        }
        let live = intents.filter {
            if case .times = $0.change { return false }
            return !skippedActions.contains($0.action) && !undoneOps.contains($0.op)
        }
        // Where a path the transaction left is now: nested renames (a folder renamed after an entry inside it) are
        // undone shallowest first, each step at the path the one before it leaves, but looked at here as they are.
        var renamed: [RelativePath: [(op: Int, to: RelativePath)]] = [:]
        for intent in live { if case .rename(let from, let to) = intent.change { renamed[from, default: []].append((intent.op, to)) } }
        func now(_ path: RelativePath, after op: Int) -> RelativePath {
            guard !renamed.isEmpty else { return path }
            var p = path, after = op
            for _ in 0..<renamed.count {
                var best: (op: Int, from: RelativePath, to: RelativePath)? = nil
                var a = p
                while !a.isRoot {
                    a = a.parent
                    for r in renamed[a] ?? [] where r.op > after && r.op < (best?.op ?? .max) { best = (r.op, a, r.to) }
                }
                guard let best, let inner = p.relative(to: best.from) else { break }
                p = best.to.appending(inner)
                after = best.op
            }
            return p
        }
        var groups: [Int: [Intent]] = [:]
        var order: [Int] = []
        for intent in live {
            if groups[intent.action] == nil { order.append(intent.action) }
            groups[intent.action, default: []].append(intent)
        }
        var created: [RelativePath] = []
        var movedOut: [RelativePath: Set<FileName>] = [:]
        for action in order.reversed() {
            let group = groups[action]!
            if let refused = group.lazy.compactMap(\.refusal).first {
                plan.skipped.append("a change of action \(action) is not one undo replays (\(refused))")
                continue
            }
            // Layout `backup: include` removed a CACHEDIR.TAG holding exactly the signature: undo writes it back.
            if group.count == 1, case .stage(let tag, _) = group[0].change, BackupInclusion.isRemovedTag(tag, group[0].identity) {
                plan.steps.append(Step(action: Action(kind: .writeTag, path: tag.parent, rule: "undo", reason: "undo of \(transaction)",
                                                      type: .directory), verb: .retag, restore: nil))
                continue
            }
            // A delete held in the quarantine goes back from it, while its window is not purged.
            if group.contains(where: { if case .quarantine = $0.change { true } else { false } }) {
                for intent in group.reversed() {
                    guard case .quarantine(let path, let slot, let type, let parent, _) = intent.change else { continue }
                    planRestore(path, slot: slot, type: type, parent: parent, identity: intent.identity, folder: quarantineFolder,
                                transaction: transaction, plan: &plan)
                }
                continue
            }
            if let restored = group.first(where: { if case .unquarantine = $0.change { true } else { false } }) {
                plan.notUndoable.append("\(restored.change.path.escaped): put back from the quarantine; an undo does not quarantine it again (apply the policy to delete it)")
                continue
            }
            if group.contains(where: { if case .purge = $0.change { true } else { false } }) {
                plan.notUndoable.append("a purge of the quarantine: what it removed is deleted for good")
                continue
            }
            // A delete either went through staging (directories, --all-or-nothing) or rolled forward (unlink).
            if let stage = group.first(where: {
                switch $0.change {
                case .stage, .unlink: true
                default: false
                }
            }) {
                plan.notUndoable.append("\(stage.change.path.escaped): deleted; deletes cannot be undone")
                continue
            }
            for intent in group { if case .mkdir(let p) = intent.change { created.append(p) } }
            let renames = group.filter { if case .rename = $0.change { true } else { false } }
            if let rename = renames.first, case .rename(let from, let to) = rename.change {
                let trashInfo = group.lazy.compactMap { i -> RelativePath? in
                    if case .create(let p, _, _) = i.change, p.lastComponent?.bytes.suffix(10).elementsEqual(".trashinfo".utf8) == true { return p }
                    return nil
                }.first
                let stamped = group.contains {
                    if case .setxattr(_, let a, _, _) = $0.change { a == Markers.trashStampAttribute || a == TrashFolder.originAttribute } else { false }
                }
                guard let status = check(now(to, after: rename.op), against: rename.identity, plan: &plan, named: to) else { continue }
                var step = Step(action: Action(kind: .rename(to: from), path: to, rule: "undo", reason: "undo of \(transaction)",
                                               identity: status.identity, type: status.type), verb: .rename, restore: nil)
                if let trashInfo {
                    step.verb = .restore
                    step.restore = .trashInfo(trashInfo)
                } else if stamped {
                    let directory = try? state.root.openDirectory(at: to.parent)
                    let stamp = (try? directory?.extendedAttribute(Markers.trashStampAttribute, of: to.lastComponent)) ?? nil
                    let origin = (try? directory?.extendedAttribute(TrashFolder.originAttribute, of: to.lastComponent)) ?? nil
                    step.verb = .restore
                    step.restore = .attributes(stamp: stamp, origin: origin)
                }
                movedOut[to.parent, default: []].insert(to.lastComponent!)
                plan.steps.append(step)
                continue
            }
            for intent in group.reversed() {
                switch intent.change {
                case .setxattr(let path, let attribute, let value, let previous):
                    guard let status = check(path, against: intent.identity, plan: &plan, contentsMayChange: true) else { continue }
                    let now = try? state.root.openDirectory(at: path.parent).extendedAttribute(attribute, of: path.lastComponent)
                    guard now == value else {
                        plan.skipped.append("\(path.escaped): \(attribute) changed since the transaction; kept")
                        continue
                    }
                    let action = Action(kind: .setxattr(name: attribute, value: previous ?? []), path: path, rule: "undo",
                                        reason: "undo of \(transaction)", identity: status.identity, type: status.type)
                    plan.steps.append(Step(action: action, verb: previous == nil ? .unset : .setxattr, restore: nil))
                case .permissions(let path, let set, let previous?):
                    guard let status = check(path, against: intent.identity, plan: &plan, contentsMayChange: true) else { continue }
                    guard set.matches(status) else {
                        plan.skipped.append("\(path.escaped): mode or owner changed since the transaction; kept")
                        continue
                    }
                    let action = Action(kind: .setPermissions(mode: previous.mode, owner: previous.owner, group: previous.group),
                                        path: path, rule: "undo", reason: "undo of \(transaction)", identity: status.identity,
                                        type: status.type)
                    plan.steps.append(Step(action: action, verb: .setPermissions, restore: nil))
                case .symlink(let path, let target):
                    // Removed (unlinkat: never followed) only while it is still the link this euid made: a symlink,
                    // owned by us, pointing exactly where the transaction pointed it. Its dev and ino go into the
                    // step, so one swapped in between this plan and the removal is kept too.
                    guard let name = path.lastComponent, let folder = try? state.root.openDirectory(at: path.parent),
                          let status = (try? folder.statusIfPresent(of: name)) ?? nil else {
                        plan.skipped.append("\(path.escaped): gone since the transaction; left alone")
                        continue
                    }
                    guard status.type == .symlink, status.userID == system_geteuid(),
                          (try? folder.linkTarget(of: name)) == target else {
                        plan.skipped.append("\(path.escaped): not the symlink the transaction made any more (another type, owner or target); kept")
                        continue
                    }
                    plan.steps.append(Step(action: Action(kind: .delete, path: path, rule: "undo", reason: "undo of \(transaction)",
                                                          identity: status.identity, type: .symlink), verb: .remove, restore: nil))
                    movedOut[path.parent, default: []].insert(name)
                case .create(let path, _, let contents), .layoutFile(let path, _, let contents, _):
                    guard let status = check(path, against: nil, plan: &plan) else { continue }
                    let now = try? state.root.openDirectory(at: path.parent).readFile(path.lastComponent!, limit: 64 * 1024)
                    guard status.type == .regular, now == contents else {
                        plan.skipped.append("\(path.escaped): changed since the transaction wrote it; kept")
                        continue
                    }
                    plan.steps.append(Step(action: Action(kind: .delete, path: path, rule: "undo", reason: "undo of \(transaction)",
                                                          identity: status.identity, type: .regular), verb: .remove, restore: nil))
                    movedOut[path.parent, default: []].insert(path.lastComponent!)
                default:
                    continue
                }
            }
        }
        // Directories it created go last, deepest first, and only when nothing but what undo moves out is in them.
        for path in created.sorted(by: { $0.components.count > $1.components.count }) {
            guard let parent = try? state.root.openDirectory(at: path.parent),
                  let status = try? parent.statusIfPresent(of: path.lastComponent!), status.type == .directory,
                  let entries = try? parent.openDirectory(path.lastComponent!).entries() else {
                plan.skipped.append("\(path.escaped): the directory it created is gone or replaced; left alone")
                continue
            }
            let leaving = movedOut[path] ?? []
            guard entries.allSatisfy({ leaving.contains($0.name) }) else {
                plan.skipped.append("\(path.escaped): the directory it created is not empty; kept")
                continue
            }
            movedOut[path.parent, default: []].insert(path.lastComponent!)
            plan.steps.append(Step(action: Action(kind: .delete, path: path, rule: "undo", reason: "undo of \(transaction)",
                                                  identity: status.identity, type: .directory), verb: .rmdir, restore: nil))
        }
        return plan
    }

    /// Carries out `plan` as a new journaled transaction (kind `undo`, naming the transaction it reverses).
    package func undo(_ plan: UndoPlan, options: ApplyOptions) throws(ApplyError) -> ApplyReport {
        var options = options
        options.folderTimes = plan.folderTimes
        let metadata = Transaction.Metadata(kind: .undo, policy: plan.policy, policySHA256: nil, policyPath: nil,
                                            planFile: nil, rootPath: options.rootPath, actions: plan.steps.count,
                                            reverses: plan.transaction)
        return try ApplyRun.run(plan.steps, lock: lock, options: options, metadata: metadata, planTimeNs: plan.madeAtNs)
    }

    /// The entry at `path` now, when it is still what the transaction left: same dev and ino, and for a file the
    /// same size and mtime. Otherwise nil, with the reason recorded (naming it `named`: where the transaction left it).
    private func check(_ path: RelativePath, against identity: EntryIdentity?, plan: inout UndoPlan,
                       contentsMayChange: Bool = false, named: RelativePath? = nil) -> FileStatus? {
        let shown = (named ?? path).escaped
        guard let name = path.lastComponent,
              let status = (try? lock.state.root.openDirectory(at: path.parent).statusIfPresent(of: name)) ?? nil else {
            plan.skipped.append("\(shown): gone since the transaction; left alone")
            return nil
        }
        if status.type == .symlink && identity == nil {
            plan.skipped.append("\(shown): is a symlink now; not followed")
            return nil
        }
        if let identity {
            let same = status.device == identity.device && status.inode == identity.inode
                && (contentsMayChange || status.type == .directory
                    || (status.size == identity.size && status.modificationTimeNs == identity.modificationTimeNs))
            guard same else {
                plan.skipped.append("\(shown): changed since the transaction; left alone")
                return nil
            }
        }
        return status
    }

    /// The step putting a quarantined delete back, or why there is none: its window purged (deleted for good), it
    /// is no longer there, its folder is gone (made again as recorded when the folder above it is there) or is not
    /// the one it left. The run checks it all again (StepPreparer.prepareQuarantineRestore, StepVerifier).
    private func planRestore(_ origin: RelativePath, slot: QuarantineSlot, type: FileType, parent: FolderRecord?,
                             identity: EntryIdentity?, folder: FolderIdentity?, transaction: String, plan: inout UndoPlan) {
        let state = lock.state
        guard let folder, let quarantine = try? state.openQuarantine(for: slot.transaction, identity: folder),
              let window = try? quarantine.window(slot.until, state: state) else {
            plan.notUndoable.append("\(origin.escaped): deleted for good (its quarantine was purged)")
            return
        }
        guard let held = (try? window.statusIfPresent(of: slot.name)) ?? nil else {
            plan.skipped.append("\(origin.escaped): no longer in the quarantine (put back by an earlier undo?); left alone")
            return
        }
        if let identity, let why = StepPreparer.heldMismatch(held, identity) {
            plan.skipped.append("\(origin.escaped): \(why)")
            return
        }
        let folderPath = origin.parent
        let coming = plan.restoredFolders.contains(folderPath) || plan.madeFolders.contains(folderPath)
        if !coming && !folderPath.isRoot {
            switch (try? state.root.openDirectory(at: folderPath.parent).statusIfPresent(ofLastComponentOf: folderPath)) ?? nil {
            case let status? where status.type == .directory:
                if let parent, status.device != parent.identity.device || status.inode != parent.identity.inode {
                    plan.skipped.append("\(origin.escaped): its folder \(folderPath.escaped) is not the one it was taken from (replaced since); left in the quarantine")
                    return
                }
            case .some:
                plan.skipped.append("\(origin.escaped): its folder \(folderPath.escaped) is not a folder now; left in the quarantine")
                return
            case nil:
                // Made again as the journal recorded it, when the folder above it is there (or comes back first).
                let above = folderPath.parent
                let aboveThere = above.isRoot || plan.restoredFolders.contains(above) || plan.madeFolders.contains(above)
                    || ((try? state.root.openDirectory(at: above)) != nil)
                guard let parent, aboveThere else {
                    plan.skipped.append("\(origin.escaped): its folder \(folderPath.escaped) is gone (and so is the one above it); left in the quarantine")
                    return
                }
                plan.steps.append(Step(action: Action(kind: .mkdir, path: folderPath, rule: "undo", reason: "undo of \(transaction): its folder, made again as recorded",
                                                      type: .directory), verb: .mkdir, restore: nil))
                plan.steps.append(Step(action: Action(kind: .setPermissions(mode: parent.mode, owner: parent.owner, group: parent.group),
                                                      path: folderPath, rule: "undo", reason: "undo of \(transaction): the folder's mode and owner as recorded",
                                                      type: .directory), verb: .setPermissions, restore: nil))
                plan.madeFolders.insert(folderPath)
            }
        }
        if type == .directory || held.type == .directory {
            plan.restoredFolders.insert(origin)
            // Its own times: its mtime as planned (the rename keeps it, entries put back into it move it).
            if let identity {
                plan.folderTimes[origin] = DirectoryTimes.Target(accessNs: nil, modificationNs: identity.modificationTimeNs,
                                                                 identity: FolderIdentity(device: identity.device, inode: identity.inode))
            }
        }
        let action = Action(kind: .rename(to: origin), path: origin, rule: "undo", reason: "undo of \(transaction): back from the quarantine",
                            bytes: 0, identity: identity, type: held.type)
        plan.steps.append(Step(action: action, verb: .restore, restore: .quarantine(slot: slot, folder: folder, parent: parent)))
    }
}
