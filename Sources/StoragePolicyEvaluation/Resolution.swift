// After the walk: each kind's decisions that need the whole tree (Kinds/: trash dates from info/, expire
// units, moves into the trash with free names, quota eviction) and the precedence that makes the actions consistent.
// Touches no disk.

@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyPlan
@_spi(Layers) import StoragePolicyModel

package struct Resolution {
    package let rules: [CompiledRule]
    package let now: Int64
    /// Where entries moved into the trash go (`files/` inside a FreeDesktop trash folder); nil without a trash rule.
    let trashTarget: RelativePath?
    /// Components of `trashTarget` that do not exist yet: created (mkdir) before anything moves there.
    let missingTrashTarget: [RelativePath]
    /// Rules whose scope is on a mount that does not keep atime precisely (for `lru` notes).
    let relaxedAtime: Set<Int>
    /// The policy's pressure rules and the root volume's free space they judge (nil: none, or unreadable).
    var pressure: [PressureRule] = []
    var space: VolumeSpace? = nil
    /// Making room on request: bytes to free beyond the current free space, whatever freeBelow says.
    package var reclaimBytes: Int64? = nil
    /// What the quarantine holds (purged first under pressure) and the rules whose deletes it holds back (which
    /// free nothing now).
    package var quarantineHeld: Int64 = 0
    package var quarantinedRules: Set<String> = []

    package struct Outcome {
        package var actions: [Action]
        package var violations: [Violation]
        package var notes: [String]
        /// Deletes pressure rules made: plain deletes, never quarantined (they must free space now).
        package var pressureEvicted: Set<RelativePath> = []
    }

    package func resolve(_ results: [EvaluationResults], preflight: [Action], violations: [Violation]) -> Outcome {
        var context = ResolutionContext(self, results, preflight: preflight, violations: violations)
        // Each kind's step in RuleKinds order: those that delete, then (deletes settled) those that move or evict.
        for kind in RuleKinds.all where !kind.resolvesAfterSettledDeletes { kind.resolve(&context) }
        context.gone.settleDeletes(&context.actions)
        for kind in RuleKinds.all where kind.resolvesAfterSettledDeletes { kind.resolve(&context) }
        context.quarantineHeld = quarantineHeld
        context.quarantinedRules = quarantinedRules
        if context.space != nil { PressureEviction.resolve(pressure, reclaim: reclaimBytes, &context) }
        context.gone.applyPrecedence(&context.actions)
        return Outcome(actions: context.actions, violations: context.violations, notes: context.notes,
                       pressureEvicted: context.pressureEvicted)
    }
}

