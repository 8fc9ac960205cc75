// quota `unit: directory`: each direct child folder of the scope is one unit, dated by the newest timestamp
// (the `evict` one) of anything inside it, sized by the allocated bytes of the regular files it holds (what the
// quota counts), and evicted whole; files directly in the scope are units of their own. minAge and keep apply
// to units. A unit that could not be dated, or that is structure (a scope, a layout directory), still counts
// toward the total but is never evicted. Touches no disk: the walk recorded everything.

enum QuotaUnits {
    struct Candidate {
        var time: Int64
        var path: RelativePath
        var bytes: Int64
        var identity: EntryIdentity
        var type: FileType
        var entries: Int
    }

    /// What a unit quota counts: the total (as for files), and the units that may be evicted.
    struct Count {
        var used: Int64 = 0
        var candidates: [Candidate] = []
    }

    /// The direct child of `scope` that `path` lies inside; nil for an entry directly in the scope.
    static func unitPath(of path: RelativePath, scope: RelativePath) -> RelativePath? {
        let bytes = path.bytes
        let start = scope.isEmpty ? 0 : scope.bytes.count + 1
        guard start < bytes.count, let slash = bytes[start...].firstIndex(of: 0x2F) else { return nil }
        return RelativePath(unchecked: Array(bytes[..<slash]))
    }

    /// Counts a unit quota's files, grouping those inside child folders into the folders' units.
    static func count(rule: CompiledRule, ledgers: [QuotaLedger], units: [QuotaUnitRecord], gone: inout Removals) -> Count {
        var count = Count()
        var byPath: [RelativePath: Int] = [:]
        for unit in units where unit.rules.contains(rule.index) {
            guard let newest = unit.newest, !gone.isRemoved(unit.path) else { continue }
            byPath[unit.path] = count.candidates.count
            count.candidates.append(Candidate(time: newest, path: unit.path, bytes: 0, identity: unit.identity,
                                              type: .directory, entries: unit.entries))
        }
        var seenInodes = Set<UInt64>()
        for ledger in ledgers {
            for i in ledger.records.indices where Int(ledger.records[i].rule) == rule.index {
                let r = ledger.records[i]
                let path = ledger.path(i)
                if gone.isRemoved(path) { continue }
                if r.linkCount <= 1 || seenInodes.insert(r.inode).inserted { count.used += r.allocated }
                if let unit = unitPath(of: path, scope: rule.rule.path) {
                    // Several hard links: removing this name frees nothing, so the unit's size leaves it out.
                    if let c = byPath[unit], r.linkCount <= 1 { count.candidates[c].bytes += r.allocated }
                } else if r.linkCount <= 1 {
                    count.candidates.append(Candidate(time: r.time, path: path, bytes: r.allocated, identity: ledger.identity(i),
                                                      type: .regular, entries: 1))
                }
            }
        }
        return count
    }
}

extension Resolution {
    /// One quota rule with `unit: directory`: evicts whole units, oldest (or least recently used) first.
    func evictUnits(_ rule: CompiledRule, _ quota: Quota, ledgers: [QuotaLedger], units: [QuotaUnitRecord],
                    gone: inout Removals, actions: inout [Action], notes: inout [String],
                    report: (Int, RelativePath, String) -> Void) {
        var count = QuotaUnits.count(rule: rule, ledgers: ledgers, units: units, gone: &gone)
        let maximum = quota.max.bytes
        let target = quota.target.bytes(of: quota.max)
        let used = count.used
        guard used > maximum else { return }
        if quota.evict == .lru && relaxedAtime.contains(rule.index) {
            notes.append("quota rule '\(rule.name)' evicts by access time, but \(rule.rule.path.isEmpty ? "the root" : rule.rule.path.escaped) is on a relatime/noatime mount: access times are approximate")
        }
        count.candidates.sort { a, b in a.time != b.time ? a.time < b.time : ByteOrder.precedes(a.path, b.path) }
        var order = count.candidates.map { (time: $0.time, member: $0) }
        let protected = QuotaProtection.removeProtected(&order, quota: quota, now: now)
        var remaining = used
        var evicted: [QuotaUnits.Candidate] = []
        for (_, c) in order where remaining > target {
            remaining -= c.bytes
            evicted.append(c)
        }
        let summary = "\(ByteSize.human(used)) used > \(ByteSize.human(maximum)) max"
        let reason = "quota: \(summary); unit: directory, \(quota.evict == .lru ? "least recently used (newest atime inside)" : "oldest (newest mtime inside)") first"
        if rule.enforces {
            let folders = evicted.filter { $0.type == .directory }.map(\.path)
            gone.addDirectoryDeletes(folders, &actions)
            gone.addDeletes(evicted.filter { $0.type != .directory }.map(\.path))
            for e in evicted {
                actions.append(Action(kind: .delete, path: e.path, rule: rule.name, reason: reason, bytes: e.bytes,
                                      identity: e.identity, type: e.type, entries: e.entries))
            }
        } else {
            report(rule.index, rule.rule.path, "\(summary); would evict \(evicted.count) units (\(ByteSize.human(used - remaining))) to reach \(ByteSize.human(target))")
        }
        if remaining > target && protected > 0 {
            report(rule.index, rule.rule.path, QuotaProtection.unmet(quota, rule: rule.name, remaining: remaining, target: target, protected: protected))
        }
        if remaining > target {
            notes.append("quota rule '\(rule.name)': only \(ByteSize.human(used - remaining)) can be evicted; \(ByteSize.human(remaining)) stays above the target of \(ByteSize.human(target)) (units that cannot be dated, structure and files with several hard links are never evicted)")
        }
    }
}
