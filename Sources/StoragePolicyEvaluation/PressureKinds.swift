// Pressure through expire and trash rules (quota's is in PressureEviction.swift). An expire rule gives up the
// files it keeps for now (younger than `after`), oldest first by its own timestamp: the walk recorded them in
// the quota ledger (ExpireJudge, only for a pressure-named rule); `keep` spared its newest per folder before
// they were recorded, and `minAge` (a floor only pressure reads) protects the youngest. A trash rule gives up
// the items retention and maxSize keep, in its own order (`first:`, then `order`, trashed longest ago first
// by default), each with its .trashinfo, never one trashed less than `minAge` ago; undatable items stay.

@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyModel
@_spi(Layers) import StoragePolicyPlan

extension PressureEviction {
    /// One expire rule's kept files, oldest first, until `need` bytes: what it took, and how many minAge protects.
    static func evict(_ rule: CompiledRule, _ expire: Expire, ledgers: [QuotaLedger], need: Int64, reason: String,
                      _ c: inout ResolutionContext) -> (taken: (bytes: Int64, files: Int), protected: Int) {
        var candidates = ledgerCandidates(rule, ledgers: ledgers, &c)
        let before = candidates.count
        if let minAge = expire.minAge {
            while let last = candidates.last, Ages.age(of: last.time, now: c.now) < minAge.nanoseconds { candidates.removeLast() }
        }
        let order = "oldest (\(expire.byText)) first, before its expire age \(expire.after)"
        return (take(candidates, need: need, rule, ledgers: ledgers, reason: "\(reason); \(order)", &c), before - candidates.count)
    }

    /// One trash rule's kept items, in its order, until `need` bytes: what it took, and how many minAge protects.
    static func evict(_ rule: CompiledRule, _ retention: TrashRetention, need: Int64, reason: String,
                      _ c: inout ResolutionContext) -> (taken: (bytes: Int64, files: Int), protected: Int) {
        var candidates = c.trashPressure[rule.index] ?? []
        c.trashPressure[rule.index] = nil
        let check = c.gone.hasRemovals(under: rule.rule.path)
        if check { candidates.removeAll { c.gone.isRemoved($0.item.path) } }
        let before = candidates.count
        if let minAge = retention.minAge {
            candidates.removeAll { Ages.age(of: $0.trashedAt, now: c.now) < minAge.nanoseconds }
        }
        let choice = retention.eviction
        let order = choice.order == nil && choice.first.isEmpty
            ? "trashed longest ago first" : choice.describe(choice.order ?? .oldest, oldest: "trashed longest ago")
        var bytes: Int64 = 0
        var files: [RelativePath] = [], folders: [RelativePath] = []
        var actions: [Action] = []
        var items = 0
        for candidate in candidates where bytes < need {
            let item = candidate.item
            bytes += item.bytes
            let why = "\(reason); \(order) (" + Ages.describe("trashed (\(candidate.source))", candidate.trashedAt,
                                                                limit: retention.retain, now: c.now) + ")"
            guard rule.enforces else {
                c.report(rule.index, item.path, "\(why): would be evicted")
                continue
            }
            items += 1
            if item.type == .directory { folders.append(item.path) } else { files.append(item.path) }
            actions.append(Action(kind: .delete, path: item.path, rule: rule.name, reason: why, bytes: item.bytes,
                                  identity: item.identity, type: item.type, entries: item.entries))
            if let info = candidate.info {
                files.append(info.path)
                actions.append(Action(kind: .delete, path: info.path, rule: rule.name, reason: "the .trashinfo of a deleted item",
                                      bytes: info.bytes, identity: info.identity, type: .regular))
            }
        }
        guard rule.enforces else { return ((0, 0), before - candidates.count) }
        // Folders first: what is already planned inside an evicted item goes with it.
        c.gone.addDirectoryDeletes(folders, &c.actions)
        c.gone.addDeletes(files)
        c.actions += actions
        return ((bytes, items), before - candidates.count)
    }
}
