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

    static func describe(_ step: Step) -> String {
        let a = step.action
        switch a.kind {
        case .rename(let to): return "\(step.verb) \(a.path.escaped) -> \(to.escaped)"
        case .setxattr(let name, _): return "\(step.verb) \(name) on \(a.path.escaped)"
        default: return "\(step.verb) \(a.path.escaped)"
        }
    }
}

/// Why a transaction cannot be undone at all.
public struct UndoError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}

extension Applier {
    /// What undoing `transaction` would do now. Throws when the journal has no such transaction, when it did
    /// not commit, or when its intents were compacted away (then only its summary is left: nothing to reverse).
    package func undoPlan(_ transaction: String) throws -> UndoPlan {
        let state = lock.state
        guard try state.directory.statusIfPresent(of: Journal.fileName) != nil else {
            throw UndoError(message: "no journal under the root: there is no transaction \(transaction)")
        }
        let bytes = try state.openStateFile(Journal.fileName, options: [.readOnly]).readAll(limit: 1 << 31)
        var begun = false
        var outcome: String?
        var policy = "-"
        var actions = 0
        var intents: [Intent] = []
        var skippedActions = Set<Int>()
        var undoneOps = Set<Int>()
        _ = Journal.scan(bytes) { record, _ in
            guard record.body.tx == transaction else { return }
            let b = record.body
            switch record.kind {
            case .begin: begun = true; policy = b.policy ?? "-"; actions = b.actions ?? 0
            case .intent: if let intent = Intent(b) { intents.append(intent) }
            case .skip: if let action = b.action { skippedActions.insert(action) }
            case .undone: undoneOps.formUnion(b.ops ?? [])
            case .end: outcome = b.outcome
            default: break
            }
        }
        guard begun else { throw UndoError(message: "the journal has no transaction \(transaction) ('policyctl journal' lists them)") }
        guard outcome.flatMap(TransactionSummary.Outcome.init(rawValue:)) == .committed else {
            throw UndoError(message: "transaction \(transaction) did not commit (\(outcome ?? "still open; run 'policyctl recover'")): there is nothing to undo")
        }
        if intents.isEmpty && actions > 0 {
            throw UndoError(message: "the journal of transaction \(transaction) was compacted: only its summary is kept, not the changes undo needs; nothing was changed")
        }
        var plan = UndoPlan(transaction: transaction, policy: policy, notUndoable: [], skipped: [], steps: [], madeAtNs: WallClock.nowNs())
        // A folder's times set back after removals (DirectoryTimes) are not a change undo reverses.
        let live = intents.filter {
            if case .times = $0.change { return false }
            return !skippedActions.contains($0.action) && !undoneOps.contains($0.op)
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
                guard let status = check(to, against: rename.identity, plan: &plan) else { continue }
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
        let metadata = Transaction.Metadata(kind: .undo, policy: plan.policy, policySHA256: nil, policyPath: nil,
                                            planFile: nil, rootPath: options.rootPath, actions: plan.steps.count,
                                            reverses: plan.transaction)
        return try ApplyRun.run(plan.steps, lock: lock, options: options, metadata: metadata, planTimeNs: plan.madeAtNs)
    }

    /// The entry at `path` now, when it is still what the transaction left: same dev and ino, and for a file the
    /// same size and mtime. Otherwise nil, with the reason recorded.
    private func check(_ path: RelativePath, against identity: EntryIdentity?, plan: inout UndoPlan,
                       contentsMayChange: Bool = false) -> FileStatus? {
        guard let name = path.lastComponent,
              let status = (try? lock.state.root.openDirectory(at: path.parent).statusIfPresent(of: name)) ?? nil else {
            plan.skipped.append("\(path.escaped): gone since the transaction; left alone")
            return nil
        }
        if status.type == .symlink && identity == nil {
            plan.skipped.append("\(path.escaped): is a symlink now; not followed")
            return nil
        }
        if let identity {
            let same = status.device == identity.device && status.inode == identity.inode
                && (contentsMayChange || status.type == .directory
                    || (status.size == identity.size && status.modificationTimeNs == identity.modificationTimeNs))
            guard same else {
                plan.skipped.append("\(path.escaped): changed since the transaction; left alone")
                return nil
            }
        }
        return status
    }
}
