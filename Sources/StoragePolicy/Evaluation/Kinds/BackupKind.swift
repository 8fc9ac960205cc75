// backup: the scope (or, with match, the selected entries) carries the backup-exclusion marker, and a
// CACHEDIR.TAG with `cacheTag`. Decided during the walk; a marker is set, never a file replaced.

/// The backup rule kind.
struct BackupKind: RuleKindBehavior {
    static let keyword = "backup"
    let backup: BackupExclusion

    init(_ backup: BackupExclusion) { self.backup = backup }

    func explainScope(_ rule: CompiledRule) -> String? {
        rule.match.isEmpty ? "this is the rule's scope: it must carry the backup-exclusion marker \(Markers.backupAttribute.name)" : nil
    }

    func explain(_ entry: ExplainedEntry) -> [String] {
        [entry.rule.match.isEmpty ? "only the scope itself carries the marker (it covers everything in it)" : "must carry the backup-exclusion marker \(Markers.backupAttribute.name)\(entry.consequence)"]
    }

    func summary(of rule: Rule, scope: String) -> String {
        "\(scope.prefix(1).uppercased() + scope.dropFirst()) is excluded from backup."
    }

    func help(for rule: Rule) -> String {
        "Set the exclusion marker (`policyctl apply` does; on macOS `tmutil addexclusion`), so re-downloadable data stays out of backups."
    }
}
