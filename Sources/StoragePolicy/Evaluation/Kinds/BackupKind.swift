// backup: the scope (or, with match, the selected entries) carries the backup-exclusion marker, and a
// CACHEDIR.TAG with `cacheTag`. Decided during the walk; a marker is set, never a file replaced.

/// The backup rule kind.
struct BackupKind: RuleKindBehavior {
    static let keyword = "backup"
    let backup: BackupExclusion

    init(_ backup: BackupExclusion) { self.backup = backup }
}
