// expire: entries (or, with `unit: directory`, whole child folders) older than `after` are deleted, the `keep`
// newest per directory spared. Scopes and layout directories are structure: never expired.

/// The expire rule kind.
struct ExpireKind: RuleKindBehavior {
    static let keyword = "expire"
    let expire: Expire

    init(_ expire: Expire) { self.expire = expire }

    func explain(_ entry: ExplainedEntry) -> [String] {
        let (label, time) = Ages.timestamp(entry.status, by: expire.by)
        let text = Ages.describe(label, time, limit: expire.after, now: entry.now)
        guard Ages.isOlder(time, than: expire.after, now: entry.now) else { return ["\(text): keep"] }
        return [entry.status.type == .directory
            ? "\(text): expired; deleted once everything in it is deleted\(entry.consequence)"
            : "\(text): delete\(entry.consequence)"]
    }

    func summary(of rule: Rule, scope: String) -> String {
        "Entries under \(scope) expire once their \(expire.by.rawValue) is more than \(expire.after) ago."
    }

    func help(for rule: Rule) -> String {
        "Entries past their age are deleted by `policyctl apply`; delete or move them, or adjust the rule's `after`."
    }

    /// Units with `keep` are ranked against their siblings once the walk has dated them all.
    static func resolve(_ c: inout ResolutionContext) {
        let settled = DirectoryUnits.settle(c.results.flatMap(\.pendingUnits), rules: c.rules) { c.report($0, $1, $2) }
        c.actions += settled
    }
}
