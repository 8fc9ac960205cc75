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
        actions.reserveCapacity(preflight.count + results.reduce(0) { $0 + $1.actions.count })
        var trashItems: [TrashItem] = []
        var trashInfos: [TrashInfoFile] = []
        var trashListings: [TrashItemsListing] = []
        var forbidden: [ForbiddenEntry] = []
        var folderNames: [FileName] = []
        // Moved out of each thread's results, so no action or record is held twice.
        for r in results {
            actions.append(contentsOf: r.actions)
            r.actions = []
            found.append(contentsOf: r.violations)
            trashItems.append(contentsOf: r.trashItems)
            trashInfos.append(contentsOf: r.trashInfos)
            trashListings.append(contentsOf: r.trashListings)
            forbidden.append(contentsOf: r.forbidden)
            if let names = r.trashFolderNames { folderNames = names }
        }
        func report(_ rule: Int, _ path: RelativePath, _ message: String) {
            found.append(Violation(rule: rules[rule].name, path: path, message: message,
                                   severity: rules[rule].rule.effectiveSeverity))
        }

        // Trash retention: date every item, delete the ones kept longer than `retain`.
        let infos = Dictionary(trashInfos.map { (InfoKey(rule: $0.rule, name: $0.itemName), $0) }, uniquingKeysWith: { a, _ in a })
        var listed: [Int: Set<FileName>] = [:]
        for l in trashListings { listed[l.rule, default: []].formUnion(l.names) }
        var sizeCap = TrashSizeCap()
        for item in trashItems.sorted(by: { $0.path < $1.path }) {
            let rule = rules[item.rule]
            guard case .trash(let retention) = rule.rule.kind else { continue }
            // The item's .trashinfo (FreeDesktop) or app index entry: deleted with the item.
            let info = infos[InfoKey(rule: item.rule, name: item.name)]
            var trashedAt = item.trashedAt
            var undated = item.undated
            var source = item.dateSource
            if rule.trashLayout == .freedesktop {
                if let info {
                    trashedAt = info.deletionDate
                    if trashedAt == nil { undated = "info/\(item.name.escaped).trashinfo \(info.problem ?? "has no readable DeletionDate")" }
                } else {
                    undated = "there is no info/\(item.name.escaped).trashinfo"
                }
            } else if source == "ctime", let info, info.userID == 0 || info.userID == item.userID {
                // No stamp (a hard-linked file or a symlink): the index entry policyctl trash wrote instead.
                // Only root's or the item's owner's counts: anyone else could date someone else's item.
                trashedAt = info.deletionDate
                source = "trash index"
                if trashedAt == nil { undated = "\(TrashFolder.indexName.escaped)/\(item.name.escaped).trashinfo \(info.problem ?? "has no readable DeletionDate")" }
            }
            guard let trashedAt else {
                report(item.rule, item.path, "cannot tell when it was trashed: \(undated ?? "no date"); kept")
                sizeCap.hold(item)
                continue
            }
            guard !now.subtractingReportingOverflow(trashedAt).overflow else {
                report(item.rule, item.path, "cannot tell when it was trashed: its date (\(source)) is out of range; kept")
                sizeCap.hold(item)
                continue
            }
            guard Ages.isOlder(trashedAt, than: retention.retain, now: now) else {
                sizeCap.keep(item, trashedAt: trashedAt, info: info, source: source)
                continue
            }
            let reason = Ages.describe("trashed (\(source))", trashedAt, limit: retention.retain, now: now)
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
        actions += sizeCap.evictions(rules, now: now, report: report)
        // Orphans: a .trashinfo (or app index entry) whose item is gone goes once it is older than `retain`,
        // as trash-cli does; one without a readable date is kept and reported. Only where the items folder
        // was listed whole: an unreadable files/ makes nothing an orphan.
        for info in trashInfos.sorted(by: { $0.path < $1.path }) {
            let rule = rules[info.rule]
            guard case .trash(let retention) = rule.rule.kind, let names = listed[info.rule],
                  !names.contains(info.itemName), rule.selects([], info.itemName.bytes[...]) else { continue }
            let what = rule.trashLayout == .freedesktop
                ? "an orphaned .trashinfo (there is no files/\(info.itemName.escaped))"
                : "an orphaned trash index entry (there is no \(info.itemName.escaped))"
            guard let date = info.deletionDate, !now.subtractingReportingOverflow(date).overflow else {
                report(info.rule, info.path, "\(what) \(info.problem ?? "has a DeletionDate out of range"); kept")
                continue
            }
            guard Ages.isOlder(date, than: retention.retain, now: now) else { continue }
            let reason = Ages.describe("\(what): trashed (DeletionDate)", date, limit: retention.retain, now: now)
            if rule.enforces {
                actions.append(Action(kind: .delete, path: info.path, rule: rule.name, reason: reason, bytes: info.bytes,
                                      identity: info.identity, type: .regular))
            } else {
                report(info.rule, info.path, "\(reason): would be deleted")
            }
        }

        actions += DirectoryUnits.settle(results.flatMap(\.pendingUnits), rules: rules, report: report)
        var gone = Removals(ruleOrder: Dictionary(rules.map { ($0.name, $0.index) }, uniquingKeysWith: { a, _ in a }))
        gone.settleDeletes(&actions)

        // Forbidden entries: moved into the trash folder under a free name, or reported.
        // Taken: the names in the folder, those a .trashinfo or index entry still describes, and (app layout)
        // the names of the folder's own structure.
        var taken = Set(folderNames.map(\.bytes))
        if let first = rules.first(where: { if case .trash = $0.rule.kind { true } else { false } }) {
            for info in trashInfos where info.rule == first.index { taken.insert(info.itemName.bytes) }
            if first.trashLayout == .app {
                for name in [TrashFolder.indexName, TrashFolder.filesName, TrashFolder.infoName] { taken.insert(name.bytes) }
            }
        }
        var madeTrashFolder = false
        var previousForbidden: RelativePath? = nil
        for entry in forbidden.sorted(by: { ($0.path, $0.rule) < ($1.path, $1.rule) }) {
            let rule = rules[entry.rule]
            if entry.path == previousForbidden { continue }  // a later rule forbidding the same entry
            previousForbidden = entry.path
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

        // Quotas, in policy order, over what is left once the deletions and moves above are done. Files are
        // handled by (ledger, record) numbers: a quota scope may hold most of a million files.
        let ledgers = results.map(\.quota)
        let lastQuotaRule = rules.last { if case .quota = $0.rule.kind { true } else { false } }?.index
        for rule in rules {
            guard case .quota(let quota) = rule.rule.kind else { continue }
            if quota.unit == .directory {
                evictUnits(rule, quota, ledgers: ledgers, units: results.flatMap(\.quotaUnits), gone: &gone,
                           actions: &actions, notes: &notes, report: report)
                continue
            }
            // Per-file removal checks only when something under this scope was deleted or moved.
            let check = gone.hasRemovals(under: rule.rule.path)
            // Eviction order keys side by side: sorting compares times in one flat array.
            var candidates: [(time: Int64, member: UInt64)] = []
            var seenInodes = Set<UInt64>()
            var used: Int64 = 0
            for (l, ledger) in ledgers.enumerated() {
                ledger.records.withUnsafeBufferPointer { records in
                    for i in records.indices where Int(records[i].rule) == rule.index {
                        if check && gone.isRemoved(ledger.path(i)) { continue }
                        let r = records[i]
                        if r.linkCount <= 1 || seenInodes.insert(r.inode).inserted { used += r.allocated }
                        if r.linkCount <= 1 { candidates.append((r.time, UInt64(l) << 32 | UInt64(i))) }
                    }
                }
            }
            @inline(__always) func record(_ m: UInt64) -> QuotaLedger.Record { ledgers[Int(m >> 32)].records[Int(m & 0xFFFF_FFFF)] }
            @inline(__always) func path(_ m: UInt64) -> RelativePath { ledgers[Int(m >> 32)].path(Int(m & 0xFFFF_FFFF)) }
            let maximum = quota.max.bytes
            let target = quota.target.bytes(of: quota.max)
            guard used > maximum else { continue }
            if quota.evict == .lru && relaxedAtime.contains(rule.index) {
                notes.append("quota rule '\(rule.name)' evicts by access time, but \(rule.rule.path.isEmpty ? "the root" : rule.rule.path.escaped) is on a relatime/noatime mount: access times are approximate")
            }
            candidates.sort { a, b in a.time != b.time ? a.time < b.time : ByteOrder.precedes(path(a.member), path(b.member)) }
            let protected = QuotaProtection.removeProtected(&candidates, quota: quota, now: now)
            var remaining = used
            var evicted = 0
            for c in candidates where remaining > target {
                remaining -= record(c.member).allocated
                evicted += 1
            }
            candidates.removeLast(candidates.count - evicted)
            // One reason shared by every eviction of this rule (one string, not one per file).
            let summary = "\(ByteSize.human(used)) used > \(ByteSize.human(maximum)) max"
            let reason = "quota: \(summary); \(quota.evict == .lru ? "least recently used (atime)" : "oldest (mtime)") first"
            if rule.enforces {
                // Paths and identities first, then the ledgers go (after the last quota rule), then the actions:
                // the ledgers and a quarter of a million new actions are never in memory together.
                var evictions: [(path: RelativePath, bytes: Int64, identity: EntryIdentity)] = []
                evictions.reserveCapacity(evicted)
                for c in candidates {
                    let l = Int(c.member >> 32), i = Int(c.member & 0xFFFF_FFFF)
                    evictions.append((ledgers[l].path(i), ledgers[l].records[i].allocated, ledgers[l].identity(i)))
                }
                candidates = []
                if rule.index == lastQuotaRule { for ledger in ledgers { ledger.release() } }
                actions.reserveCapacity(actions.count + evicted)
                for e in evictions {
                    actions.append(Action(kind: .delete, path: e.path, rule: rule.name, reason: reason, bytes: e.bytes,
                                          identity: e.identity, type: .regular))
                }
                gone.addDeletes(evictions.map(\.path))
            } else {
                report(rule.index, rule.rule.path, "\(summary); would evict \(evicted) files (\(ByteSize.human(used - remaining))) to reach \(ByteSize.human(target))")
            }
            if remaining > target && protected > 0 {
                report(rule.index, rule.rule.path, QuotaProtection.unmet(quota, rule: rule.name, remaining: remaining, target: target, protected: protected))
            }
            if remaining > target {
                notes.append("quota rule '\(rule.name)': only \(ByteSize.human(used - remaining)) can be evicted; \(ByteSize.human(remaining)) stays above the target of \(ByteSize.human(target)) (files with several hard links are never evicted)")
            }
        }
        for ledger in ledgers { ledger.release() }

        gone.applyPrecedence(&actions)
        return Outcome(actions: actions, violations: found, notes: notes)
    }

    private struct InfoKey: Hashable {
        var rule: Int
        var name: FileName
    }
}