/// What the kinds' resolution steps share: the walk's records merged from every thread, and the actions,
/// findings and notes so far.
package struct ResolutionContext {
    package let rules: [CompiledRule]
    package let now: Int64
    /// Where entries moved into the trash go (`files/` inside a FreeDesktop trash folder); nil without a trash rule.
    let trashTarget: RelativePath?
    /// Components of `trashTarget` that do not exist yet: created (mkdir) before anything moves there.
    let missingTrashTarget: [RelativePath]
    /// Rules whose scope is on a mount that does not keep atime precisely (for `lru` notes).
    let relaxedAtime: Set<Int>
    package let results: [EvaluationResults]
    package var actions: [Action]
    package var violations: [Violation]
    package var notes: [String] = []
    package var trashItems: [TrashItem] = []
    var trashInfos: [TrashInfoFile] = []
    var trashListings: [TrashItemsListing] = []
    /// The names in the folder entries are moved into (the trash target).
    var folderNames: [FileName] = []
    /// The deletions and moves decided so far.
    package var gone: Removals
    /// The root volume's free space when pressure rules are judged: quota ledgers are kept for them.
    var space: VolumeSpace?
    /// Pressure-named trash rules' items that retention and maxSize keep, in each rule's order, by rule number.
    var trashPressure: [Int: [TrashSizeCap.Candidate]] = [:]
    /// The quarantine's bytes (Resolution.quarantineHeld), the rules whose deletes it holds, and the deletes
    /// pressure made (never held).
    var quarantineHeld: Int64 = 0
    var quarantinedRules: Set<String> = []
    var pressureEvicted: Set<RelativePath> = []

    package init(_ resolution: Resolution, _ results: [EvaluationResults], preflight: [Action], violations: [Violation]) {
        rules = resolution.rules; now = resolution.now; trashTarget = resolution.trashTarget
        missingTrashTarget = resolution.missingTrashTarget; relaxedAtime = resolution.relaxedAtime
        space = resolution.space
        self.results = results
        self.violations = violations
        // Moved out of each thread's results, so no action or record is held twice. The first thread's array
        // is taken whole (the preflight's few actions slid in front of it): its actions are moved, not copied.
        actions = []
        for (k, r) in results.enumerated() {
            if k == 0 {
                actions = r.actions
                r.actions = []
                // Room for every thread's actions and some more: the kinds' steps append theirs (trash moves,
                // evictions, directory deletes), and an append to an array filled to its capacity doubled it,
                // the old and the new buffer held at once: the planner's peak (a third more at a million entries).
                let total = preflight.count + actions.count + results.dropFirst().reduce(0) { $0 + $1.actions.count }
                actions.reserveCapacity(total + total / 8 + 4096)
                actions.insert(contentsOf: preflight, at: 0)
            } else {
                actions.append(contentsOf: r.actions)
                r.actions = []
            }
            self.violations.append(contentsOf: r.violations)
            trashItems.append(contentsOf: r.trashItems)
            trashInfos.append(contentsOf: r.trashInfos)
            trashListings.append(contentsOf: r.trashListings)
            if let names = r.trashFolderNames { folderNames = names }
        }
        if results.isEmpty { actions = preflight }
        gone = Removals(ruleOrder: Dictionary(rules.map { ($0.name, $0.index) }, uniquingKeysWith: { a, _ in a }))
    }

    /// A finding of rule number `rule`, with the rule's severity.
    package mutating func report(_ rule: Int, _ path: RelativePath, _ message: String) {
        violations.append(Violation(rule: rules[rule].name, path: path, message: message,
                                    severity: rules[rule].rule.effectiveSeverity))
    }

    /// Every thread's records of type `R`, in thread order.
    package func records<R: KindRecords>(_ type: R.Type) -> [R] { results.map { $0.records(type) } }

    /// The first trash rule: its folder is where entries moved into the trash go.
    var firstTrashRule: CompiledRule? {
        rules.first { if case .trash = $0.rule.kind { true } else { false } }
    }
}

/// A path as a hash key that hashes its bytes in one call (hashing an ArraySlice byte by byte is slow).
package struct PathKey: Hashable {
    package let bytes: ArraySlice<UInt8>
    package init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes }
    package init(_ path: RelativePath) { bytes = path.bytes[...] }

    package func hash(into hasher: inout Hasher) {
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }

    package static func == (a: PathKey, b: PathKey) -> Bool {
        a.bytes.count == b.bytes.count && a.bytes.withUnsafeBytes { x in
            b.bytes.withUnsafeBytes { y in x.count == 0 || system_memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0 }
        }
    }
}

