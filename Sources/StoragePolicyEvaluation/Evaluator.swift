// The single pass: every rule whose scope holds an entry judges it as the walker lists it, stat'ing only
// when a verdict needs metadata. Produces actions and findings; never changes anything on disk.
import Synchronization
@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyModel
@_spi(Layers) import StoragePolicyPlan

package final class Evaluator: WalkVisitor {
    package typealias Directory = EvaluatedDirectory
    package typealias Worker = EvaluationResults

    package let rules: [CompiledRule]
    let trie: ScopeTrie
    /// Ages are measured against this instant (ns since the epoch).
    package let now: Int64
    /// Where entries are moved into the trash: its names are recorded so moves get free names.
    let trashTarget: RelativePath?
    let backupMarker: (name: String, value: [UInt8])
    package let progress: ProgressReporter?

    package init(rules: [CompiledRule], trie: ScopeTrie, now: Int64, trashTarget: RelativePath?,
         backupMarker: (name: String, value: [UInt8]), progress: ProgressReporter?) {
        self.rules = rules; self.trie = trie; self.now = now; self.trashTarget = trashTarget
        self.backupMarker = backupMarker; self.progress = progress
    }

    package func makeWorker() -> EvaluationResults { EvaluationResults() }

    // MARK: Visiting a directory

    package func visit(_ listing: DirectoryListing, parent: EvaluatedDirectory?, worker: EvaluationResults) -> EvaluatedDirectory {
        worker.entriesScanned += listing.count
        progress?.advance(by: listing.count, in: listing.path)

        let node: ScopeTrie?
        var active: [Int]
        if let parent {
            node = parent.trie?.child(listing.components[listing.components.count - 1])
            active = parent.active
            if let node, !node.rules.isEmpty { active += node.rules }
        } else {
            node = trie
            active = trie.rules
        }

        var deletion: Verdict? = nil
        var auditDeletions: [Verdict] = []
        var trashItem: TrashItem? = nil
        if let parent, !parent.active.isEmpty, listing.directoryStatus.hasTimeOutOfRange {
            // Its times cannot be judged: kept and reported; its entries are still judged one by one.
            worker.skipped.append(SkippedEntry(path: listing.path, reason: Evaluator.timeOutOfRange))
        } else if let parent, !parent.active.isEmpty {
            judgeItself(listing, parentActive: parent.active, structural: node != nil, kept: parent.kept, worker: worker,
                        deletion: &deletion, auditDeletions: &auditDeletions, trashItem: &trashItem)
        }

        var aggregate = EvaluatedDirectory.Aggregate()
        aggregate.entries = listing.count
        aggregate.remaining = listing.count
        aggregate.remainingAny = listing.count
        let unit = parent.flatMap { DirectoryUnits.unit(of: listing, parentActive: $0.active, rules: rules, structural: node != nil) }
        let unitBy = unit?.by ?? parent?.unitBy
        if let unitBy { DirectoryUnits.date(listing, by: unitBy, into: &aggregate) }
        // Inside a unit everything is held: the unit may go whole.
        let holds = deletion != nil || unitBy != nil
        var kept = KeptEntries.none
        if !active.isEmpty {
            judgeEntries(listing, active: active, node: node, holds: holds, aggregate: &aggregate, kept: &kept, worker: worker)
        } else if let node, !node.children.isEmpty {
            for i in 0..<listing.count where listing.type(i) == .directory && node.child(listing.nameBytes(i)) != nil {
                listing.enter(i)
            }
        }
        if let trashTarget, listing.path == trashTarget {
            worker.trashFolderNames = (0..<listing.count).map(listing.name)
        }
        return EvaluatedDirectory(parent: parent, path: listing.path, trie: node, active: active,
                                  status: listing.directoryStatus, deletion: deletion,
                                  auditDeletions: auditDeletions, trashItem: trashItem, aggregate: aggregate, kept: kept,
                                  unit: unit, unitBy: unitBy)
    }

    /// The rules of the parent's scopes judge this directory as one of their entries: whether it is
    /// expired (and may go once empty), whether it is a trash item, whether it needs a backup marker.
    private func judgeItself(_ listing: DirectoryListing, parentActive: [Int], structural: Bool, kept: KeptEntries,
                             worker: EvaluationResults, deletion: inout Verdict?, auditDeletions: inout [Verdict],
                             trashItem: inout TrashItem?) {
        let components = listing.components
        var judgement = DirectoryJudgement(listing: listing, name: components[components.count - 1], structural: structural,
                                           kept: kept, deletion: deletion, auditDeletions: auditDeletions, trashItem: trashItem)
        for index in parentActive {
            let rule = rules[index]
            // Size, owner and group filters judge the directory's own status, as they did its entry in the parent.
            if rule.filterRejection(listing.directoryStatus) != nil { continue }
            rule.judge.judgeDirectory(self, rule, directory: components[rule.scopeDepth..<(components.count - 1)], &judgement,
                                      worker: worker)
        }
        deletion = judgement.deletion
        auditDeletions = judgement.auditDeletions
        trashItem = judgement.trashItem
    }

    /// Every entry of the directory meets the rules whose scope holds it.
    /// One active rule as this directory's entries see it: worked out once per directory, not per entry.
    /// A class: the per-entry loops hand a view to every judge, and copying a struct of four references
    /// retained and released each of them, per entry and rule (a tenth of a plan's instructions).
    package final class RuleView {
        package let index: Int
        package let rule: CompiledRule
        /// The rule's judge, loaded once per directory.
        let judge: any EntryJudge
        /// This directory's components below the rule's scope.
        package let directory: ArraySlice<ArraySlice<UInt8>>
        let trashRole: TrashRole

        package init(index: Int, rule: CompiledRule, judge: any EntryJudge, directory: ArraySlice<ArraySlice<UInt8>>, trashRole: TrashRole) {
            self.index = index; self.rule = rule; self.judge = judge; self.directory = directory; self.trashRole = trashRole
        }
    }

    private func judgeEntries(_ listing: DirectoryListing, active: [Int], node: ScopeTrie?, holds: Bool,
                              aggregate: inout EvaluatedDirectory.Aggregate, kept: inout KeptEntries,
                              worker: EvaluationResults) {
        let components = listing.components
        var scratch = EntryScratch()
        // Side by side, not as tuples: the per-entry loops copy plain values.
        var expiring: [RuleView] = []
        var expiryJudges: [ExpireJudge] = []
        var others: [RuleView] = []
        // Some kinds (trash) care about where in their scope this directory is, and what it measures.
        var measureAll = false
        for index in active {
            let rule = rules[index]
            let (role, measures) = rule.judge.prepare(self, rule, listing, worker: worker)
            if measures { measureAll = true }
            let view = RuleView(index: index, rule: rule, judge: rule.judge, directory: components[rule.scopeDepth...], trashRole: role)
            if let expiry = rule.judge.expiry {
                expiring.append(view)
                expiryJudges.append(expiry)
            } else {
                others.append(view)
            }
        }
        if expiryJudges.contains(where: { $0.expire.keep > 0 }) {
            // Unit rules count units, not entries: their keep is settled after the walk (DirectoryUnits.settle).
            let counting = expiring.indices.filter { !expiryJudges[$0].expire.judgesUnits }.map { expiring[$0] }
            kept = KeptEntries.newest(listing, rules: counting.map { ($0.index, $0.rule, $0.directory) }) { i in
                listing.type(i) == .directory && node?.child(listing.nameBytes(i)) != nil
            }
        }

        for i in 0..<listing.count {
            let name = listing.nameBytes(i)
            guard let type = listing.type(i) else {
                recordStatusFailure(listing, i, worker: worker)
                continue
            }
            if type == .directory, let node, node.child(name) != nil {
                // A scope, a layout directory or the way to one: structure, walked but never judged.
                listing.enter(i)
                continue
            }
            switch type {
            case .regular, .directory, .symlink: break
            default:
                worker.skipped.append(SkippedEntry(path: listing.path(of: i),
                                                   reason: "\(type.rawValue): not a regular file, directory or symlink; left alone"))
                continue
            }
            var enter = false
            var status = EntryStatus(listing, i)

            // Expiry first: an entry that is deleted meets no other rule.
            var deleteVerdict: Verdict? = nil
            var auditVerdicts: [Verdict] = []
            for k in expiring.indices {
                if filtersOut(expiring[k].rule, &status, worker: worker) {
                    // Not the rule's to delete, but what is inside may be.
                    if type == .directory && !enter && expiring[k].rule.matchCouldMatchBelow(expiring[k].directory, name) { enter = true }
                    continue
                }
                expiryJudges[k].judgeEntry(self, expiring[k], listing, i, name: name, type: type, status: &status, kept: kept,
                                           enter: &enter, deleteVerdict: &deleteVerdict, auditVerdicts: &auditVerdicts, worker: worker)
            }
            if let verdict = deleteVerdict, let s = status.read(self, worker: worker) {
                let action = Action(kind: .delete, path: listing.path(of: i), rule: rules[verdict.rule].name,
                                    reason: verdict.reason, bytes: s.bytesFreedByRemoval, identity: s.identity, type: type)
                if holds { aggregate.held.append(action) } else { worker.actions.append(action) }
                aggregate.remaining -= 1
                aggregate.remainingAny -= 1
                aggregate.bytes += s.bytesFreedByRemoval
                continue
            }
            if !auditVerdicts.isEmpty {
                aggregate.remainingAny -= 1
                for verdict in auditVerdicts {
                    report(verdict.rule, listing.path(of: i), "\(verdict.reason): would be deleted", worker)
                }
            }

            for view in others {
                if !filtersOut(view.rule, &status, worker: worker) {
                    view.judge.judgeEntry(self, view, listing, i, name: name, type: type, status: &status, scratch: &scratch,
                                          worker: worker)
                }
                if type == .directory && !enter && view.rule.needsBelow(view.directory, name) { enter = true }
            }
            if type == .directory {
                if enter { listing.enter(i) }
            } else if measureAll || listing.hasStatus(i), let s = status.read(self, worker: worker) {
                aggregate.bytes += s.bytesFreedByRemoval
            }
        }
        if !scratch.gathered.isEmpty { judgeGathered(listing, scratch.gathered, worker: worker) }
    }

    /// The entries rules gathered from one listing, handed to each rule's judge in rule order.
    private func judgeGathered(_ listing: DirectoryListing, _ gathered: [(rule: Int, entry: Int)], worker: EvaluationResults) {
        var byRule: [Int: [Int]] = [:]
        for g in gathered { byRule[g.rule, default: []].append(g.entry) }
        for rule in byRule.keys.sorted() {
            rules[rule].judge.judgeGathered(self, rules[rule], listing, byRule[rule]!, worker: worker)
        }
    }

    /// True when the rule's size, owner or group filter rejects the entry (or its status cannot be read, which
    /// is recorded once): the rule's judge never sees it. Rules without such filters read nothing here.
    @inline(__always)
    private func filtersOut(_ rule: CompiledRule, _ status: inout EntryStatus, worker: EvaluationResults) -> Bool {
        guard rule.filtersByStatus else { return false }
        guard let s = status.read(self, worker: worker) else { return true }
        return rule.filterRejection(s) != nil
    }

    func recordStatusFailure(_ listing: DirectoryListing, _ i: Int, worker: EvaluationResults) {
        let reason: String
        do {
            _ = try listing.status(i)
            return
        } catch {
            if error.isMountPoint {
                reason = WalkSkipReason.otherFileSystem.description
            } else if error.isTimeOutOfRange {
                reason = Evaluator.timeOutOfRange
            } else {
                reason = error.errno == .noSuchFile ? "vanished during the walk" : "cannot stat: \(error.errno)"
            }
        }
        worker.skipped.append(SkippedEntry(path: listing.path(of: i), reason: reason))
    }

    /// Why an entry whose timestamps do not fit in nanoseconds since the epoch is left alone.
    package static let timeOutOfRange = "a timestamp is out of range (before 1677 or after 2262); kept, not judged"

    package func report(_ rule: Int, _ path: RelativePath, _ message: String, _ worker: EvaluationResults) {
        worker.violations.append(Violation(rule: rules[rule].name, path: path, message: message,
                                           severity: rules[rule].rule.effectiveSeverity))
    }

    // MARK: Finishing a directory

    package func couldNotEnter(_ path: RelativePath, because reason: WalkSkipReason, parent: EvaluatedDirectory,
                       worker: EvaluationResults) {
        worker.skipped.append(SkippedEntry(path: path, reason: reason.description))
        if parent.unitBy != nil { parent.aggregate.withLock { $0.undatable = true } }
    }

    /// Bottom-up: a directory that was expired and ended up with every entry deleted becomes one delete
    /// covering its contents; otherwise the deletions held inside it are released.
    package func finished(_ directory: EvaluatedDirectory, worker: EvaluationResults) {
        let aggregate = directory.aggregate.withLock { a in
            let copy = a
            a.held = []
            return copy
        }
        let total = directory.status.bytesFreedByRemoval + aggregate.bytes
        let entries = 1 + aggregate.entries
        if let item = directory.trashItem {
            item.bytes = total
            item.entries = entries
        }
        var action: Action? = nil
        var wouldGo = false
        let newest = DirectoryUnits.newest(directory, aggregate)
        if let unit = directory.unit, !unit.quotas.isEmpty {
            // Quota units are weighed after the walk, against everything else the quota counts.
            worker.quotaUnits.append(QuotaUnitRecord(rules: unit.quotas, path: directory.path, identity: directory.status.identity,
                                                     entries: entries, newest: newest))
        }
        if let unit = directory.unit?.expiring, unit.expire.keep > 0, directory.deletion == nil {
            // Whether it goes depends on its siblings' dates: settled after the walk, with what it holds.
            var pending = PendingUnit(rule: unit.rule, scope: directory.path.parent, name: directory.path.lastComponent?.bytes ?? [],
                                      newest: newest, action: nil, finding: nil, held: aggregate.held)
            if let newest, Ages.isOlder(newest, than: unit.expire.after, now: now) {
                let reason = DirectoryUnits.reason(unit, newest: newest, now: now)
                if unit.enforces {
                    pending.action = Action(kind: .delete, path: directory.path, rule: rules[unit.rule].name, reason: reason,
                                            bytes: total, identity: directory.status.identity, type: .directory, entries: entries)
                } else {
                    pending.finding = "\(reason): would be deleted with its \(entries - 1) entries"
                }
            }
            worker.pendingUnits.append(pending)
        } else if let unit = directory.unit?.expiring, unit.expire.keep == 0, let newest, Ages.isOlder(newest, than: unit.expire.after, now: now) {
            let reason = DirectoryUnits.reason(unit, newest: newest, now: now)
            if unit.enforces {
                action = Action(kind: .delete, path: directory.path, rule: rules[unit.rule].name, reason: reason,
                                bytes: total, identity: directory.status.identity, type: .directory, entries: entries)
            } else {
                worker.actions.append(contentsOf: aggregate.held)
                report(unit.rule, directory.path, "\(reason): would be deleted with its \(entries - 1) entries", worker)
            }
            wouldGo = true
        } else if directory.unit == nil, directory.unitBy != nil, directory.parent?.holdsDeletions == true {
            // Inside a unit: what this folder held is the enclosing unit's to delete or release.
            directory.parent!.aggregate.withLock { $0.held += aggregate.held }
        } else if directory.unit != nil, directory.deletion == nil {
            worker.actions.append(contentsOf: aggregate.held)
        } else if let deletion = directory.deletion, aggregate.remaining == 0 {
            let what = aggregate.entries == 0 ? "empty" : "everything in it is deleted"
            action = Action(kind: .delete, path: directory.path, rule: rules[deletion.rule].name,
                            reason: "\(deletion.reason); \(what)", bytes: total,
                            identity: directory.status.identity, type: .directory, entries: entries)
            wouldGo = true
        } else {
            worker.actions.append(contentsOf: aggregate.held)
            if !directory.auditDeletions.isEmpty && aggregate.remainingAny == 0 {
                wouldGo = true
                for verdict in directory.auditDeletions {
                    report(verdict.rule, directory.path, "\(verdict.reason): would be deleted with its \(entries - 1) entries", worker)
                }
            }
        }
        guard let parent = directory.parent else { return }
        let emitted = parent.aggregate.withLock { p -> Bool in
            p.bytes += total
            p.entries += aggregate.entries
            if parent.unitBy != nil {
                if let newest { p.newest = max(p.newest, newest) } else { p.undatable = true }
            }
            if action != nil { p.remaining -= 1 }
            if wouldGo { p.remainingAny -= 1 }
            if let action, parent.holdsDeletions {
                p.held.append(action)
                return false
            }
            return true
        }
        if emitted, let action { worker.actions.append(action) }
    }
}

/// Reports walk progress now and then, from whichever thread gets there, one caller at a time.
package final class ProgressReporter: Sendable {
    private let callback: @Sendable (Int, RelativePath) -> Void
    private let seen = Atomic<Int>(0)
    private let gate = Mutex<Void>(())

    package init(_ callback: @escaping @Sendable (Int, RelativePath) -> Void) { self.callback = callback }

    func advance(by count: Int, in path: RelativePath) {
        let total = seen.add(count, ordering: .relaxed).newValue
        guard total / 2048 != (total - count) / 2048 else { return }
        gate.withLockIfAvailable { _ in callback(total, path) }
    }
}
