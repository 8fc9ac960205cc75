// expire `keep: N`: within each directory of a rule's scope, the N newest entries the rule selects are never
// deleted by that rule, expired or not. Worked out once per directory listing, before any entry is judged,
// from the same timestamp the rule expires by; ties break by name so a plan is deterministic.

@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyModel

/// The entries of one directory that `keep: N` protects, per expire rule (by rule index, then name).
package struct KeptEntries: Sendable {
    private var byRule: [Int: Set<[UInt8]>] = [:]

    package static let none = KeptEntries()

    package var isEmpty: Bool { byRule.isEmpty }

    /// True when `rule` must keep the entry called `name`.
    func protects(_ rule: Int, _ name: some Collection<UInt8>) -> Bool {
        guard let names = byRule[rule] else { return false }
        return names.contains(Array(name))
    }

    /// Why an entry is kept, for plans and `explain`.
    package static func reason(keep: Int) -> String { "one of the \(keep) newest in its directory (keep: \(keep))" }

    /// The kept entries of `listing` for each expire rule with `keep`; `structural(i)` is true for entries that
    /// are scopes, layout directories or the way to them (never judged, so never counted).
    static func newest(_ listing: DirectoryListing, rules: [(index: Int, rule: CompiledRule, directory: ArraySlice<ArraySlice<UInt8>>)],
                       structural: (Int) -> Bool) -> KeptEntries {
        var kept = KeptEntries()
        for (index, rule, directory) in rules {
            guard case .expire(let expire) = rule.rule.kind, expire.keep > 0 else { continue }
            var candidates: [(time: Int64, name: [UInt8])] = []
            for i in 0..<listing.count {
                guard let type = listing.type(i), type == .regular || type == .directory || type == .symlink,
                      !structural(i), rule.admits(type) else { continue }
                let name = listing.nameBytes(i)
                guard rule.selects(directory, name), let status = try? listing.status(i),
                      !status.hasTimeOutOfRange, rule.filterRejection(status) == nil else { continue }
                candidates.append((expire.timestamp(of: status).ns, Array(name)))
            }
            guard !candidates.isEmpty else { continue }
            candidates.sort { $0.time != $1.time ? $0.time > $1.time : $0.name.lexicographicallyPrecedes($1.name) }
            kept.byRule[index] = Set(candidates.prefix(expire.keep).map(\.name))
        }
        return kept
    }
}
