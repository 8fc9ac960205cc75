// After the walk: the decisions that need the whole tree (trash dates from info/, forbidden moves with
// free names, quota eviction) and the precedence that makes the actions consistent. Touches no disk.

struct Resolution {
    let rules: [CompiledRule]
    let now: Int64
    /// Where forbidden entries go (`files/` inside a FreeDesktop trash folder); nil without a trash rule.
    let trashTarget: RelativePath?
    /// Components of `trashTarget` that do not exist yet: created (mkdir) before anything moves there.
    let missingTrashTarget: [RelativePath]
    /// Rules whose scope is on a mount that does not keep atime precisely (for `lru` notes).
    let relaxedAtime: Set<Int>

    struct Outcome {
        var actions: [Action]
        var violations: [Violation]
        var notes: [String]
    }

    func resolve(_ results: [EvaluationResults], preflight: [Action], violations: [Violation]) -> Outcome {
        var notes: [String] = []
        var found = violations
        var actions = preflight
        var trashItems: [TrashItem] = []
        var trashInfos: [TrashInfoFile] = []
        var forbidden: [ForbiddenEntry] = []
        var quotaFiles: [QuotaFile] = []
        var folderNames: [FileName] = []
        for r in results {
            actions += r.actions
            found += r.violations
            trashItems += r.trashItems
            trashInfos += r.trashInfos
            forbidden += r.forbidden
            quotaFiles += r.quotaFiles
            if let names = r.trashFolderNames { folderNames = names }
        }
        func report(_ rule: Int, _ path: RelativePath, _ message: String) {
            found.append(Violation(rule: rules[rule].name, path: path, message: message,
                                   severity: rules[rule].rule.effectiveSeverity))
        }

        // Trash retention: date every item, delete the ones kept longer than `retain`.
        let infos = Dictionary(trashInfos.map { (InfoKey(rule: $0.rule, name: $0.itemName), $0) }, uniquingKeysWith: { a, _ in a })
        for item in trashItems.sorted(by: { $0.path < $1.path }) {
            let rule = rules[item.rule]
            guard case .trash(let retention) = rule.rule.kind else { continue }
            var info: TrashInfoFile? = nil
            var trashedAt = item.trashedAt
            var undated = item.undated
            if rule.trashLayout == .freedesktop {
                info = infos[InfoKey(rule: item.rule, name: item.name)]
                if let info {
                    trashedAt = info.deletionDate
                    if trashedAt == nil { undated = "info/\(item.name.escaped).trashinfo has no readable DeletionDate" }
                } else {
                    undated = "there is no info/\(item.name.escaped).trashinfo"
                }
            }
            guard let trashedAt else {
                report(item.rule, item.path, "cannot tell when it was trashed: \(undated ?? "no date"); kept")
                continue
            }
            guard Ages.isOlder(trashedAt, than: retention.retain, now: now) else { continue }
            let reason = Ages.describe("trashed (\(item.dateSource))", trashedAt, limit: retention.retain, now: now)
            if rule.enforces {
                actions.append(Action(kind: .delete, path: item.path, rule: rule.name, reason: reason, bytes: item.bytes,
                                      identity: item.identity, type: item.type, entries: item.entries))
                if let info {
                    actions.append(Action(kind: .delete, path: info.path, rule: rule.name,
                                          reason: "the .trashinfo of a deleted item", bytes: info.bytes,
                                          identity: info.identity, type: .regular))
                }
            } else {
                report(item.rule, item.path, "\(reason): would be deleted")
            }
        }

        var gone = Removals(ruleOrder: Dictionary(rules.map { ($0.name, $0.index) }, uniquingKeysWith: { a, _ in a }))
        actions = gone.settleDeletes(actions)

        // Forbidden entries: moved into the trash folder under a free name, or reported.
        var taken = Set(folderNames.map(\.bytes))
        var madeTrashFolder = false
        for entry in forbidden.sorted(by: { ($0.path, $0.rule) < ($1.path, $1.rule) }) {
            let rule = rules[entry.rule]
            if gone.isRemoved(entry.path) { continue }
            if let folder = rules.first(where: { if case .trash = $0.rule.kind { true } else { false } })?.rule.path,
               entry.path.hasPrefix(folder) {
                continue  // already in the trash
            }
            let what = "forbidden (matches '\(entry.glob)')"
            guard rule.enforces else {
                report(entry.rule, entry.path, what)
                continue
            }
            guard let trashTarget else {
                report(entry.rule, entry.path, "\(what); the policy has no trash folder to move it to")
                continue
            }
            if !madeTrashFolder {
                madeTrashFolder = true
                for path in missingTrashTarget {
                    actions.append(Action(kind: .mkdir, path: path, rule: rule.name, reason: "trash folder for forbidden entries"))
                }
            }
            let name = NameRules.freeName(entry.name.bytes) { taken.contains($0) }
            taken.insert(name)
            let move = Action(kind: .trash(to: trashTarget.appending(FileName(unchecked: name))), path: entry.path,
                              rule: rule.name, reason: what, identity: entry.identity, type: entry.type)
            actions.append(move)
            gone.recordMove(move)
        }

        // Quotas, in policy order, over what is left once the deletions and moves above are done.
        let filesByRule = Dictionary(grouping: quotaFiles, by: \.rule)
        for rule in rules {
            guard case .quota(let quota) = rule.rule.kind else { continue }
            let files = (filesByRule[rule.index] ?? []).filter { !gone.isRemoved($0.path) }
            var seenInodes = Set<UInt64>()
            var used: Int64 = 0
            for f in files where f.linkCount <= 1 || seenInodes.insert(f.identity.inode).inserted {
                used += f.allocated
            }
            let maximum = quota.max.bytes
            let target = quota.target.bytes(of: quota.max)
            guard used > maximum else { continue }
            if quota.evict == .lru && relaxedAtime.contains(rule.index) {
                notes.append("quota rule '\(rule.name)' evicts by access time, but \(rule.rule.path.isEmpty ? "the root" : rule.rule.path.escaped) is on a relatime/noatime mount: access times are approximate")
            }
            let order = files.filter { $0.linkCount <= 1 }.sorted { ($0.time, $0.path) < ($1.time, $1.path) }
            var remaining = used
            var evicted: [QuotaFile] = []
            for f in order where remaining > target {
                evicted.append(f)
                remaining -= f.allocated
            }
            let summary = "\(ByteSize.human(used)) used > \(ByteSize.human(maximum)) max"
            let clock = quota.evict == .lru ? "atime" : "mtime"
            if rule.enforces {
                for f in evicted {
                    let action = Action(kind: .delete, path: f.path, rule: rule.name,
                                        reason: "quota: \(summary), \(quota.evict == .lru ? "least recently used" : "oldest") first (\(clock) \(Ages.human(nanoseconds: max(0, now - f.time))) ago)",
                                        bytes: f.allocated, identity: f.identity, type: .regular)
                    actions.append(action)
                    gone.recordDelete(action)
                }
            } else {
                report(rule.index, rule.rule.path, "\(summary); would evict \(evicted.count) files (\(ByteSize.human(used - remaining))) to reach \(ByteSize.human(target))")
            }
            if remaining > target {
                notes.append("quota rule '\(rule.name)': only \(ByteSize.human(used - remaining)) can be evicted; \(ByteSize.human(remaining)) stays above the target of \(ByteSize.human(target)) (files with several hard links are never evicted)")
            }
        }

        return Outcome(actions: gone.applyPrecedence(actions), violations: found, notes: notes)
    }

