// quota: once the walk has counted a scope's regular files (allocated bytes, hard links once), the oldest (or least
// recently used) files, or with `unit: directory` whole child folders, are evicted down to the target.
// Never evicts a file with several hard links, what minAge or keep protect, or what an earlier step removes.

@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyModel
@_spi(Layers) import StoragePolicyPlan

/// The quota rule kind.
package struct QuotaKind: RuleKindBehavior {
    package static let keyword = QuotaSyntax.keyword
    package static let resolvesAfterSettledDeletes = true
    let quota: Quota

    package init(_ quota: Quota) { self.quota = quota }

    package func makeJudge() -> any EntryJudge { QuotaJudge(quota) }

    /// Quota counts regular files only, whatever `type:` says.
    package static func admits(_ type: FileType, filter: EntryTypeFilter?) -> Bool { type == .regular }

    /// A quota rule deletes regular files it selects, or (`unit: directory`) the scope's direct children.
    package func planProblem(_ action: Action, _ rule: CompiledRule, _ plan: PlanValidation, now: Int64) -> String? {
        guard case .delete = action.kind else { return plan.refusal(action, rule) }
        let path = action.path
        if let why = plan.structureProblem(path) { return why }
        if quota.unit == .directory {
            // Units: the scope's direct children, folders whole; nothing deeper.
            if path.components.count != rule.rule.path.components.count + 1 {
                return "rule '\(rule.name)' has unit: directory: it evicts only direct children of its scope \(plan.scopeText(rule))"
            }
            if action.type != .regular && action.type != .directory { return "a quota rule evicts regular files and folders only" }
            // `type:` on a quota speaks of the files it counts; units are selected by name alone.
            var unit = action
            unit.type = nil
            return plan.selection(unit, rule)
        }
        if action.type != .regular { return "a quota rule deletes regular files only" }
        return plan.selection(action, rule)
    }

    package func explain(_ entry: ExplainedEntry) -> [String] {
        let s = entry.status
        let time = quota.evict == .lru ? s.accessTimeNs : s.modificationTimeNs
        // The new keys are named only when set, so the default explanation reads as it always did.
        var order = ""
        if !quota.eviction.isDefault {
            order = "; evicted \(quota.eviction.describe(quota.evictionOrder, oldest: "oldest (mtime)"))"
            let relative = RelativePath(unchecked: Array((Array(entry.directory) + [entry.name]).joined(separator: [0x2F])))
            if quota.eviction.goesFirst(relative) {
                order += " (it matches first:, so it goes before the rest)"
            }
            if let n = quota.eviction.maxEntries { order += "; at most \(n) files kept" }
        }
        if quota.per == .owner {
            // Whose quota the file counts toward (and, in the plan, whose quota took it).
            return ["counts toward the quota of its owner, uid \(s.userID) (per: owner: each owner's files apart): \(ByteSize.human(s.allocatedSize)) allocated, \(quota.evict == .lru ? "atime" : "mtime") \(Ages.human(nanoseconds: Ages.age(of: time, now: entry.now))) ago\(order); eviction depends on uid \(s.userID)'s files in the scope (see the plan below)"]
        }
        return ["counts toward the quota: \(ByteSize.human(s.allocatedSize)) allocated, \(quota.evict == .lru ? "atime" : "mtime") \(Ages.human(nanoseconds: Ages.age(of: time, now: entry.now))) ago\(order); eviction depends on the whole scope (see the plan below)"]
    }

    package func summary(of rule: Rule, scope: String) -> String {
        "Files under \(scope) take at most \(quota.max)\(quota.per == .owner ? " per owner" : ""), evicting the \(quota.evict == .oldest ? "oldest" : "least recently used") first."
    }

    package func help(for rule: Rule) -> String {
        "The folder is over its quota: `policyctl apply` evicts the files listed; free space, or raise `max`."
    }

    /// Quotas, in policy order, over what is left once the deletions and moves before them are done. Files
    /// are handled by (ledger, record) numbers: a quota scope may hold most of a million files.
    package static func resolve(_ c: inout ResolutionContext) {
        let now = c.now
        let ledgers = c.results.map(\.quota)
        let lastQuotaRule = c.rules.last { if case .quota = $0.rule.kind { true } else { false } }?.index
        for rule in c.rules {
            guard case .quota(let quota) = rule.rule.kind else { continue }
            if quota.per == .owner {
                OwnerQuotas.resolve(rule, quota, ledgers: ledgers, &c)
                continue
            }
            if quota.unit == .directory {
                evictUnits(rule, quota, ledgers: ledgers, units: c.results.flatMap(\.quotaUnits), &c)
                continue
            }
            // Per-file removal checks only when something under this scope was deleted or moved.
            let check = c.gone.hasRemovals(under: rule.rule.path)
            // Eviction order keys side by side: sorting compares times in one flat array.
            var candidates: [(time: Int64, member: UInt64)] = []
            var seenInodes = Set<UInt64>()
            var used: Int64 = 0
            var files = 0
            for (l, ledger) in ledgers.enumerated() {
                ledger.records.withUnsafeBufferPointer { records in
                    for i in records.indices where Int(records[i].rule) == rule.index {
                        if check && c.gone.isRemoved(ledger.path(i)) { continue }
                        let r = records[i]
                        if r.linkCount <= 1 || seenInodes.insert(r.inode).inserted { used += r.allocated; files += 1 }
                        if r.linkCount <= 1 { candidates.append((r.time, UInt64(l) << 32 | UInt64(i))) }
                    }
                }
            }
            @inline(__always) func record(_ m: UInt64) -> QuotaLedger.Record { ledgers[Int(m >> 32)].records[Int(m & 0xFFFF_FFFF)] }
            @inline(__always) func path(_ m: UInt64) -> RelativePath { ledgers[Int(m >> 32)].path(Int(m & 0xFFFF_FFFF)) }
            let maximum = quota.max.bytes
            let target = quota.target.bytes(of: quota.max)
            // Over maxEntries alone, eviction stops at maxEntries, not at the byte target.
            guard used > maximum || quota.eviction.exceedsEntries(files) else { continue }
            let byteGoal = used > maximum ? target : Int64.max
            if quota.evict == .lru && c.relaxedAtime.contains(rule.index) {
                c.notes.append("quota rule '\(rule.name)' evicts by access time, but \(rule.rule.path.isEmpty ? "the root" : rule.rule.path.escaped) is on a relatime/noatime mount: access times are approximate")
            }
            candidates.sort { a, b in a.time != b.time ? a.time < b.time : ByteOrder.precedes(path(a.member), path(b.member)) }
            let protected = QuotaProtection.removeProtected(&candidates, quota: quota, now: now)
            let scope = rule.rule.path
            EvictionOrdering.reorder(&candidates, quota.eviction, order: quota.evictionOrder, bytes: { record($0).allocated },
                                     relativePath: { path($0).relative(to: scope) ?? .root })
            var remaining = used
            var left = files
            var evicted = 0
            for candidate in candidates where remaining > byteGoal || quota.eviction.exceedsEntries(left) {
                remaining -= record(candidate.member).allocated
                left -= 1
                evicted += 1
            }
            candidates.removeLast(candidates.count - evicted)
            // One reason shared by every eviction of this rule (one string, not one per file).
            let reason = EvictionOrdering.quotaReason(quota, used: used, maximum: maximum, files: files)
            let summary = String(reason.dropFirst("quota: ".count).prefix { $0 != ";" })
            if rule.enforces {
                // Paths and identities first, then the ledgers go (after the last quota rule), then the actions:
                // the ledgers and a quarter of a million new actions are never in memory together.
                var evictions: [(path: RelativePath, bytes: Int64, identity: EntryIdentity)] = []
                evictions.reserveCapacity(evicted)
                for candidate in candidates {
                    let l = Int(candidate.member >> 32), i = Int(candidate.member & 0xFFFF_FFFF)
                    evictions.append((ledgers[l].path(i), ledgers[l].records[i].allocated, ledgers[l].identity(i)))
                }
                candidates = []
                if rule.index == lastQuotaRule && c.space == nil { for ledger in ledgers { ledger.release() } }
                c.actions.reserveCapacity(c.actions.count + evicted)
                for e in evictions {
                    c.actions.append(Action(kind: .delete, path: e.path, rule: rule.name, reason: reason, bytes: e.bytes,
                                            identity: e.identity, type: .regular))
                }
                c.gone.addDeletes(evictions.map(\.path))
            } else {
                c.report(rule.index, rule.rule.path, "\(summary); would evict \(evicted) files (\(ByteSize.human(used - remaining))) to reach \(used > maximum ? ByteSize.human(target) : "maxEntries \(quota.eviction.maxEntries ?? 0)")")
            }
            if used > maximum {
                reportUnmet(rule, quota, used: used, remaining: remaining, target: target, protected: protected,
                            neverEvicted: "files with several hard links", &c)
            }
            if quota.eviction.exceedsEntries(left) {
                let limit = quota.eviction.maxEntries!
                if protected > 0 {
                    c.report(rule.index, rule.rule.path, "quota not met: \(left) files still over maxEntries \(limit); \(QuotaProtection.protection(quota, protected: protected))")
                }
                c.notes.append("quota rule '\(rule.name)': \(left - limit) files stay above maxEntries \(limit) (\(protected > 0 ? QuotaProtection.protection(quota, protected: protected) + "; " : "")files with several hard links are never evicted)")
            }
        }
        // Pressure rules (PressureEviction) read the ledgers after this, and release them.
        if c.space == nil { for ledger in ledgers { ledger.release() } }
    }

    /// One quota rule with `unit: directory`: evicts whole units, oldest (or least recently used) first.
    static func evictUnits(_ rule: CompiledRule, _ quota: Quota, ledgers: [QuotaLedger], units: [QuotaUnitRecord],
                           _ c: inout ResolutionContext) {
        var count = QuotaUnits.count(rule: rule, ledgers: ledgers, units: units, gone: &c.gone)
        let maximum = quota.max.bytes
        let target = quota.target.bytes(of: quota.max)
        let used = count.used
        guard used > maximum else { return }
        if quota.evict == .lru && c.relaxedAtime.contains(rule.index) {
            c.notes.append("quota rule '\(rule.name)' evicts by access time, but \(rule.rule.path.isEmpty ? "the root" : rule.rule.path.escaped) is on a relatime/noatime mount: access times are approximate")
        }
        count.candidates.sort { a, b in a.time != b.time ? a.time < b.time : ByteOrder.precedes(a.path, b.path) }
        var order = count.candidates.map { (time: $0.time, member: $0) }
        let protected = QuotaProtection.removeProtected(&order, quota: quota, now: c.now)
        let scope = rule.rule.path
        EvictionOrdering.reorder(&order, quota.eviction, order: quota.evictionOrder, bytes: \.bytes,
                                 relativePath: { $0.path.relative(to: scope) ?? .root })
        var remaining = used
        var evicted: [QuotaUnits.Candidate] = []
        for (_, candidate) in order where remaining > target {
            remaining -= candidate.bytes
            evicted.append(candidate)
        }
        let summary = "\(ByteSize.human(used)) used > \(ByteSize.human(maximum)) max"
        let reason = EvictionOrdering.quotaReason(quota, used: used, maximum: maximum, files: 0, unitDirectory: true)
        if rule.enforces {
            let folders = evicted.filter { $0.type == .directory }.map(\.path)
            c.gone.addDirectoryDeletes(folders, &c.actions)
            c.gone.addDeletes(evicted.filter { $0.type != .directory }.map(\.path))
            for e in evicted {
                c.actions.append(Action(kind: .delete, path: e.path, rule: rule.name, reason: reason, bytes: e.bytes,
                                        identity: e.identity, type: e.type, entries: e.entries))
            }
        } else {
            c.report(rule.index, rule.rule.path, "\(summary); would evict \(evicted.count) units (\(ByteSize.human(used - remaining))) to reach \(ByteSize.human(target))")
        }
        reportUnmet(rule, quota, used: used, remaining: remaining, target: target, protected: protected,
                    neverEvicted: "units that cannot be dated, structure and files with several hard links", &c)
    }

    /// A target eviction cannot reach: a violation when protection (`minAge`, `keep`) is why, and always a note
    /// naming the bytes that stay and what is never evicted.
    static func reportUnmet(_ rule: CompiledRule, _ quota: Quota, used: Int64, remaining: Int64, target: Int64,
                                    protected: Int, neverEvicted: String, _ c: inout ResolutionContext) {
        guard remaining > target else { return }
        // The cause first: protection when it kept anything (the violation names it), then what is never evicted.
        var causes: [String] = []
        if protected > 0 {
            c.report(rule.index, rule.rule.path, QuotaProtection.unmet(quota, rule: rule.name, remaining: remaining, target: target, protected: protected))
            causes.append(QuotaProtection.protection(quota, protected: protected))
        }
        causes.append("\(neverEvicted) are never evicted")
        c.notes.append("quota rule '\(rule.name)': only \(ByteSize.human(used - remaining)) can be evicted; \(ByteSize.human(remaining)) stays above the target of \(ByteSize.human(target)) (\(causes.joined(separator: "; ")))")
    }
}

/// The walk's side of quota rules: every selected regular file recorded in the thread's ledger.
package final class QuotaJudge: EntryJudge {
    /// `evict: lru` orders by atime, `oldest` by mtime.
    let byAccessTime: Bool
    /// `per: owner` records each file's uid.
    let byOwner: Bool

    package init(_ quota: Quota) { byAccessTime = quota.evict == .lru; byOwner = quota.per == .owner }

    package func judgeEntry(_ e: Evaluator, _ view: Evaluator.RuleView, _ listing: DirectoryListing, _ i: Int,
                             name: ArraySlice<UInt8>, type: FileType, status: inout EntryStatus, scratch: inout EntryScratch,
                             worker: EvaluationResults) {
        guard type == .regular, view.rule.selects(view.directory, name), let s = status.read(e, worker: worker) else { return }
        if scratch.quotaDirectory == nil { scratch.quotaDirectory = worker.quota.directory(listing.path) }
        worker.quota.add(rule: view.index, directory: scratch.quotaDirectory!, name: name, status: s,
                         time: byAccessTime ? s.accessTimeNs : s.modificationTimeNs, byOwner: byOwner)
    }
}
