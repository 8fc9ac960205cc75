// Checks on the policy language 1.1 retention keys that need more than one rule: combinations that cannot
// mean what they say are refused rather than silently carried out another way.

package enum RetentionChecks {
    /// Unit rules (`unit: directory`) whose scopes are the same or nested date one folder tree: they must date
    /// it by the same timestamp (a quota's `evict: oldest` is mtime, `lru` atime), or a unit's age would depend
    /// on which rule came first.
    static func checkUnits(_ policy: Policy) -> [Diagnostic] {
        var units: [(rule: Rule, by: Expire.Timestamp, what: String)] = []
        for rule in policy.rules {
            switch rule.kind {
            case .expire(let e) where e.unit == .directory: units.append((rule, e.by, "by: \(e.by.rawValue)"))
            case .quota(let q) where q.unit == .directory: units.append((rule, q.timestamp, "evict: \(q.evict.rawValue), dated by \(q.timestamp.rawValue)"))
            default: continue
            }
        }
        var found: [Diagnostic] = []
        for (i, later) in units.enumerated() {
            for earlier in units[..<i] where earlier.by != later.by
                && (later.rule.path.hasPrefix(earlier.rule.path) || earlier.rule.path.hasPrefix(later.rule.path)) {
                found.append(Diagnostic(severity: .error, location: later.rule.location, message:
                    "rule '\(later.rule.name)': 'unit: directory' (\(later.what)) dates the same folders as rule '\(earlier.rule.name)' (\(earlier.what)); unit rules on the same or nested paths must date units by the same timestamp"))
                break
            }
        }
        return found
    }
}
