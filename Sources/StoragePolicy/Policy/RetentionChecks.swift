// Checks on the policy language 1.1 retention keys (keep, unit, minAge, maxSize) that need the whole rule:
// settings that do nothing are warned about, and keys this build cannot carry out yet are refused rather
// than silently ignored.

enum RetentionChecks {
    /// Keys parsed but not carried out by this build: refusing them keeps a policy from meaning less than it says.
    static let unsupported: Set<String> = ["quota.unit"]

    static func check(_ rule: Rule) -> [Diagnostic] {
        var found: [Diagnostic] = []
        func refuse(_ key: String) {
            guard unsupported.contains(key) else { return }
            found.append(Diagnostic(severity: .error, location: rule.location,
                                    message: "rule '\(rule.name)': '\(key)' is not supported by this policyctl yet"))
        }
        switch rule.kind {
        case .expire(let e):
            if e.keep > 0 { refuse("expire.keep") }
            if e.unit != .entry && e.keep > 0 {
                found.append(Diagnostic(severity: .error, location: rule.location, message:
                    "rule '\(rule.name)': 'keep' with 'unit: directory' is not supported yet; use one or the other"))
            }
        case .quota(let q):
            if q.unit != .entry { refuse("quota.unit") }
            if q.minAge != nil { refuse("quota.minAge") }
            if q.keep > 0 { refuse("quota.keep") }
        case .trash(let t):
            if t.maxSize != nil { refuse("trash.maxSize") }
        default:
            break
        }
        return found
    }
}
