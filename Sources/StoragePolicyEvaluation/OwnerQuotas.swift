// quota `per: owner`: the scope's files grouped by owner (uid), each owner a quota of their own. An owner over
// `max` (or `maxEntries`) is evicted down to the target in the rule's order, with minAge and keep counted among
// that owner's files alone; an owner under the limit loses nothing, however full the scope is. This is what keeps
// one heavy tenant of a shared /var/tmp or upload folder from making the cleanup take everybody's newest files.
// The uid is the one the walk's lstat saw; a file can change owner only through root (chown), so a co-tenant
// cannot move its bytes onto someone else's account.

@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyModel
@_spi(Layers) import StoragePolicyPlan

package enum OwnerQuotas {
    private struct Owner {
        var used: Int64 = 0
        var files = 0
        var candidates: [(time: Int64, member: UInt64)] = []
    }

    /// One `per: owner` quota rule (files, not units: the loader refuses `unit: directory` with it).
    package static func resolve(_ rule: CompiledRule, _ quota: Quota, ledgers: [QuotaLedger], _ c: inout ResolutionContext) {
        let check = c.gone.hasRemovals(under: rule.rule.path)
        var owners: [UInt32: Owner] = [:]
        var seenInodes = Set<UInt64>()
        for (l, ledger) in ledgers.enumerated() {
            for i in ledger.records.indices where Int(ledger.records[i].rule) == rule.index {
                if check && c.gone.isRemoved(ledger.path(i)) { continue }
                let r = ledger.records[i]
                let uid = ledger.owner(i)
                if r.linkCount <= 1 || seenInodes.insert(r.inode).inserted {
                    owners[uid, default: Owner()].used += r.allocated
                    owners[uid, default: Owner()].files += 1
                }
                if r.linkCount <= 1 { owners[uid, default: Owner()].candidates.append((r.time, UInt64(l) << 32 | UInt64(i))) }
            }
        }
        func record(_ m: UInt64) -> QuotaLedger.Record { ledgers[Int(m >> 32)].records[Int(m & 0xFFFF_FFFF)] }
        func path(_ m: UInt64) -> RelativePath { ledgers[Int(m >> 32)].path(Int(m & 0xFFFF_FFFF)) }
        let maximum = quota.max.bytes
        let target = quota.target.bytes(of: quota.max)
        let scope = rule.rule.path
        var noted = false
        for uid in owners.keys.sorted() {
            var owner = owners[uid]!
            guard owner.used > maximum || quota.eviction.exceedsEntries(owner.files) else { continue }
            if quota.evict == .lru && c.relaxedAtime.contains(rule.index) && !noted {
                noted = true
                c.notes.append("quota rule '\(rule.name)' evicts by access time, but \(scope.isEmpty ? "the root" : scope.escaped) is on a relatime/noatime mount: access times are approximate")
            }
            let byteGoal = owner.used > maximum ? target : Int64.max
            owner.candidates.sort { a, b in a.time != b.time ? a.time < b.time : ByteOrder.precedes(path(a.member), path(b.member)) }
            let protected = QuotaProtection.removeProtected(&owner.candidates, quota: quota, now: c.now)
            EvictionOrdering.reorder(&owner.candidates, quota.eviction, order: quota.evictionOrder, bytes: { record($0).allocated },
                                     relativePath: { path($0).relative(to: scope) ?? .root })
            var remaining = owner.used
            var left = owner.files
            var evicted: [UInt64] = []
            for candidate in owner.candidates where remaining > byteGoal || quota.eviction.exceedsEntries(left) {
                remaining -= record(candidate.member).allocated
                left -= 1
                evicted.append(candidate.member)
            }
            // Whose quota took the file is in every reason: `quota of uid 1001 (per: owner): 3.0 MiB used > 1.0 MiB max; ...`.
            let whose = "quota of uid \(uid) (per: owner)"
            let reason = whose + EvictionOrdering.quotaReason(quota, used: owner.used, maximum: maximum, files: owner.files).dropFirst("quota".count)
            if rule.enforces {
                let paths = evicted.map(path)
                for (m, p) in zip(evicted, paths) {
                    let l = Int(m >> 32), i = Int(m & 0xFFFF_FFFF)
                    c.actions.append(Action(kind: .delete, path: p, rule: rule.name, reason: reason, bytes: ledgers[l].records[i].allocated,
                                            identity: ledgers[l].identity(i), type: .regular))
                }
                c.gone.addDeletes(paths)
            } else {
                let summary = reason.prefix { $0 != ";" }
                c.report(rule.index, scope, "\(summary); would evict \(evicted.count) files (\(ByteSize.human(owner.used - remaining))) of uid \(uid)")
            }
            if owner.used > maximum {
                QuotaKind.reportUnmet(rule, quota, used: owner.used, remaining: remaining, target: target, protected: protected,
                                      neverEvicted: "uid \(uid)'s files with several hard links", &c)
            }
        }
    }
}
