// expire: entries (or, with `unit: directory`, whole child folders) older than `after` are deleted, the `keep`
// newest per directory spared. Scopes and layout directories are structure: never expired.

/// The expire rule kind.
struct ExpireKind: RuleKindBehavior {
    static let keyword = "expire"
    let expire: Expire

    init(_ expire: Expire) { self.expire = expire }

    /// Units with `keep` are ranked against their siblings once the walk has dated them all.
    static func resolve(_ c: inout ResolutionContext) {
        let settled = DirectoryUnits.settle(c.results.flatMap(\.pendingUnits), rules: c.rules) { c.report($0, $1, $2) }
        c.actions += settled
    }
}