/// A path as a hash key that hashes its bytes in one call (hashing an ArraySlice byte by byte is slow).
struct PathKey: Hashable {
    let bytes: ArraySlice<UInt8>
    init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes }
    init(_ path: RelativePath) { bytes = path.bytes[...] }

    func hash(into hasher: inout Hasher) {
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }

    static func == (a: PathKey, b: PathKey) -> Bool {
        a.bytes.count == b.bytes.count && a.bytes.withUnsafeBytes { x in
            b.bytes.withUnsafeBytes { y in x.count == 0 || system_memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0 }
        }
    }
}

/// The deletions and moves settled so far, and the precedence they impose on everything else:
/// a deleted entry gets no other action, nothing inside a deleted or moved directory gets one, and
/// of two actions of one kind on one path the earlier rule's wins.
struct Removals {
    let ruleOrder: [String: Int]
    /// Every deleted path, sorted by bytes (binary search: no per-path hash entries at a million files).
    private var deleted: [RelativePath] = []
    /// Deleted directories, sorted by bytes: ancestors are found by binary search, not hashing.
    private var deletedDirectories: [RelativePath] = []
    private var moved: Set<PathKey> = []
    /// The byte lengths of the moved paths: only prefixes of those lengths can be a moved ancestor, so most
    /// prefixes of a path are never hashed.
    private var movedLengths: [Bool] = []
    /// Deletions added after settling (quota evictions), and their hash set once one is needed.
    private var late: [RelativePath] = []
    private var lateSet: Set<PathKey>? = nil

