// backup: the scope (or, with match, the selected entries) carries the backup-exclusion marker, and a
// CACHEDIR.TAG with `cacheTag`. Decided during the walk; a marker is set, never a file replaced.

@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyModel
@_spi(Layers) import StoragePolicyPlan

/// The backup rule kind.
package struct BackupKind: RuleKindBehavior {
    package static let keyword = BackupSyntax.keyword
    package let backup: BackupExclusion

    package init(_ backup: BackupExclusion) { self.backup = backup }

    package func makeJudge() -> any EntryJudge { BackupJudge(backup) }

    /// Backup markers go on regular files and directories.
    package static func admits(_ type: FileType, filter: EntryTypeFilter?) -> Bool {
        guard type == .regular || type == .directory else { return false }
        return filter?.admits(type) ?? true
    }

    /// A backup rule sets its marker (and writes CACHEDIR.TAG) on its scope, or on what its globs select.
    package func planProblem(_ action: Action, _ rule: CompiledRule, _ plan: PlanValidation, now: Int64) -> String? {
        switch action.kind {
        case .setxattr, .writeTag:
            // Markers may go on structure (the scope itself for a rule without globs).
            if case .setxattr(let name, let value) = action.kind, name != plan.marker.name || value != plan.marker.value {
                return "the only attribute a backup rule sets is \(plan.marker.name) with its marker value"
            }
            if case .writeTag = action.kind, !backup.cacheDirectoryTag { return "rule '\(rule.name)' does not write CACHEDIR.TAG" }
            if rule.match.isEmpty {
                return action.path == rule.rule.path ? nil : "rule '\(rule.name)' marks only its scope \(plan.scopeText(rule))"
            }
            if case .writeTag = action.kind, let type = action.type, type != .directory { return "CACHEDIR.TAG goes only into directories" }
            return plan.selection(action, rule, allowStructure: true)
        default:
            return plan.refusal(action, rule)
        }
    }

    package func explainScope(_ rule: CompiledRule) -> String? {
        rule.match.isEmpty ? "this is the rule's scope: it must carry the backup-exclusion marker \(Markers.backupAttribute.name)" : nil
    }

    package func explain(_ entry: ExplainedEntry) -> [String] {
        [entry.rule.match.isEmpty ? "only the scope itself carries the marker (it covers everything in it)" : "must carry the backup-exclusion marker \(Markers.backupAttribute.name)\(entry.consequence)"]
    }

    package func summary(of rule: Rule, scope: String) -> String {
        "\(scope.prefix(1).uppercased() + scope.dropFirst()) is excluded from backup."
    }

    package func help(for rule: Rule) -> String {
        "Set the exclusion marker (`policyctl apply` does; on macOS `tmutil addexclusion`), so re-downloadable data stays out of backups."
    }
}

/// The walk's side of backup rules: markers on selected directories and files, and the CACHEDIR.TAG.
package final class BackupJudge: EntryJudge {
    /// Selected directories check their own marker when visited; without globs only the scope is marked.
    package func needsBelow(_ rule: CompiledRule, _ directory: ArraySlice<ArraySlice<UInt8>>, _ name: ArraySlice<UInt8>) -> Bool {
        if !rule.match.isEmpty && rule.selects(directory, name) { return true }
        return !rule.match.isEmpty && rule.matchCouldMatchBelow(directory, name)
    }

    package let backup: BackupExclusion

    package init(_ backup: BackupExclusion) { self.backup = backup }

    package func judgeDirectory(_ e: Evaluator, _ rule: CompiledRule, directory: ArraySlice<ArraySlice<UInt8>>,
                                 _ d: inout DirectoryJudgement, worker: EvaluationResults) {
        // Structure is protected from deletes, renames and moves; a marker on it is fine.
        guard !rule.match.isEmpty, rule.admits(.directory), rule.selects(directory, d.name) else { return }
        let listing = d.listing
        e.checkMarker(rule, path: listing.path, identity: listing.directoryStatus.identity, type: .directory, worker: worker) { () throws(FileSystemError) -> [UInt8]? in
            try listing.extendedAttribute(e.backupMarker.name, of: nil)
        }
        if backup.cacheDirectoryTag { e.checkCacheTag(rule, listing: listing, worker: worker) }
    }

    package func judgeEntry(_ e: Evaluator, _ view: Evaluator.RuleView, _ listing: DirectoryListing, _ i: Int,
                             name: ArraySlice<UInt8>, type: FileType, status: inout EntryStatus, scratch: inout EntryScratch,
                             worker: EvaluationResults) {
        let rule = view.rule
        guard type == .regular, !rule.match.isEmpty, rule.admits(type), rule.selects(view.directory, name),
              let s = status.read(e, worker: worker) else { return }
        e.checkMarker(rule, path: listing.path(of: i), identity: s.identity, type: type, worker: worker) { () throws(FileSystemError) -> [UInt8]? in
            try listing.extendedAttribute(e.backupMarker.name, of: i)
        }
    }
}

extension Evaluator {
    func checkMarker(_ rule: CompiledRule, path: RelativePath, identity: EntryIdentity?, type: FileType,
                             worker: EvaluationResults, read: () throws(FileSystemError) -> [UInt8]?) {
        let current: [UInt8]?
        do { current = try read() } catch {
            if error.errno == .notSupported {
                report(rule.index, path, "the file system does not support extended attributes: cannot mark it excluded from backup", worker)
            } else {
                worker.skipped.append(SkippedEntry(path: path, reason: "cannot read extended attributes: \(error.errno)"))
            }
            return
        }
        // An Apple marker is any value holding com.apple.backupd (what other readers accept): ExclusionMarker.
        guard !ExclusionMarker.satisfies(backupMarker, current: current) else { return }
        let what = current == nil ? "missing" : "has the wrong value"
        if rule.enforces {
            worker.actions.append(Action(kind: .setxattr(name: backupMarker.name, value: backupMarker.value), path: path,
                                         rule: rule.name, reason: "backup-exclusion marker \(what)",
                                         identity: identity, type: type))
        } else {
            report(rule.index, path, "backup-exclusion marker \(backupMarker.name) \(what)", worker)
        }
    }

    func checkCacheTag(_ rule: CompiledRule, listing: DirectoryListing, worker: EvaluationResults) {
        let signature = Array(Markers.cacheTagSignature.utf8)
        var present = false
        for i in 0..<listing.count where listing.nameBytes(i).elementsEqual(Markers.cacheTagName.bytes) {
            if listing.type(i) == .regular, let prefix = try? listing.readPrefix(of: i, limit: signature.count) {
                present = prefix == signature
            }
        }
        guard !present else { return }
        if rule.enforces {
            worker.actions.append(Action(kind: .writeTag, path: listing.path, rule: rule.name,
                                         reason: "CACHEDIR.TAG missing or without the signature",
                                         identity: listing.directoryStatus.identity, type: .directory))
        } else {
            report(rule.index, listing.path, "CACHEDIR.TAG missing or without the signature", worker)
        }
    }

}