/// The deletions and moves settled so far, and the precedence they impose on everything else:
/// a deleted entry gets no other action, nothing inside a deleted or moved directory gets one, and
/// of two actions of one kind on one path the earlier rule's wins.
package struct Removals {
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

    package init(ruleOrder: [String: Int]) { self.ruleOrder = ruleOrder }

    /// Keeps one delete per path (the earliest rule's) and drops deletes inside deleted directories.
    mutating func settleDeletes(_ actions: inout [Action]) {
        // Fields read through a buffer pointer: `actions[i]` copied (retained) a whole action per look. Ranks
        // looked up once per run of one rule's actions, not hashed per action.
        var order: [Int] = []
        var others: [Int] = []
        var ranks = [Int](repeating: 0, count: actions.count)
        actions.withUnsafeBufferPointer { a in
            var lastRule: String? = nil
            var lastRank = -1
            for i in a.indices {
                guard a[i].isDelete else { others.append(i); continue }
                if a[i].rule != lastRule { lastRule = a[i].rule; lastRank = ruleOrder[a[i].rule] ?? -1 }
                ranks[i] = lastRank
                order.append(i)
            }
            // Sixteen bytes at a time after the prefix every deleted path shares (`tmp/` in a flat folder).
            let shared = ByteOrder.sharedPrefix(order.count) { a[order[$0]].path.bytes }
            ranks.withUnsafeBufferPointer { r in
                ByteOrder.sortIndices(&order, from: shared, length: { a[$0].path.bytes.count },
                                      key: { i, at in a[i].path.bytes.withUnsafeBufferPointer { ByteOrder.key($0, from: at) } },
                                      tie: { x, y in (r[x], x) < (r[y], y) })
            }
        }
        var keep = [Bool](repeating: true, count: actions.count)
        actions.withUnsafeBufferPointer { a in
            var previous = -1
            for i in order {
                if previous >= 0 && a[i].path.bytes == a[previous].path.bytes { keep[i] = false } else { previous = i }
            }
        }
        // Through the buffer pointer: `actions[i]` copied (retained) every field of the action to read one.
        actions.withUnsafeBufferPointer { a in
            deletedDirectories = order.compactMap { keep[$0] && a[$0].type == .directory ? a[$0].path : nil }
        }
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
        actions.withUnsafeBufferPointer { a in deleted = order.compactMap { keep[$0] ? a[$0].path : nil } }
        // The settled deletes first, in path order, then the other actions in their order (precedence ranks
        // those by rule, then position), then the dropped deletes, cut off: the plan's final sort then finds
        // the deletes as one sorted run instead of sorting them a second time.
        var arranged: [Int] = []
        arranged.reserveCapacity(actions.count)
        for i in order where keep[i] { arranged.append(i) }
        let settled = arranged.count
        arranged += others
        for i in order where !keep[i] { arranged.append(i) }
        ByteOrder.permute(&actions, arranged)
        actions.removeLast(order.count - settled)
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
        // Through buffer pointers: this runs for every delete of a plan with moves, over every byte of its path.
        let found = bytes.withUnsafeBufferPointer { b in
            movedLengths.withUnsafeBufferPointer { m in
                var i = 0
                while i < lengths {
                    if b[i] == 0x2F && m[i] { return i }
                    i += 1
                }
                return -1
            }
        }
        guard found >= 0 else { return false }
        if set.contains(PathKey(bytes[..<found])) { return true }
        var i = found + 1
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
        // Ranks looked up once per run of one rule's actions, not once per comparison (nor hashed per action).
        var others: [(rank: Int, index: Int)] = []
        actions.withUnsafeBufferPointer { a in
            var lastRule: String? = nil
            var lastRank = -1
            for i in a.indices where !a[i].isDelete {
                if a[i].rule != lastRule { lastRule = a[i].rule; lastRank = ruleOrder[a[i].rule] ?? -1 }
                others.append((lastRank, i))
            }
        }
        others.sort { ($0.rank, $0.index) < ($1.rank, $1.index) }
        // Sized once: growing it rehashed every key so far.
        var seen = Set<Key>(minimumCapacity: others.count)
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
            case .setPermissions:
                if isRemoved(path) { keep[i] = false; continue }
            case .mkdir, .mkfile, .symlink:
                break
            }
            if !seen.insert(Key(kind: UInt8(kind.ordinal), attribute: attribute, path: PathKey(path))).inserted { keep[i] = false }
        }
        Removals.compact(&actions, keep)
    }

    package static func compact(_ actions: inout [Action], _ keep: [Bool]) {
        var write = 0
        // Swapped through a buffer pointer: moves, without the array's uniqueness and bounds checks per swap.
        actions.withUnsafeMutableBufferPointer { a in
            for read in a.indices where keep[read] {
                if write != read { a.swapAt(write, read) }
                write += 1
            }
        }
        actions.removeLast(actions.count - write)
    }
}
