// quota `unit: directory`: each direct child folder of the scope is one unit, dated by the newest timestamp
// (the `evict` one) of anything inside it, sized by the allocated bytes of the regular files it holds (what the
// quota counts), and evicted whole; files directly in the scope are units of their own. minAge and keep apply
// to units. A unit that could not be dated, or that is structure (a scope, a layout directory), still counts
// toward the total but is never evicted. Touches no disk: the walk recorded everything.

@_spi(Layers) import StoragePolicyFileSystem

package enum QuotaUnits {
    package struct Candidate {
        package var time: Int64
        package var path: RelativePath
        package var bytes: Int64
        package var identity: EntryIdentity
        package var type: FileType
        package var entries: Int
    }

    /// What a unit quota counts: the total (as for files), and the units that may be evicted.
    package struct Count {
        var used: Int64 = 0
        package var candidates: [Candidate] = []
    }

    /// The direct child of `scope` that `path` lies inside; nil for an entry directly in the scope.
    static func unitPath(of path: RelativePath, scope: RelativePath) -> RelativePath? {
        let bytes = path.bytes
        let start = scope.isEmpty ? 0 : scope.bytes.count + 1
        guard start < bytes.count, let slash = bytes[start...].firstIndex(of: 0x2F) else { return nil }
        return RelativePath(unchecked: Array(bytes[..<slash]))
    }

    /// Counts a unit quota's files, grouping those inside child folders into the folders' units.
    package static func count(rule: CompiledRule, ledgers: [QuotaLedger], units: [QuotaUnitRecord], gone: inout Removals) -> Count {
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
