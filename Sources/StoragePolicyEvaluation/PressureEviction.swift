// Pressure rules after the walk: the root volume's free space was measured once before it (Planner). A rule
// whose freeBelow the free space is not under does nothing. Below it, the named quota, expire and trash rules
// evict beyond their own limits (PressureKinds.swift for the last two), in the order named and each in its own
// order (oldest first by default), until the free space the plan expects reaches freeUntil: what the plan
// deletes anyway counts first. minAge and keep still protect, and
// the run's max-delete still caps the apply (these are ordinary deletes). Files with several hard links free
// nothing and are never taken. Every step is in the plan's notes: the statvfs snapshot and the bytes expected.

@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyModel
@_spi(Layers) import StoragePolicyPlan

package enum PressureEviction {
    package static func resolve(_ pressure: [PressureRule], reclaim: Int64? = nil, _ c: inout ResolutionContext) {
        guard let space = c.space else { return }
        let ledgers = c.results.map(\.quota)
        defer { for ledger in ledgers { ledger.release() } }
        // What the plan frees already, before any pressure rule (a delete held in the quarantine frees nothing).
        let held = c.quarantinedRules
        var expected = c.actions.reduce(Int64(0)) { if case .delete = $1.kind, !held.contains($1.rule) { $0 + $1.bytes } else { $0 } }
        var quarantineLeft = c.quarantineHeld
        let actionsBefore = c.actions.count
        defer {
            // Pressure's deletes must free space now: never held in the quarantine.
            if !c.quarantinedRules.isEmpty {
                for a in c.actions[actionsBefore...] where a.isDelete { c.pressureEvicted.insert(a.path) }
            }
        }
        let free = "\(ByteSize.human(space.available)) free of \(ByteSize.human(space.total)) (\(percent(space.available, of: space.total)))"
        for p in pressure {
            let below = p.freeBelow.bytes(ofVolume: space.total)
            // Making room on request: act now, until the asked bytes are free beyond today's free space.
            let until = reclaim.map { space.available + $0 } ?? p.freeUntil.bytes(ofVolume: space.total)
            let target = reclaim.map { "reclaim \(ByteSize.human($0)) (\(ByteSize.human(until)) free)" } ?? "freeUntil \(p.freeUntil) (\(ByteSize.human(until)))"
            guard reclaim != nil || space.available < below else {
                c.notes.append("pressure rule '\(p.name)': \(free) is not below freeBelow \(p.freeBelow) (\(ByteSize.human(below))): evicts nothing")
                continue
            }
            let reason = reclaim != nil
                ? "pressure '\(p.name)': \(free); making room on request: evicting until \(target)"
                : "pressure '\(p.name)': \(free) < freeBelow \(p.freeBelow); evicting until \(target)"
            var freed: Int64 = 0
            var files = 0
            var protectedTotal = 0
            // The quarantine goes first, oldest first: deletes already made, purged before a live entry is taken.
            if quarantineLeft > 0, space.available + expected < until {
                let taken = min(quarantineLeft, until - space.available - expected)
                quarantineLeft -= taken
                expected += taken
                c.notes.append("pressure rule '\(p.name)': the quarantine's deletes are purged first (oldest first): up to \(ByteSize.human(taken)) of the \(ByteSize.human(c.quarantineHeld)) it holds")
            }
            for name in p.evict {
                guard space.available + expected < until else { break }
                guard let rule = c.rules.first(where: { $0.name == name }), rule.rule.regenerable else { continue }
                let need = until - space.available - expected
                let taken: (bytes: Int64, files: Int), protected: Int
                switch rule.rule.kind {
                case .quota(let quota): (taken, protected) = evict(rule, quota, ledgers: ledgers, need: need, reason: reason, &c)
                case .expire(let expire): (taken, protected) = evict(rule, expire, ledgers: ledgers, need: need, reason: reason, &c)
                case .trash(let retention): (taken, protected) = evict(rule, retention, need: need, reason: reason, &c)
                default: continue
                }
                protectedTotal += protected
                freed += taken.bytes
                files += taken.files
                expected += taken.bytes
            }
            let short = until - space.available - expected
            let state = reclaim != nil ? "\(free), making room on request" : "\(free) < freeBelow \(p.freeBelow) (\(ByteSize.human(below)))"
            var note = "pressure rule '\(p.name)': \(state); expects to free \(ByteSize.human(freed)) more (\(files) files) to reach \(target)"
            if short > 0 {
                note += "; falls short by \(ByteSize.human(short))\(protectedTotal > 0 ? " (minAge and keep protect \(protectedTotal) files)" : ""): only regenerable rules' files are evicted"
            }
            c.notes.append(note)
        }
    }

    /// One quota rule's files beyond its own limit, in its order, until `need` bytes: what it took.
    private static func evict(_ rule: CompiledRule, _ quota: Quota, ledgers: [QuotaLedger], need: Int64, reason: String,
                              _ c: inout ResolutionContext) -> (taken: (bytes: Int64, files: Int), protected: Int) {
        var candidates = ledgerCandidates(rule, ledgers: ledgers, &c)
        func record(_ m: UInt64) -> QuotaLedger.Record { ledgers[Int(m >> 32)].records[Int(m & 0xFFFF_FFFF)] }
        func path(_ m: UInt64) -> RelativePath { ledgers[Int(m >> 32)].path(Int(m & 0xFFFF_FFFF)) }
        let protected = QuotaProtection.removeProtected(&candidates, quota: quota, now: c.now)
        let scope = rule.rule.path
        EvictionOrdering.reorder(&candidates, quota.eviction, order: quota.evictionOrder, bytes: { record($0).allocated },
                                 relativePath: { path($0).relative(to: scope) ?? .root })
        let order = quota.eviction.isDefault ? (quota.evict == .lru ? "least recently used (atime) first" : "oldest (mtime) first")
            : quota.eviction.describe(quota.evictionOrder, oldest: "oldest (mtime)")
        return (take(candidates, need: need, rule, ledgers: ledgers, reason: "\(reason); \(order)", &c), protected)
    }

    /// A rule's ledger files (quota's, or an expire rule's kept ones), oldest first, ties in byte order of path;
    /// files the run already removes and files with other links are not candidates.
    static func ledgerCandidates(_ rule: CompiledRule, ledgers: [QuotaLedger], _ c: inout ResolutionContext) -> [(time: Int64, member: UInt64)] {
        var candidates: [(time: Int64, member: UInt64)] = []
        let check = c.gone.hasRemovals(under: rule.rule.path)
        for (l, ledger) in ledgers.enumerated() {
            for i in ledger.records.indices where Int(ledger.records[i].rule) == rule.index && ledger.records[i].linkCount <= 1 {
                if check && c.gone.isRemoved(ledger.path(i)) { continue }
                candidates.append((ledger.records[i].time, UInt64(l) << 32 | UInt64(i)))
            }
        }
        func path(_ m: UInt64) -> RelativePath { ledgers[Int(m >> 32)].path(Int(m & 0xFFFF_FFFF)) }
        candidates.sort { a, b in a.time != b.time ? a.time < b.time : ByteOrder.precedes(path(a.member), path(b.member)) }
        return candidates
    }

    /// Deletes (or, for a rule that only reports, reports) `candidates` in order until `need` bytes: what it took.
    static func take(_ candidates: [(time: Int64, member: UInt64)], need: Int64, _ rule: CompiledRule, ledgers: [QuotaLedger],
                     reason: String, _ c: inout ResolutionContext) -> (bytes: Int64, files: Int) {
        var bytes: Int64 = 0
        var taken: [RelativePath] = []
        for candidate in candidates where bytes < need {
            let l = Int(candidate.member >> 32), i = Int(candidate.member & 0xFFFF_FFFF)
            let p = ledgers[l].path(i)
            bytes += ledgers[l].records[i].allocated
            taken.append(p)
            if rule.enforces {
                c.actions.append(Action(kind: .delete, path: p, rule: rule.name, reason: reason,
                                        bytes: ledgers[l].records[i].allocated, identity: ledgers[l].identity(i), type: .regular))
            } else {
                c.report(rule.index, p, "\(reason): would be evicted")
            }
        }
        if rule.enforces { c.gone.addDeletes(taken) }
        return (rule.enforces ? bytes : 0, rule.enforces ? taken.count : 0)
    }

    /// `6.4 %`.
    package static func percent(_ part: Int64, of total: Int64) -> String {
        guard total > 0 else { return "0 %" }
        let tenths = (Double(part) * 1000 / Double(total)).rounded() / 10
        return "\(tenths) %"
    }
}