    init(ruleOrder: [String: Int]) { self.ruleOrder = ruleOrder }

    private func rank(_ a: Action) -> Int { ruleOrder[a.rule] ?? -1 }

    /// Keeps one delete per path (the earliest rule's) and drops deletes inside deleted directories.
    mutating func settleDeletes(_ actions: inout [Action]) {
        var order = actions.indices.filter { actions[$0].isDelete }
        // Keys pulled out once: comparing through `actions[i]` copied (retained) a whole action per look.
        let paths = actions.map(\.path.bytes)
        let ranks = actions.map { rank($0) }
        paths.withUnsafeBufferPointer { p in
            ranks.withUnsafeBufferPointer { r in
                order.sort { a, b in
                    let c = ByteOrder.compare(p[a], p[b])
                    if c != 0 { return c < 0 }
                    return (r[a], a) < (r[b], b)
                }
            }
        }
        var keep = [Bool](repeating: true, count: actions.count)
        var previous: RelativePath? = nil
        for i in order {
            if actions[i].path == previous { keep[i] = false } else { previous = actions[i].path }
        }
        deletedDirectories = order.filter { keep[$0] && actions[$0].type == .directory }.map { actions[$0].path }
        // Everything under a deleted directory D sorts together, as the paths starting with "D/".
        for directory in deletedDirectories {
            let prefix = directory.bytes + [0x2F]
            var low = 0, high = order.count
            while low < high {
                let mid = (low + high) / 2
                if ByteOrder.compare(actions[order[mid]].path.bytes, prefix) < 0 { low = mid + 1 } else { high = mid }
            }
            while low < order.count, actions[order[low]].path.bytes.starts(with: prefix) {
                keep[order[low]] = false
                low += 1
            }
        }
        deleted = order.filter { keep[$0] }.map { actions[$0].path }
        Removals.compact(&actions, keep)
    }

