// `explain` for the language 1.1 retention keys: why an entry a rule would otherwise take was kept (expire keep,
// quota minAge and keep) and how unit: directory judges it. Words only; the plan decides.

@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyModel

package enum RetentionExplanation {
    /// Extra lines for `rule`'s verdict on `path`; `deleted` is whether the plan deletes the path by this rule.
    package static func why(_ rule: Rule, path: RelativePath, status: FileStatus?, now: Int64, deleted: Bool) -> [String] {
        guard let status, let relative = path.relative(to: rule.path), !relative.isEmpty else { return [] }
        switch rule.kind {
        case .expire(let expire):
            if expire.unit == .directory {
                if relative.components.count == 1 && status.type == .directory {
                    let keep = expire.keep > 0 ? ", or it is " + DirectoryUnits.keptReason(keep: expire.keep) : ""
                    return ["unit: directory: this folder is one unit, dated by the newest timestamp (\(expire.by.rawValue)) inside it and deleted whole" + (deleted ? "" : "; kept: something inside is newer than \(expire.after), or cannot be dated\(keep)")]
                }
                if relative.components.count > 1 {
                    return ["unit: directory: judged only as part of the unit '\(relative.components[0].escaped)', never on its own"]
                }
                return []
            }
            let (_, time) = expire.timestamp(of: status)
            if expire.keep > 0, Ages.isOlder(time, than: expire.after, now: now), !deleted {
                return ["kept: " + KeptEntries.reason(keep: expire.keep)]
            }
        case .quota(let quota):
            var lines: [String] = []
            let what = quota.unit == .directory ? "units" : "files"
            if quota.unit == .directory && relative.components.count > 1 {
                return ["unit: directory: evicted only as part of the unit '\(relative.components[0].escaped)', never on its own"]
            }
            if quota.unit == .directory && status.type == .directory {
                lines.append("unit: directory: this folder is one unit, dated by the newest \(quota.timestamp.rawValue) inside it and evicted whole")
            }
            let time = quota.evict == .lru ? status.accessTimeNs : status.modificationTimeNs
            if let minAge = quota.minAge, Ages.age(of: time, now: now) < minAge.nanoseconds {
                lines.append("never evicted: younger than minAge \(minAge)")
            }
            if quota.keep > 0 && !deleted {
                lines.append("keep: \(quota.keep): the \(quota.keep) newest \(what) of the scope are never evicted")
            }
            return lines
        default:
            break
        }
        return []
    }
}
