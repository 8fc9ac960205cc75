// The evaluator's hook for custom rules: turns a rule's verdicts on one entry into the plan's actions and
// violations, as built-in kinds do in the same pass. Never acts on disk; audit-mode rules only report.

@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyModel
@_spi(Layers) import StoragePolicyPlan

extension Evaluator {
    /// Asks custom `rule` about entry `i` of `listing` and records what it says.
    func judgeCustom(_ custom: AnyCustomRule, _ rule: CompiledRule, _ listing: DirectoryListing, _ i: Int,
                     type: FileType, worker: EvaluationResults) {
        let entry = CustomRuleEntry(listing: listing, index: i, type: type, scopeDepth: rule.scopeDepth, now: now)
        let verdicts = custom.base.evaluate(entry)
        guard !verdicts.isEmpty else { return }
        let path = entry.path
        for verdict in verdicts {
            let kind: Action.Kind
            let reason: String
            switch verdict {
            case .violation(let message):
                report(rule.index, path, message, worker)
                continue
            case .delete(let why):
                guard type != .directory else {
                    report(rule.index, path, "\(why): custom rules cannot delete directories; not deleted", worker)
                    continue
                }
                kind = .delete
                reason = why
            case .rename(let name, let why):
                if let overlong = NameRules.overlong(name.bytes) {
                    report(rule.index, path, "\(why), but \(overlong); not renamed", worker)
                    continue
                }
                kind = .rename(to: path.parent.appending(name))
                reason = why
            case .setExtendedAttribute(let name, let value, let why):
                kind = .setxattr(name: name, value: value)
                reason = why
            case .excludeFromBackup(let why):
                kind = .setxattr(name: backupMarker.name, value: backupMarker.value)
                reason = why
            }
            guard rule.enforces else {
                report(rule.index, path, "\(reason) (would \(kind.name))", worker)
                continue
            }
            // The identity lets apply refuse a target that changed since the plan; no status, no action.
            guard let status = entry.status else {
                recordStatusFailure(listing, i, worker: worker)
                continue
            }
            worker.actions.append(Action(kind: kind, path: path, rule: rule.name, reason: reason,
                                         bytes: kind == .delete ? status.bytesFreedByRemoval : 0,
                                         identity: status.identity, type: type))
        }
    }
}