    /// Adds deletions decided later (quota evictions).
    mutating func addDeletes(_ paths: [RelativePath]) {
        // Quota evictions: regular files, so never anyone's ancestor. Kept unsorted (sorting a quarter of a
        // million paths costs more than the few lookups they get); hashed only if someone asks.
        late.append(contentsOf: paths)
        lateSet = nil
    }

    /// Adds folders evicted whole (quota `unit: directory`): the deletes already planned inside them go.
    mutating func addDirectoryDeletes(_ paths: [RelativePath], _ actions: inout [Action]) {
        guard !paths.isEmpty else { return }
        deletedDirectories = (deletedDirectories + paths).sorted { ByteOrder.precedes($0, $1) }
        deleted = (deleted + paths).sorted { ByteOrder.precedes($0, $1) }
        let sorted = deletedDirectories
        actions.removeAll { $0.isDelete && hasAncestor($0.path, inSorted: sorted) }
    }

    mutating func recordMove(_ a: Action) {
        moved.insert(PathKey(a.path))
        let length = a.path.bytes.count
        if movedLengths.count <= length { movedLengths += [Bool](repeating: false, count: length + 1 - movedLengths.count) }
        movedLengths[length] = true
    }

    /// True when some deleted or moved entry lies under `scope`, or is `scope` or one of its ancestors (so
    /// entries there need checking). Moves and deleted directories elsewhere in the tree do not count: a
    /// quota scope then skips a removal check (and a path) per file.
    func hasRemovals(under scope: RelativePath) -> Bool {
        if scope.isEmpty { return !deleted.isEmpty || !late.isEmpty || !moved.isEmpty }
        if moved.contains(where: { Removals.within($0.bytes, scope.bytes[...]) || Removals.within(scope.bytes[...], $0.bytes) }) { return true }
        if hasAncestor(scope, inSorted: deletedDirectories) { return true }
        if late.contains(where: { $0.hasPrefix(scope) }) { return true }
        // The first deleted path not before the scope: the scope itself or a path under it if any exist.
        var low = 0, high = deleted.count
        while low < high {
            let mid = (low + high) / 2
            if ByteOrder.precedes(deleted[mid], scope) { low = mid + 1 } else { high = mid }
        }
        // Paths under the scope start with "scope/", which sorts after "scope" and before "scope" + 0x30...
        var i = low
        while i < deleted.count, deleted[i].bytes.starts(with: scope.bytes) {
            if deleted[i].hasPrefix(scope) { return true }
            i += 1
        }
        return false
    }

    /// True when `path` is `scope` or lies beneath it.
    private static func within(_ path: ArraySlice<UInt8>, _ scope: ArraySlice<UInt8>) -> Bool {
        guard path.count >= scope.count, path.starts(with: scope) else { return false }
        return path.count == scope.count || path[path.startIndex + scope.count] == 0x2F
    }

    mutating func isDeleted(_ path: RelativePath) -> Bool {
        if !late.isEmpty {
            if lateSet == nil { lateSet = Set(late.map(PathKey.init)) }
            if lateSet!.contains(PathKey(path)) { return true }
        }
        return isSettledDelete(path)
    }

    private func isSettledDelete(_ path: RelativePath) -> Bool {
        var low = 0, high = deleted.count
        while low < high {
            let mid = (low + high) / 2
            if ByteOrder.precedes(deleted[mid], path) { low = mid + 1 } else { high = mid }
        }
        return low < deleted.count && deleted[low] == path
    }