    private struct InfoKey: Hashable {
        var rule: Int
        var name: FileName
    }
}

/// The deletions and moves settled so far, and the precedence they impose on everything else:
/// a deleted entry gets no other action, nothing inside a deleted or moved directory gets one, and
/// of two actions of one kind on one path the earlier rule's wins.
struct Removals {
    let ruleOrder: [String: Int]
    private(set) var deleted: Set<ArraySlice<UInt8>> = []
    private(set) var deletedDirectories: Set<ArraySlice<UInt8>> = []
    private(set) var moved: Set<ArraySlice<UInt8>> = []

    init(ruleOrder: [String: Int]) { self.ruleOrder = ruleOrder }

    private func rank(_ a: Action) -> Int { ruleOrder[a.rule] ?? -1 }

    /// Keeps one delete per path (the earliest rule's) and drops deletes inside deleted directories.
    mutating func settleDeletes(_ actions: [Action]) -> [Action] {
        var best: [RelativePath: Action] = [:]
        var others: [Action] = []
        for a in actions {
            guard a.isDelete else { others.append(a); continue }
            if let current = best[a.path], rank(current) <= rank(a) { continue }
            best[a.path] = a
        }
        for a in best.values where a.type == .directory { deletedDirectories.insert(a.path.bytes[...]) }
        var kept: [Action] = []
        for a in best.values where !isInsideDeletedDirectory(a.path) {
            kept.append(a)
            deleted.insert(a.path.bytes[...])
        }
        return kept + others
    }

