// expire `unit: directory`: each direct child folder of a rule's scope is one unit, dated by the newest
// timestamp (per `by`) of anything inside it, itself included, and deleted whole; files directly in the
// scope are units of their own (judged as entries). A unit with anything that cannot be dated (an entry that
// cannot be stat'ed, a time out of range, a folder that cannot be entered) is kept: its age is unknown.

/// The expire rule a directory is a unit of.
struct DirectoryUnit: Sendable {
    var rule: Int
    var expire: Expire
    var enforces: Bool
}

extension Expire {
    /// True for `unit: directory`: the rule judges whole child folders of its scope, never what is inside them.
    var judgesUnits: Bool { unit == .directory }
}

enum DirectoryUnits {
    /// The unit rule `listing` (a directory) is a unit of: the first expire rule with `unit: directory` whose
    /// scope is its parent and which selects it. Structure (scopes, layout) is never a unit.
    static func unit(of listing: DirectoryListing, parentActive: [Int], rules: [CompiledRule], structural: Bool) -> DirectoryUnit? {
        guard !structural else { return nil }
        let components = listing.components
        let name = components[components.count - 1]
        for index in parentActive {
            let rule = rules[index]
            guard case .expire(let expire) = rule.rule.kind, expire.judgesUnits,
                  rule.scopeDepth == components.count - 1, rule.admits(.directory),
                  rule.selects(components[rule.scopeDepth..<(components.count - 1)], name) else { continue }
            return DirectoryUnit(rule: index, expire: expire, enforces: rule.enforces)
        }
        return nil
    }

    /// Folds the timestamps of every entry of a listing inside a unit into `aggregate`.
    static func date(_ listing: DirectoryListing, by: Expire.Timestamp, into aggregate: inout EvaluatedDirectory.Aggregate) {
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
    static func reason(_ unit: DirectoryUnit, newest: Int64, now: Int64) -> String {
        "unit: directory, newest inside " + Ages.describe(unit.expire.by.label, newest, limit: unit.expire.after, now: now)
    }
}

extension Expire.Timestamp {
    /// The word plans use for this timestamp (`newest` folds several, so it says so).
    var label: String { self == .newest ? "timestamp (newest of atime, mtime, ctime)" : rawValue }
}