    /// True when the entry is deleted or moved, or lies inside a directory that is.
    mutating func isRemoved(_ path: RelativePath) -> Bool {
        if isDeleted(path) { return true }
        if moved.isEmpty && deletedDirectories.isEmpty { return false }
        if moved.contains(PathKey(path)) { return true }
        return hasAncestor(path, inSorted: deletedDirectories) || hasAncestor(path, in: moved)
    }

    private func hasAncestor(_ path: RelativePath, inSorted sorted: [RelativePath]) -> Bool {
        guard !sorted.isEmpty else { return false }
        let bytes = path.bytes
        var i = bytes.startIndex
        while i < bytes.endIndex {
            if bytes[i] == 0x2F {
                let prefix = bytes[..<i]
                var low = 0, high = sorted.count
                while low < high {
                    let mid = (low + high) / 2
                    if ByteOrder.precedes(sorted[mid].bytes[...], prefix) { low = mid + 1 } else { high = mid }
                }
                if low < sorted.count && sorted[low].bytes.elementsEqual(prefix) { return true }
            }
            i += 1
        }
        return false
    }

    private func hasAncestor(_ path: RelativePath, in set: Set<PathKey>) -> Bool {
        guard !set.isEmpty else { return false }
        let bytes = path.bytes
        let lengths = min(bytes.count, movedLengths.count)
        var i = 0
        while i < lengths {
            if movedLengths[i] && bytes[i] == 0x2F && set.contains(PathKey(bytes[..<i])) { return true }
            i += 1
        }
        return false
    }

    /// Drops the actions precedence rules out, in place: other actions on removed targets, anything inside
    /// a moved directory, and duplicates (one rename per path, one mkdir per path, one setxattr per path and
    /// attribute; the earliest rule's).
    mutating func applyPrecedence(_ actions: inout [Action]) {
        var keep = [Bool](repeating: true, count: actions.count)
        // Evicted files matter only to the few actions that are not deletes: hash those few, probe the many.
        // (The set then holds only the evictions those actions name: nothing asks after this, the last step.)
        if !late.isEmpty && lateSet == nil {
            let targets = Set(actions.indices.filter { !actions[$0].isDelete }.map { PathKey(actions[$0].path) })
            var hit = Set<PathKey>()
            for p in late where targets.contains(PathKey(p)) { hit.insert(PathKey(p)) }
            lateSet = hit
        }
        struct Key: Hashable {
            /// The kind's number: hashing a small integer, not its name, per action.
            var kind: UInt8
            var attribute: String
            var path: PathKey
        }
        func code(_ kind: Action.Kind) -> UInt8 {
            switch kind {
            case .delete: 0
            case .rename: 1
            case .trash: 2
            case .mkdir: 3
            case .setxattr: 4
            case .writeTag: 5
            case .unmark: 6
            case .untag: 7
            }
        }
        var seen = Set<Key>()
        // Ranks looked up once per action, not once per comparison.
        var others = actions.indices.filter { !actions[$0].isDelete }.map { (rank: rank(actions[$0]), index: $0) }
        others.sort { ($0.rank, $0.index) < ($1.rank, $1.index) }
        if !moved.isEmpty {
            for i in actions.indices where actions[i].isDelete && hasAncestor(actions[i].path, in: moved) { keep[i] = false }
        }
        for (_, i) in others {
            var attribute = ""
            let kind = actions[i].kind
            let path = actions[i].path
            switch kind {
            case .delete:
                continue
            case .trash:
                if isDeleted(path) || hasAncestor(path, inSorted: deletedDirectories) || hasAncestor(path, in: moved) {
                    keep[i] = false
                    continue
                }
            case .rename, .writeTag, .untag:
                if isRemoved(path) { keep[i] = false; continue }
            case .setxattr(let name, _), .unmark(let name):
                if isRemoved(path) { keep[i] = false; continue }
                attribute = name
            case .mkdir:
                break
            }
            if !seen.insert(Key(kind: code(kind), attribute: attribute, path: PathKey(path))).inserted { keep[i] = false }
        }
        Removals.compact(&actions, keep)
    }

    static func compact(_ actions: inout [Action], _ keep: [Bool]) {
        var write = 0
        for read in actions.indices where keep[read] {
            if write != read { actions.swapAt(write, read) }
            write += 1
        }
        actions.removeLast(actions.count - write)
    }
}