    mutating func recordDelete(_ a: Action) {
        deleted.insert(a.path.bytes[...])
        if a.type == .directory { deletedDirectories.insert(a.path.bytes[...]) }
    }

    mutating func recordMove(_ a: Action) { moved.insert(a.path.bytes[...]) }

    /// True when the entry is deleted or moved, or lies inside a directory that is.
    func isRemoved(_ path: RelativePath) -> Bool {
        let bytes = path.bytes
        if deleted.contains(bytes[...]) || moved.contains(bytes[...]) { return true }
        return hasAncestor(bytes) { deletedDirectories.contains($0) || moved.contains($0) }
    }

    private func isInsideDeletedDirectory(_ path: RelativePath) -> Bool {
        hasAncestor(path.bytes) { deletedDirectories.contains($0) }
    }

    private func hasAncestor(_ bytes: [UInt8], _ test: (ArraySlice<UInt8>) -> Bool) -> Bool {
        var i = bytes.startIndex
        while i < bytes.endIndex {
            if bytes[i] == 0x2F && test(bytes[..<i]) { return true }
            i += 1
        }
        return false
    }

    /// The final list: deletes as settled; other actions dropped when their target is removed, and
    /// deduplicated (one rename per path, one mkdir per path, one setxattr per path and attribute).
    func applyPrecedence(_ actions: [Action]) -> [Action] {
        var out: [Action] = []
        var seen = Set<String>()
        let ordered = actions.enumerated().sorted { (rank($0.element), $0.offset) < (rank($1.element), $1.offset) }.map(\.element)
        for a in ordered {
            switch a.kind {
            case .delete:
                if isInsideDeletedDirectory(a.path) || hasAncestor(a.path.bytes, { moved.contains($0) }) { continue }
                if !seen.insert("delete\u{0}" + a.path.base64).inserted { continue }
            case .trash:
                if deleted.contains(a.path.bytes[...]) || isInsideDeletedDirectory(a.path)
                    || hasAncestor(a.path.bytes, { moved.contains($0) }) { continue }
                if !seen.insert("trash\u{0}" + a.path.base64).inserted { continue }
            case .rename:
                if isRemoved(a.path) { continue }
                if !seen.insert("rename\u{0}" + a.path.base64).inserted { continue }
            case .setxattr(let name, _):
                if isRemoved(a.path) { continue }
                if !seen.insert("setxattr\u{0}\(name)\u{0}" + a.path.base64).inserted { continue }
            case .writeTag:
                if isRemoved(a.path) { continue }
                if !seen.insert("write-tag\u{0}" + a.path.base64).inserted { continue }
            case .mkdir:
                if !seen.insert("mkdir\u{0}" + a.path.base64).inserted { continue }
            }
            out.append(a)
        }
        return out
    }
}
