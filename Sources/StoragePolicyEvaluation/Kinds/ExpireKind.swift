// expire: entries (or, with `unit: directory`, whole child folders) older than `after` are deleted, the `keep`
// newest per directory spared. Scopes and layout directories are structure: never expired.

@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyModel
@_spi(Layers) import StoragePolicyPlan

/// The expire rule kind.
package struct ExpireKind: RuleKindBehavior {
    package static let keyword = ExpireSyntax.keyword
    let expire: Expire

    package init(_ expire: Expire) { self.expire = expire }

    package func makeJudge() -> any EntryJudge { ExpireJudge(expire) }

    /// An expire rule deletes what it selects (with `unit: directory`, only the scope's direct children), and by
    /// mtime or newest only what is old enough by the mtime the action records.
    package func planProblem(_ action: Action, _ rule: CompiledRule, _ plan: PlanValidation, now: Int64) -> String? {
        guard case .delete = action.kind else { return plan.refusal(action, rule) }
        let path = action.path
        if let why = plan.structureProblem(path) { return why }
        if let why = plan.selection(action, rule) { return why }
        // `unit: directory` deletes only the scope's direct children (folders whole, files as units).
        if expire.judgesUnits && path.components.count != rule.rule.path.components.count + 1 {
            return "rule '\(rule.name)' has unit: directory: it deletes only direct children of its scope \(plan.scopeText(rule))"
        }
        // The recorded mtime is the entry's own (apply skips an entry whose mtime differs), so an expire by
        // mtime, or by the newest time (never older than mtime), can be checked here: a fresh file is no
        // expire rule's to delete. Ages by atime or ctime alone are not recorded.
        // A regenerable rule's file may be younger: a pressure rule may evict it before `after`.
        if expire.neverOlderThanMtime, !rule.rule.regenerable, let mtime = action.identity?.modificationTimeNs,
           !Ages.isOlder(mtime, than: expire.after, now: now) {
            return "its mtime is not older than \(expire.after): rule '\(rule.name)' does not expire it"
        }
        return nil
    }

    package func explain(_ entry: ExplainedEntry) -> [String] {
        let (label, time) = expire.timestamp(of: entry.status)
        let text = Ages.describe(label, time, limit: expire.after, now: entry.now)
        guard Ages.isOlder(time, than: expire.after, now: entry.now) else {
            // Only a regenerable rule's files can be taken sooner, by a pressure rule naming it (PressureKinds).
            guard entry.rule.rule.regenerable, entry.status.type == .regular else { return ["\(text): keep"] }
            let floor = expire.minAge.map { minAge in
                Ages.age(of: time, now: entry.now) < minAge.nanoseconds ? "; younger than minAge \(minAge), so not even then" : "; minAge \(minAge) no longer protects it"
            } ?? ""
            return ["\(text): keep; regenerable: a pressure rule naming this rule may evict it sooner, oldest first\(floor)"]
        }
        return [entry.status.type == .directory
            ? "\(text): expired; deleted once everything in it is deleted\(entry.consequence)"
            : "\(text): delete\(entry.consequence)"]
    }

    package func summary(of rule: Rule, scope: String) -> String {
        "Entries under \(scope) expire once their \(expire.newestOf == nil ? expire.by.rawValue : expire.byText) is more than \(expire.after) ago."
    }

    package func help(for rule: Rule) -> String {
        "Entries past their age are deleted by `policyctl apply`; delete or move them, or adjust the rule's `after`."
    }

    /// Units with `keep` are ranked against their siblings once the walk has dated them all.
    package static func resolve(_ c: inout ResolutionContext) {
        let settled = DirectoryUnits.settle(c.results.flatMap(\.pendingUnits), rules: c.rules) { c.report($0, $1, $2) }
        c.actions += settled
    }
}

