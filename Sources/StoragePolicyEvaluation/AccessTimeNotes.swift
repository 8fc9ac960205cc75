// Expire rules that judge by access time (`by: atime`, or `newest`, which includes it) on a mount that does not
// keep access times current: plan and audit say so once per rule, so an age that looks wrong is explained.

@_spi(Layers) import StoragePolicyFileSystem

package enum AccessTimeNotes {
    /// Expire rules by birth time on a file system that records none: said once per rule; entries are kept.
    static func birthNotes(_ rules: [CompiledRule], scopeStatus: (RelativePath) -> FileStatus?) -> [String] {
        var notes: [String] = []
        for rule in rules {
            guard case .expire(let expire) = rule.rule.kind, expire.by == .birth,
                  let status = scopeStatus(rule.rule.path), status.birthTimeNs == nil else { continue }
            let scope = rule.rule.path.isEmpty ? "the root" : rule.rule.path.escaped
            notes.append("warning: rule '\(rule.name)' judges by birth time, but the file system of \(scope) records none: its entries are skipped (kept)")
        }
        return notes
    }

    package static func notes(_ rules: [CompiledRule], mode: (RelativePath) -> Int) -> [String] {
        var notes: [String] = []
        for rule in rules {
            guard case .expire(let expire) = rule.rule.kind, expire.includesAccessTime else { continue }
            let judged = expire.by == .atime ? "atime" : expire.newestOf == nil ? "newest (which includes atime)" : "\(expire.byText) (which includes atime)"
            let scope = rule.rule.path.isEmpty ? "the root" : rule.rule.path.escaped
            switch mode(rule.rule.path) {
            case 2:
                notes.append("warning: rule '\(rule.name)' judges by \(judged), but \(scope) is on a noatime mount: access times are never updated, so reading a file does not keep it")
            case 1:
                notes.append("rule '\(rule.name)' judges by \(judged); \(scope) is on a relatime mount: atime is updated at most once a day")
            case 3:
                // Darwin without MNT_STRICTATIME (AccessTimeTrust): APFS's default.
                notes.append("rule '\(rule.name)' judges by \(judged); \(scope) is on a mount without strictatime: atime is updated lazily, so a read may not keep a file")
            default:
                break
            }
        }
        return notes
    }
}
