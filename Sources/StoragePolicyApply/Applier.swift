// The public entry point of apply: checks the blast-radius cap, orders a plan's actions so each one finds what
// it needs, and runs them as one transaction; also `trash` and `restore`. Changes nothing without the lock.

@_spi(Layers) import StoragePolicyEvaluation
@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyModel
@_spi(Layers) import StoragePolicyPlan

/// Applies plans (and trash/restore requests) as journaled transactions, holding the root's lock.
package struct Applier: Sendable {
    /// The root's lock, held for the applier's lifetime.
    package let lock: ApplyLock

    /// Holding the lock is the precondition: only one apply, recover or trash runs on a root at a time.
    package init(holding lock: ApplyLock) { self.lock = lock }

    /// Entries a plan deletes (a deleted directory counts everything in it), what `--max-delete` limits.
    package static func deletions(in plan: Plan) -> Int {
        plan.actions.reduce(0) { $0 + ($1.isDelete ? max(1, $1.entries) : 0) }
    }

    /// Applies `plan` as one transaction. Targets that changed since the plan are skipped and reported; so are
    /// targets a call fails on (EACCES, EPERM...: `ApplyReport.failed`, each with its error) and the steps that
    /// depend on them, unless `options.allOrNothing`. An error about the run (I/O, ENOSPC once the journal's
    /// reserve is used up, the time budget) rolls everything back. Run `Recovery.run` first (the CLI does).
    package func apply(_ plan: Plan, options: ApplyOptions, progress: ((Int, Int) -> Void)? = nil) throws(ApplyError) -> ApplyReport {
        if let limit = options.maxDelete {
            let deletions = Applier.deletions(in: plan)
            let allowed = limit.allowed(outOf: plan.summary.entriesScanned)
            if deletions > allowed {
                let label = options.maxDeleteLabel ?? "--max-delete \(limit)"
                let share = if case .percent = limit { " (\(allowed) of \(plan.summary.entriesScanned) entries scanned)" } else { "" }
                throw .refused("apply refused: would delete \(deletions) entries, more than \(label)\(share); nothing was changed")
            }
        }
        if let deadline = options.deadline, ContinuousClock().now >= deadline {
            throw .refused("apply refused: \(options.deadlineLabel ?? "the time budget") was spent before anything changed; nothing was changed")
        }
        // What the planner freed (a plan made in process, on other threads) goes back to the system before the
        // run holds its steps and intents: else it stays in those threads' malloc arenas, counted in the peak.
        system_mallocTrim()
        let actions = plan.actions
        // The in-use reading is made while the steps are ordered and the journal begins, not waited for after.
        let firstInUseReading = StepVerifier.startFirstReading(for: actions, options: options, root: lock.state.root)
        let order = Applier.order(of: actions)
        // The steps refer to the plan's actions by index: a copy of each action per step was a sixth of a KB.
        var steps = StepList(actions: actions, order: order.map { UInt32($0) })
        if Applier.mayDeleteRecords(actions) { Applier.coupleRecords(&steps) }
        var metadata = Transaction.Metadata(kind: .apply, policy: plan.policy, policySHA256: options.policySHA256 ?? plan.fingerprint?.policySHA256,
                                            policyPath: options.policyPath ?? plan.fingerprint?.policyPath,
                                            planFile: options.planFile, rootPath: options.rootPath, actions: steps.count)
        metadata.quarantineWindows = Applier.quarantineWindows(actions, options: options)
        let planTime = WallClock.parseRFC3339(plan.createdAt).map { $0 + 1_000_000_000 } ?? plan.evaluatedAtNs
        let report = try ApplyRun.run(steps, lock: lock, options: options, metadata: metadata,
                                      planTimeNs: planTime, firstInUseReading: firstInUseReading, progress: progress)
        // Trash retention (and `trash --empty`) deleted directory items: their `directorysizes` entries go.
        TrashSizesCache.afterDeletes(report, root: lock.state.root)
        return report
    }

    /// The windows the plan's deletes are held for (the policy's, per rule).
    static func quarantineWindows(_ actions: [Action], options: ApplyOptions) -> Set<Int64> {
        guard !options.quarantineWindows.isEmpty else { return [] }
        var windows = Set<Int64>()
        var lastRule: String? = nil
        for action in actions where action.isDelete && action.rule != lastRule {
            lastRule = action.rule
            if let w = options.quarantineWindows[action.rule] { windows.insert(w) }
        }
        return windows
    }

    /// The order actions run in: directories are created first (parents before children), then attributes and
    /// tags are set, then renames and trash moves, then deletions, the last two deepest path first so an
    /// entry is handled before the directory holding it.
    package static func ordered(_ actions: [Action]) -> [Action] {
        order(of: actions).map { actions[$0] }
    }

    /// The indices of `actions` in the order they run (no copy of the actions themselves).
    package static func order(of actions: [Action]) -> [Int] {
        // Through a buffer pointer: `actions[x]` retained and released each path a comparison read (a check of
        // a 25,000-delete plan's order cost 3.4 M instructions before the run's first step).
        actions.withUnsafeBufferPointer { a in
            let phases = a.map(phase(of:))
            func precedes(_ x: Int, _ y: Int) -> Bool {
                let (px, py) = (phases[x], phases[y])
                if px != py { return px < py }
                // memcmp order (shorter first on a shared prefix), as lexicographicallyPrecedes, a byte loop, gave.
                let c = ByteOrder.compare(a[x].path.bytes, a[y].path.bytes)
                if c != 0 { return px.deepestFirst ? c > 0 : c < 0 }
                return x < y
            }
            // A plan sorted by path and holding one phase (a cleanup of deletes only) needs only reversing.
            var order = Array(a.indices.reversed())
            if !zip(order, order.dropFirst()).allSatisfy({ precedes($0, $1) }) {
                order = Array(a.indices)
                order.sort(by: precedes)
            }
            return order
        }
    }

    /// The phase an action runs in.
    static func phase(of a: Action) -> Phase {
        // Most steps are deletes: answered without the switch, which copied the kind (its payload retained).
        if a.isDelete { return .deletions }
        return switch a.kind {
        case .mkdir, .mkfile, .symlink: .directories
        case .setxattr, .writeTag, .unmark, .untag, .setPermissions: .labels
        case .rename, .trash: .moves
        case .delete: .deletions
        }
    }

    /// The phases of an apply, in the order they run: directories, then labels, then moves, then deletions.
    package enum Phase: Int, Sendable, Comparable {
        /// mkdir, parents before children.
        case directories
        /// setxattr, write-tag, unmark and untag.
        case labels
        /// rename and trash, deepest path first.
        case moves
        /// delete, deepest path first.
        case deletions

        package static func < (a: Phase, b: Phase) -> Bool { a.rawValue < b.rawValue }

        /// True where an entry must go before the directory holding it.
        var deepestFirst: Bool { self >= .moves }
    }

    // MARK: Soft delete

    /// Moves each path into `folder` (created when missing, in `options.trashLayout`), with a Finder-style
    /// unique name, recording when: a `.trashinfo` in the FreeDesktop layout, xattr stamps in an app trash.
    package func trash(_ paths: [RelativePath], into folder: RelativePath, policy: String = "-",
                      options: ApplyOptions) throws(ApplyError) -> ApplyReport {
        var missing: [ApplyReport.Item] = []
        var steps: [Step] = []
        for path in paths {
            let action = Action(kind: .trash(to: folder), path: path, rule: "trash", reason: "policyctl trash")
            // Refused here, before a transaction begins, so a refused trash journals nothing (the run would
            // refuse it too, but only after journaling a transaction that does nothing).
            if path.hasPrefix(folder) || folder.hasPrefix(path) {
                let why = path.hasPrefix(folder) ? "is already in the trash folder" : "holds the trash folder itself"
                missing.append(ApplyReport.Item(action: action, outcome: .skipped(why)))
                continue
            }
            guard let status = try? statusIfPresent(path) else {
                missing.append(ApplyReport.Item(action: action, outcome: .skipped("no such file or directory")))
                continue
            }
            var stamped = action
            stamped.identity = status.identity
            stamped.type = status.type
            stamped.bytes = status.allocatedSize
            steps.append(Step(action: stamped, verb: .trash, restore: nil))
        }
        var report = try run(steps, kind: .trash, policy: policy, options: options)
        // Directory items moved into a FreeDesktop trash get their `directorysizes` entries.
        let moved = report.lazyItems.compactMap { item -> FileName? in
            guard case .done = item.outcome, item.action.type == .directory, let to = item.destination else { return nil }
            return to.lastComponent
        }
        if !moved.isEmpty {
            TrashSizesCache.update(TrashFolder(path: folder, layout: detectLayout(folder, requested: options.trashLayout)),
                                   root: lock.state.root, adding: moved)
        }
        report.items += missing
        return report
    }

    /// Puts items named `names` (as they are in the trash) back where they were trashed from, never replacing
    /// anything; their `.trashinfo` or xattr stamps go with them. Where from comes from the engine's own records
    /// (TrashOrigins): the journal, or a `.trashinfo` / index entry root or the euid wrote; a trash folder that
    /// fails the trust rule is not restored from at all. With `destination` (one name only), the item goes there
    /// instead, under the same rules: never replacing anything, never into another user's folder.
    package func restore(_ names: [FileName], from folder: RelativePath, to destination: RelativePath? = nil, policy: String = "-",
                        options: ApplyOptions) throws(ApplyError) -> ApplyReport {
        var missing: [ApplyReport.Item] = []
        var steps: [Step] = []
        let layout = detectLayout(folder, requested: options.trashLayout)
        let trash = TrashFolder(path: folder, layout: layout)
        let untrusted = names.isEmpty ? nil : trashTrustProblem(trash)
        let journaled = names.isEmpty || untrusted != nil ? [:] : journaledOrigins(into: trash.itemsFolder)
        for name in names {
            let item = trash.itemsFolder.appending(name)
            var action = Action(kind: .rename(to: item), path: item, rule: "restore", reason: "policyctl trash --restore")
            guard let status = try? statusIfPresent(item) else {
                missing.append(ApplyReport.Item(action: action, verb: .restore, outcome: .skipped("not in the trash folder \(folder.escaped)")))
                continue
            }
            if let untrusted {
                missing.append(ApplyReport.Item(action: action, verb: .restore, outcome: .skipped(untrusted)))
                continue
            }
            // The journal's move into the trash, when it moved this very entry.
            let recorded = journaled[name].flatMap { $0.device == status.device && $0.inode == status.inode ? $0.from : nil }
            let cleanup: RestoreCleanup
            var original = destination ?? recorded
            var claimed: [UInt8]? = nil
            if let infoFolder = trash.infoFolder {
                let record = trustedRecord(in: infoFolder, for: name)
                if original == nil { original = record.flatMap { relativeToRoot($0.origin, rootPath: options.rootPath) } }
                cleanup = .trashInfo(infoFolder.appending(TrashFolder.infoName(for: name)))
            } else {
                let directory = try? lock.state.root.openDirectory(at: item.parent)
                let origin = (try? directory?.extendedAttribute(TrashFolder.originAttribute, of: name)) ?? nil
                let stamp = (try? directory?.extendedAttribute(Markers.trashStampAttribute, of: name)) ?? nil
                let record = trash.indexFolder.flatMap { trustedRecord(in: $0, for: name) }
                if original == nil { original = record.flatMap { relativeToRoot($0.origin, rootPath: options.rootPath) } }
                claimed = origin
                if origin != nil {
                    cleanup = .attributes(stamp: stamp, origin: origin)
                } else if let record {
                    // Hard-linked files and symlinks carry no stamps: their index entry goes with them.
                    cleanup = .trashInfo(record.path)
                } else {
                    cleanup = .attributes(stamp: stamp, origin: nil)
                }
            }
            guard let original, !original.isRoot else {
                let why = Applier.noTrustedRecord(item, rootPath: options.rootPath, claimed: claimed)
                missing.append(ApplyReport.Item(action: action, verb: .restore, outcome: .skipped(why)))
                continue
            }
            // Restored into the trash folder itself, the item would lose its record and stay there undated, kept
            // forever: a destination inside the trash is refused (a `--to`, or a record naming one).
            if original.hasPrefix(folder) {
                missing.append(ApplyReport.Item(action: action, verb: .restore, outcome: .skipped(
                    "the destination \(original.escaped) is inside the trash folder \(folder.escaped); an item restored there would be kept forever, undated: restore it outside the trash")))
                continue
            }
            action.kind = .rename(to: original)
            action.identity = status.identity
            action.type = status.type
            steps.append(Step(action: action, verb: .restore, restore: cleanup))
        }
        var report = try run(steps, kind: .restore, policy: policy, options: options)
        if layout == .freedesktop, report.done > 0 {
            TrashSizesCache.update(trash, root: lock.state.root, removing: report.lazyItems.compactMap { item in
                if case .done = item.outcome { item.action.path.lastComponent } else { nil }
            })
        }
        report.items += missing
        return report
    }

    /// `.freedesktop` when the folder has `files/` or `info/`, else `.app`, unless a layout is requested.
    package func detectLayout(_ folder: RelativePath, requested: TrashRetention.Layout) -> TrashRetention.Layout {
        guard requested == .automatic else { return requested }
        guard let directory = try? lock.state.root.openDirectory(at: folder) else { return .app }
        let files = (try? directory.statusIfPresent(of: TrashFolder.filesName)) ?? nil
        let info = (try? directory.statusIfPresent(of: TrashFolder.infoName)) ?? nil
        return TrashFolder.detectedLayout(filesIsDirectory: files?.type == .directory, infoIsDirectory: info?.type == .directory)
    }

    private func run(_ steps: [Step], kind: TransactionKind, policy: String, options: ApplyOptions) throws(ApplyError) -> ApplyReport {
        let metadata = Transaction.Metadata(kind: kind, policy: policy, policySHA256: options.policySHA256,
                                            policyPath: options.policyPath, planFile: nil, rootPath: options.rootPath,
                                            actions: steps.count)
        return try ApplyRun.run(steps, lock: lock, options: options, metadata: metadata, planTimeNs: nil)
    }

    private func statusIfPresent(_ path: RelativePath) throws -> FileStatus {
        guard let name = path.lastComponent else { throw FileSystemError(.stat, path: path, errno: .invalidArgument) }
        return try lock.state.root.openDirectory(at: path.parent).status(of: name)
    }

    /// A `.trashinfo` Path, absolute under the root (or relative to it), as a root-relative path.
    private func relativeToRoot(_ bytes: [UInt8], rootPath: String) -> RelativePath? {
        var root = Array(rootPath.utf8)
        while root.count > 1 && root.last == 0x2F { root.removeLast() }
        if bytes.first == 0x2F {
            guard bytes.count > root.count + 1, bytes.starts(with: root), bytes[root.count] == 0x2F else { return nil }
            return RelativePath(bytes[(root.count + 1)...])
        }
        return RelativePath(bytes)
    }
}
