// `unit: directory` (expire and quota): each direct child folder of a rule's scope is one unit, dated by the
// newest timestamp (per `by`, or the quota's `evict` timestamp) of anything inside it, itself included, and
// deleted whole; files directly in the scope are units of their own (judged as entries). A unit with anything
// that cannot be dated (an entry that cannot be stat'ed, a time out of range, a folder that cannot be entered)
// is kept: its age is unknown. Unit rules that share a folder date it by one timestamp (validation sees to it).

@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyModel
@_spi(Layers) import StoragePolicyPlan

/// The unit rules a directory is a unit of: at most one expire rule, and any number of quota rules.
package struct DirectoryUnit: Sendable {
    /// The expire rule with `unit: directory` (deletes the unit whole once it is expired); nil: quota units only.
    var expiring: Expiring?
    /// Quota rules with `unit: directory` that may evict this folder whole (decided after the walk).
    var quotas: [Int]
    /// The timestamp the unit is dated by.
    package var by: Expire.Timestamp

    package struct Expiring: Sendable {
        package var rule: Int
        var expire: Expire
        var enforces: Bool
    }
}

/// A folder that quota rules with `unit: directory` may evict whole: recorded when its subtree is finished.
package struct QuotaUnitRecord: Sendable {
    package var rules: [Int]
    package var path: RelativePath
    package var identity: EntryIdentity
    /// Entries removed with it, itself included.
    package var entries: Int
    /// The newest timestamp inside (ns); nil when something inside could not be dated (never evicted).
    var newest: Int64?
}

extension Expire {
    /// True for `unit: directory`: the rule judges whole child folders of its scope, never what is inside them.
    var judgesUnits: Bool { unit == .directory }
}

package enum DirectoryUnits {
    /// The unit rules `listing` (a directory) is a unit of: the first expire rule with `unit: directory` whose
    /// scope is its parent and which selects it, and every such quota rule. Structure (scopes, layout) is never a unit.
    package static func unit(of listing: DirectoryListing, parentActive: [Int], rules: [CompiledRule], structural: Bool) -> DirectoryUnit? {
        guard !structural else { return nil }
        let components = listing.components
        let name = components[components.count - 1]
        var expiring: DirectoryUnit.Expiring? = nil
        var quotas: [Int] = []
        var by: Expire.Timestamp? = nil
        for index in parentActive {
            let rule = rules[index]
            guard rule.scopeDepth == components.count - 1,
                  rule.selects(components[rule.scopeDepth..<(components.count - 1)], name),
                  rule.filterRejection(listing.directoryStatus) == nil else { continue }
            switch rule.rule.kind {
            case .expire(let expire) where expire.judgesUnits && expiring == nil && rule.admits(.directory):
                expiring = DirectoryUnit.Expiring(rule: index, expire: expire, enforces: rule.enforces)
                by = by ?? expire.by
            case .quota(let quota) where quota.unit == .directory:
                quotas.append(index)
                by = by ?? quota.timestamp
            default:
                continue
            }
        }
        guard let by else { return nil }
        return DirectoryUnit(expiring: expiring, quotas: quotas, by: by)
    }

    /// Folds the timestamps of every entry of a listing inside a unit into `aggregate`.
    package static func date(_ listing: DirectoryListing, by: Expire.Timestamp, into aggregate: inout EvaluatedDirectory.Aggregate) {
        for i in 0..<listing.count {
            guard let status = try? listing.status(i), !status.hasTimeOutOfRange else {
                aggregate.undatable = true
                continue
            }
            aggregate.newest = max(aggregate.newest, Ages.timestamp(status, by: by).ns)
        }
    }

    /// The newest time of a finished directory's subtree, its own timestamps included; nil when undatable.
    static func newest(_ directory: EvaluatedDirectory, _ aggregate: EvaluatedDirectory.Aggregate) -> Int64? {
        guard let by = directory.unitBy, !aggregate.undatable, !directory.status.hasTimeOutOfRange else { return nil }
        return max(aggregate.newest, Ages.timestamp(directory.status, by: by).ns)
    }

    /// Why a unit goes: `newest inside: mtime 3d ago > 1d`.
    package static func reason(_ unit: DirectoryUnit.Expiring, newest: Int64, now: Int64) -> String {
        "unit: directory, newest inside " + Ages.describe(unit.expire.by.label, newest, limit: unit.expire.after, now: now)
    }
}

extension Expire.Timestamp {
    /// The word plans use for this timestamp (`newest` folds several, so it says so).
    package var label: String { self == .newest ? "timestamp (newest of atime, mtime, ctime, btime)" : rawValue }
}

/// A unit of an expire rule with `unit: directory` and `keep: N`: whether it goes depends on its siblings' dates,
/// so it is decided after the walk, once every unit of the scope is dated.
package struct PendingUnit: Sendable {
    package var rule: Int
    /// The rule's scope (the unit's parent).
    package var scope: RelativePath
    package var name: [UInt8]
    /// The unit's date; nil when it cannot be dated (kept, and not counted among the N).
    var newest: Int64?
    /// The delete, when the unit is expired and the rule enforces.
    package var action: Action?
    /// The finding, when the unit is expired and the rule audits.
    package var finding: String?
    /// Other rules' deletions inside it: covered when it goes, planned when it stays.
    package var held: [Action]
}

extension DirectoryUnits {
    /// Why a unit among the N newest is kept, for plans and `explain`.
    static func keptReason(keep: Int) -> String { "one of the \(keep) newest units in its scope (keep: \(keep))" }

    /// Decides the pending units: in each scope, the `keep` newest (ties by name) stay whatever their age;
    /// the expired rest go (or are reported). Returns the actions to add.
    package static func settle(_ pending: [PendingUnit], rules: [CompiledRule], report: (Int, RelativePath, String) -> Void) -> [Action] {
        struct Key: Hashable { var rule: Int; var scope: RelativePath }
        var out: [Action] = []
        let groups = Dictionary(grouping: pending, by: { Key(rule: $0.rule, scope: $0.scope) })
        for (key, units) in groups.sorted(by: { ($0.key.rule, $0.key.scope) < ($1.key.rule, $1.key.scope) }) {
            guard case .expire(let expire) = rules[key.rule].rule.kind else { continue }
            let dated = units.filter { $0.newest != nil }.sorted {
                $0.newest! != $1.newest! ? $0.newest! > $1.newest! : $0.name.lexicographicallyPrecedes($1.name)
            }
            let kept = Set(dated.prefix(expire.keep).map(\.name))
            for unit in units {
                if !kept.contains(unit.name), let action = unit.action {
                    out.append(action)
                    continue
                }
                if !kept.contains(unit.name), let finding = unit.finding {
                    report(key.rule, key.scope.appending(FileName(unchecked: unit.name)), finding)
                }
                out += unit.held
            }
        }
        return out
    }
}