/// The walk's side of expire rules: verdicts on each entry (first, before any other kind's), and on each
/// directory as it is visited.
package final class ExpireJudge: EntryJudge {
    /// A selected directory may be deleted once empty: its contents must be seen.
    package func needsBelow(_ rule: CompiledRule, _ directory: ArraySlice<ArraySlice<UInt8>>, _ name: ArraySlice<UInt8>) -> Bool {
        if rule.selects(directory, name) && rule.admits(.directory) { return true }
        return rule.matchCouldMatchBelow(directory, name)
    }

    let expire: Expire

    package init(_ expire: Expire) { self.expire = expire }

    package var expiry: ExpireJudge? { self }

    package func judgeDirectory(_ e: Evaluator, _ rule: CompiledRule, directory: ArraySlice<ArraySlice<UInt8>>,
                                 _ d: inout DirectoryJudgement, worker: EvaluationResults) {
        // Scopes, layout directories and the way to them are structure: never expired.
        guard !d.structural, !expire.judgesUnits, rule.admits(.directory), rule.selects(directory, d.name),
              !d.kept.protects(rule.index, d.name) else { return }
        let (label, time) = expire.timestamp(of: d.listing.directoryStatus)
        guard Ages.isOlder(time, than: expire.after, now: e.now) else { return }
        let verdict = Verdict(rule: rule.index, reason: Ages.describe(label, time, limit: expire.after, now: e.now))
        if rule.enforces {
            if d.deletion == nil { d.deletion = verdict }
        } else {
            d.auditDeletions.append(verdict)
        }
    }

    /// Entry `i` meets this expire rule: a delete verdict (the first enforcing one wins), an audit verdict,
    /// a pending unit, or (a directory) whether the walk must go below it.
    package func judgeEntry(_ e: Evaluator, _ view: Evaluator.RuleView, _ listing: DirectoryListing, _ i: Int,
                    name: ArraySlice<UInt8>, type: FileType, status: inout EntryStatus, kept: KeptEntries,
                    enter: inout Bool, deleteVerdict: inout Verdict?, auditVerdicts: inout [Verdict],
                    worker: EvaluationResults) {
        let rule = view.rule
        if type == .directory {
            if !enter && rule.needsBelow(view.directory, name) { enter = true }
            return
        }
        // A unit rule judges files directly in its scope; what is inside a unit goes with the unit.
        if expire.judgesUnits && !view.directory.isEmpty { return }
        if expire.judgesUnits && expire.keep > 0 {
            // A file in the scope is a unit of its own, kept or not by its rank among all the units.
            guard rule.admits(type), rule.selects(view.directory, name), let s = status.read(e, worker: worker) else { return }
            let (label, time) = expire.timestamp(of: s)
            var pending = PendingUnit(rule: view.index, scope: listing.path, name: Array(name), newest: time,
                                      action: nil, finding: nil, held: [])
            if Ages.isOlder(time, than: expire.after, now: e.now) {
                let reason = worker.describe(label, time, limit: expire.after, now: e.now)
                if rule.enforces {
                    pending.action = Action(kind: .delete, path: listing.path(of: i), rule: rule.name, reason: reason,
                                            bytes: s.bytesFreedByRemoval, identity: s.identity, type: type)
                } else {
                    pending.finding = "\(reason): would be deleted"
                }
            }
            worker.pendingUnits.append(pending)
            return
        }
        if rule.enforces && deleteVerdict != nil { return }
        guard rule.admits(type), rule.selects(view.directory, name), !kept.protects(view.index, name),
              let s = status.read(e, worker: worker) else { return }
        let (label, time) = expire.timestamp(of: s)
        guard Ages.isOlder(time, than: expire.after, now: e.now) else {
            // Not expired, but a pressure rule may evict it (oldest first by this rule's timestamp): recorded in
            // the thread's quota ledger under this rule. What `keep` spares was never recorded; undatable stays.
            if rule.pressureNamed && type == .regular && time != .max {
                worker.quota.add(rule: view.index, directory: worker.quota.directoryReusingLast(listing.path), name: name,
                                 status: s, time: time)
            }
            return
        }
        let verdict = Verdict(rule: view.index, reason: worker.describe(label, time, limit: expire.after, now: e.now))
        if rule.enforces { deleteVerdict = verdict } else { auditVerdicts.append(verdict) }
    }
}
