// The single pass: every rule whose scope holds an entry judges it as the walker lists it, stat'ing only
// when a verdict needs metadata. Produces actions and findings; never changes anything on disk.
import Synchronization

final class Evaluator: WalkVisitor {
    typealias Directory = EvaluatedDirectory
    typealias Worker = EvaluationResults

    let rules: [CompiledRule]
    let trie: ScopeTrie
    /// Ages are measured against this instant (ns since the epoch).
    let now: Int64
    /// Where forbidden entries are moved: its names are recorded so moves get free names.
    let trashTarget: RelativePath?
    let backupMarker: (name: String, value: [UInt8])
    let progress: ProgressReporter?

    init(rules: [CompiledRule], trie: ScopeTrie, now: Int64, trashTarget: RelativePath?,
         backupMarker: (name: String, value: [UInt8]), progress: ProgressReporter?) {
        self.rules = rules; self.trie = trie; self.now = now; self.trashTarget = trashTarget
        self.backupMarker = backupMarker; self.progress = progress
    }

    func makeWorker() -> EvaluationResults { EvaluationResults() }

    // MARK: Visiting a directory

    func visit(_ listing: DirectoryListing, parent: EvaluatedDirectory?, worker: EvaluationResults) -> EvaluatedDirectory {
        worker.entriesScanned += listing.count
        progress?.advance(by: listing.count, in: listing.path)

        let node: ScopeTrie?
        var active: [Int]
        if let parent {
            node = parent.trie?.child(listing.components[listing.components.count - 1])
            active = parent.active
            if let node, !node.rules.isEmpty { active += node.rules }
        } else {
            node = trie
            active = trie.rules
        }

        var deletion: Verdict? = nil
        var auditDeletions: [Verdict] = []
        var trashItem: TrashItem? = nil
        if let parent, !parent.active.isEmpty, listing.directoryStatus.hasTimeOutOfRange {
            // Its times cannot be judged: kept and reported; its entries are still judged one by one.
            worker.skipped.append(SkippedEntry(path: listing.path, reason: Evaluator.timeOutOfRange))
        } else if let parent, !parent.active.isEmpty {
            judgeItself(listing, parentActive: parent.active, structural: node != nil, kept: parent.kept, worker: worker,
                        deletion: &deletion, auditDeletions: &auditDeletions, trashItem: &trashItem)
        }

        var aggregate = EvaluatedDirectory.Aggregate()
        aggregate.entries = listing.count
        aggregate.remaining = listing.count
        aggregate.remainingAny = listing.count
        let unit = parent.flatMap { DirectoryUnits.unit(of: listing, parentActive: $0.active, rules: rules, structural: node != nil) }
        let unitBy = unit?.by ?? parent?.unitBy
        if let unitBy { DirectoryUnits.date(listing, by: unitBy, into: &aggregate) }
        // Inside a unit everything is held: the unit may go whole.
        let holds = deletion != nil || unitBy != nil
        var kept = KeptEntries.none
        if !active.isEmpty {
            judgeEntries(listing, active: active, node: node, holds: holds, aggregate: &aggregate, kept: &kept, worker: worker)
        } else if let node, !node.children.isEmpty {
            for i in 0..<listing.count where listing.type(i) == .directory && node.child(listing.nameBytes(i)) != nil {
                listing.enter(i)
            }
        }
        if let trashTarget, listing.path == trashTarget {
            worker.trashFolderNames = (0..<listing.count).map(listing.name)
        }
        return EvaluatedDirectory(parent: parent, path: listing.path, trie: node, active: active,
                                  status: listing.directoryStatus, deletion: deletion,
                                  auditDeletions: auditDeletions, trashItem: trashItem, aggregate: aggregate, kept: kept,
                                  unit: unit, unitBy: unitBy)
    }

    /// The rules of the parent's scopes judge this directory as one of their entries: whether it is
    /// expired (and may go once empty), whether it is a trash item, whether it needs a backup marker.
    private func judgeItself(_ listing: DirectoryListing, parentActive: [Int], structural: Bool, kept: KeptEntries,
                             worker: EvaluationResults, deletion: inout Verdict?, auditDeletions: inout [Verdict],
                             trashItem: inout TrashItem?) {
        let components = listing.components
        let name = components[components.count - 1]
        let status = listing.directoryStatus
        for index in parentActive {
            let rule = rules[index]
            let directory = components[rule.scopeDepth..<(components.count - 1)]
            switch rule.rule.kind {
            case .expire(let expire):
                // Scopes, layout directories and the way to them are structure: never expired.
                guard !structural, !expire.judgesUnits, rule.admits(.directory), rule.selects(directory, name),
                      !kept.protects(index, name) else { continue }
                let (label, time) = Ages.timestamp(status, by: expire.by)
                guard Ages.isOlder(time, than: expire.after, now: now) else { continue }
                let verdict = Verdict(rule: index, reason: Ages.describe(label, time, limit: expire.after, now: now))
                if rule.enforces {
                    if deletion == nil { deletion = verdict }
                } else {
                    auditDeletions.append(verdict)
                }
            case .trash:
                guard !structural, trashRole(rule, parentComponents: components.dropLast()) == .items,
                      rule.selects([], name) else { continue }
                // An app trash's index folder is its structure, never an item.
                if rule.trashLayout == .app && name.elementsEqual(TrashFolder.indexName.bytes) { continue }
                let item = makeTrashItem(rule, path: listing.path, name: listing.path.lastComponent!, status: status,
                                         stamp: { () throws(FileSystemError) -> [UInt8]? in try listing.extendedAttribute(Markers.trashStampAttribute, of: nil) })
                trashItem = item
                worker.trashItems.append(item)
            case .backup(let backup):
                // Structure is protected from deletes, renames and moves; a marker on it is fine.
                guard !rule.match.isEmpty, rule.admits(.directory), rule.selects(directory, name) else { continue }
                checkMarker(rule, path: listing.path, identity: status.identity, type: .directory, worker: worker) { () throws(FileSystemError) -> [UInt8]? in
                    try listing.extendedAttribute(backupMarker.name, of: nil)
                }
                if backup.cacheDirectoryTag { checkCacheTag(rule, listing: listing, worker: worker) }
            case .quota, .naming, .forbid, .custom:
                continue
            }
        }
    }

    /// Every entry of the directory meets the rules whose scope holds it.
    /// One active rule as this directory's entries see it: worked out once per directory, not per entry.
    private struct RuleView {
        let index: Int
        let rule: CompiledRule
        /// This directory's components below the rule's scope.
        let directory: ArraySlice<ArraySlice<UInt8>>
        let trashRole: TrashRole
    }

    private func judgeEntries(_ listing: DirectoryListing, active: [Int], node: ScopeTrie?, holds: Bool,
                              aggregate: inout EvaluatedDirectory.Aggregate, kept: inout KeptEntries,
                              worker: EvaluationResults) {
        let components = listing.components
        var namingCandidates: [(rule: Int, entry: Int)] = []
        var quotaDirectory: UInt32? = nil
        var expiring: [RuleView] = []
        var others: [RuleView] = []
        // Trash rules care about where in the trash folder this directory is.
        var measureAll = false
        for index in active {
            let rule = rules[index]
            var role = TrashRole.ignored
            if case .trash = rule.rule.kind {
                role = trashRole(rule, parentComponents: components[...])
                if role == .items || role == .inside || (role == .folder && rule.trashLayout == .app) { measureAll = true }
                if role == .items {
                    // Every name, judged or not (unreadable ones too): a .trashinfo is an orphan only when its
                    // item is really absent, never because the item could not be stat'ed.
                    worker.trashListings.append(TrashItemsListing(rule: index, names: Set((0..<listing.count).map(listing.name))))
                }
            }
            let view = RuleView(index: index, rule: rule, directory: components[rule.scopeDepth...], trashRole: role)
            if case .expire = rule.rule.kind { expiring.append(view) } else { others.append(view) }
        }
        if expiring.contains(where: { if case .expire(let e) = $0.rule.rule.kind { e.keep > 0 } else { false } }) {
            // Unit rules count units, not entries: their keep is settled after the walk (DirectoryUnits.settle).
            let counting = expiring.filter { if case .expire(let e) = $0.rule.rule.kind { !e.judgesUnits } else { false } }
            kept = KeptEntries.newest(listing, rules: counting.map { ($0.index, $0.rule, $0.directory) }) { i in
                listing.type(i) == .directory && node?.child(listing.nameBytes(i)) != nil
            }
        }

        for i in 0..<listing.count {
            let name = listing.nameBytes(i)
            guard let type = listing.type(i) else {
                recordStatusFailure(listing, i, worker: worker)
                continue
            }
            if type == .directory, let node, node.child(name) != nil {
                // A scope, a layout directory or the way to one: structure, walked but never judged.
                listing.enter(i)
                continue
            }
            switch type {
            case .regular, .directory, .symlink: break
            default:
                worker.skipped.append(SkippedEntry(path: listing.path(of: i),
                                                   reason: "\(type.rawValue): not a regular file, directory or symlink; left alone"))
                continue
            }
            var enter = false
            var failed = false
            func status() -> FileStatus? {
                if failed { return nil }
                do { return try listing.status(i) } catch {
                    failed = true
                    recordStatusFailure(listing, i, worker: worker)
                    return nil
                }
            }

            // Expiry first: an entry that is deleted meets no other rule.
            var deleteVerdict: Verdict? = nil
            var auditVerdicts: [Verdict] = []
            for view in expiring {
                let rule = view.rule
                guard case .expire(let expire) = rule.rule.kind else { continue }
                if type == .directory {
                    if !enter && rule.needsBelow(view.directory, name) { enter = true }
                    continue
                }
                // A unit rule judges files directly in its scope; what is inside a unit goes with the unit.
                if expire.judgesUnits && !view.directory.isEmpty { continue }
                if expire.judgesUnits && expire.keep > 0 {
                    // A file in the scope is a unit of its own, kept or not by its rank among all the units.
                    guard rule.admits(type), rule.selects(view.directory, name), let s = status() else { continue }
                    let (label, time) = Ages.timestamp(s, by: expire.by)
                    var pending = PendingUnit(rule: view.index, scope: listing.path, name: Array(name), newest: time,
                                              action: nil, finding: nil, held: [])
                    if Ages.isOlder(time, than: expire.after, now: now) {
                        let reason = worker.intern(Ages.describe(label, time, limit: expire.after, now: now))
                        if rule.enforces {
                            pending.action = Action(kind: .delete, path: listing.path(of: i), rule: rule.name, reason: reason,
                                                    bytes: s.bytesFreedByRemoval, identity: s.identity, type: type)
                        } else {
                            pending.finding = "\(reason): would be deleted"
                        }
                    }
                    worker.pendingUnits.append(pending)
                    continue
                }
                if rule.enforces && deleteVerdict != nil { continue }
                guard rule.admits(type), rule.selects(view.directory, name), !kept.protects(view.index, name),
                      let s = status() else { continue }
                let (label, time) = Ages.timestamp(s, by: expire.by)
                guard Ages.isOlder(time, than: expire.after, now: now) else { continue }
                let verdict = Verdict(rule: view.index, reason: worker.intern(Ages.describe(label, time, limit: expire.after, now: now)))
                if rule.enforces { deleteVerdict = verdict } else { auditVerdicts.append(verdict) }
            }
            if let verdict = deleteVerdict, let s = status() {
                let action = Action(kind: .delete, path: listing.path(of: i), rule: rules[verdict.rule].name,
                                    reason: verdict.reason, bytes: s.bytesFreedByRemoval, identity: s.identity, type: type)
                if holds { aggregate.held.append(action) } else { worker.actions.append(action) }
                aggregate.remaining -= 1
                aggregate.remainingAny -= 1
                aggregate.bytes += s.bytesFreedByRemoval
                continue
            }
            if !auditVerdicts.isEmpty {
                aggregate.remainingAny -= 1
                for verdict in auditVerdicts {
                    report(verdict.rule, listing.path(of: i), "\(verdict.reason): would be deleted", worker)
                }
            }

            for view in others {
                let rule = view.rule
                let directory = view.directory
                switch rule.rule.kind {
                case .expire:
                    continue
                case .trash:
                    judgeTrashEntry(rule, role: view.trashRole, listing, i, type: type, status: status, worker: worker)
                case .quota(let quota):
                    guard type == .regular, rule.selects(directory, name), let s = status() else { break }
                    if quotaDirectory == nil { quotaDirectory = worker.quota.directory(listing.path) }
                    worker.quota.add(rule: view.index, directory: quotaDirectory!, name: name, status: s,
                                     time: quota.evict == .lru ? s.accessTimeNs : s.modificationTimeNs)
                case .naming:
                    if rule.admits(type), rule.selects(directory, name) { namingCandidates.append((view.index, i)) }
                case .backup:
                    guard type == .regular, !rule.match.isEmpty, rule.admits(type), rule.selects(directory, name),
                          let s = status() else { break }
                    checkMarker(rule, path: listing.path(of: i), identity: s.identity, type: type, worker: worker) { () throws(FileSystemError) -> [UInt8]? in
                        try listing.extendedAttribute(backupMarker.name, of: i)
                    }
                case .forbid:
                    guard rule.admits(type), rule.selects(directory, name),
                          let glob = rule.forbiddenBy(directory, name), let s = status() else { break }
                    worker.forbidden.append(ForbiddenEntry(rule: view.index, path: listing.path(of: i), name: listing.name(i),
                                                           glob: glob.pattern, type: type, identity: s.identity))
                case .custom(let custom):
                    guard rule.admits(type), rule.selects(directory, name) else { break }
                    judgeCustom(custom, rule, listing, i, type: type, worker: worker)
                }
                if type == .directory && !enter && rule.needsBelow(directory, name) { enter = true }
            }
            if type == .directory {
                if enter { listing.enter(i) }
            } else if measureAll || listing.hasStatus(i), let s = status() {
                aggregate.bytes += s.bytesFreedByRemoval
            }
        }
        if !namingCandidates.isEmpty {
            judgeNames(listing, namingCandidates, worker: worker)
        }
    }

    func recordStatusFailure(_ listing: DirectoryListing, _ i: Int, worker: EvaluationResults) {
        let reason: String
        do {
            _ = try listing.status(i)
            return
        } catch {
            if error.isMountPoint {
                reason = WalkSkipReason.otherFileSystem.description
            } else if error.isTimeOutOfRange {
                reason = Evaluator.timeOutOfRange
            } else {
                reason = error.errno == .noSuchFile ? "vanished during the walk" : "cannot stat: \(error.errno)"
            }
        }
        worker.skipped.append(SkippedEntry(path: listing.path(of: i), reason: reason))
    }

    /// Why an entry whose timestamps do not fit in nanoseconds since the epoch is left alone.
    static let timeOutOfRange = "a timestamp is out of range (before 1677 or after 2262); kept, not judged"

    func report(_ rule: Int, _ path: RelativePath, _ message: String, _ worker: EvaluationResults) {
        worker.violations.append(Violation(rule: rules[rule].name, path: path, message: message,
                                           severity: rules[rule].rule.effectiveSeverity))
    }

    // MARK: Trash folders

    enum TrashRole { case folder, items, infos, inside, ignored }

    /// Where a directory with these components sits in rule's trash folder: the folder itself, the folder
    /// holding the items (the folder for the app layout, `files/` for FreeDesktop), FreeDesktop's `info/`,
    /// or inside an item.
    func trashRole(_ rule: CompiledRule, parentComponents components: ArraySlice<ArraySlice<UInt8>>) -> TrashRole {
        let depth = components.count - rule.scopeDepth
        if depth == 0 { return rule.trashLayout == .app ? .items : .folder }
        let top = components[components.startIndex + rule.scopeDepth]
        guard rule.trashLayout == .freedesktop else {
            guard top.elementsEqual(TrashFolder.indexName.bytes) else { return .inside }
            return depth == 1 ? .infos : .ignored
        }
        if depth == 1 {
            if top.elementsEqual("files".utf8) { return .items }
            if top.elementsEqual("info".utf8) { return .infos }
            return .ignored
        }
        return top.elementsEqual("files".utf8) ? .inside : .ignored
    }

    private func judgeTrashEntry(_ rule: CompiledRule, role: TrashRole, _ listing: DirectoryListing, _ i: Int,
                                 type: FileType, status: () -> FileStatus?, worker: EvaluationResults) {
        switch role {
        case .items:
            // Directories are recorded when they are visited, with their totals.
            guard type != .directory, rule.selects([], listing.nameBytes(i)), let s = status() else { return }
            worker.trashItems.append(makeTrashItem(rule, path: listing.path(of: i), name: listing.name(i), status: s,
                                                   stamp: { () throws(FileSystemError) -> [UInt8]? in try listing.extendedAttribute(Markers.trashStampAttribute, of: i) }))
        case .infos:
            let name = listing.nameBytes(i)
            let suffix = Array(".trashinfo".utf8)
            guard type == .regular, name.count > suffix.count, name.suffix(suffix.count).elementsEqual(suffix),
                  let s = status() else { return }
            let reading: TrashDates.Reading?
            do { reading = TrashDates.read(trashInfo: try listing.readPrefix(of: i, limit: 64 * 1024)) } catch { reading = nil }
            worker.trashInfos.append(TrashInfoFile(rule: rule.index, itemName: FileName(unchecked: Array(name.dropLast(suffix.count))),
                                                   path: listing.path(of: i), deletionDate: reading?.date,
                                                   problem: reading == nil ? "cannot be read" : reading!.problem,
                                                   identity: s.identity, bytes: s.bytesFreedByRemoval, userID: s.userID))
        case .inside:
            _ = status()
        case .folder, .ignored:
            return
        }
    }

    /// A trash item dated, for the app layout, by the stamp `policyctl trash` wrote, else by ctime (never
    /// mtime: a file keeps its old mtime when it is trashed). FreeDesktop items are dated after the walk.
    private func makeTrashItem(_ rule: CompiledRule, path: RelativePath, name: FileName, status: FileStatus,
                               stamp: () throws(FileSystemError) -> [UInt8]?) -> TrashItem {
        var trashedAt: Int64? = nil
        var source = "DeletionDate"
        var undated: String? = nil
        if rule.trashLayout == .app {
            let raw: [UInt8]?
            do { raw = try stamp() } catch { raw = nil }
            if let raw {
                if let t = TrashDates.stamp(raw) {
                    trashedAt = t
                    source = "trash stamp"
                } else {
                    undated = "its trash stamp (\(Markers.trashStampAttribute)) is not a time: '\(PathEscaping.escape(raw))'"
                }
            } else {
                trashedAt = status.changeTimeNs
                source = "ctime"
            }
        }
        let item = TrashItem(rule: rule.index, path: path, name: name, type: status.type, identity: status.identity,
                             trashedAt: trashedAt, dateSource: source, undated: undated,
                             bytes: status.bytesFreedByRemoval, entries: 1)
        item.userID = status.userID
        return item
    }

    // MARK: Backup markers

    private func checkMarker(_ rule: CompiledRule, path: RelativePath, identity: EntryIdentity?, type: FileType,
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
        guard current != backupMarker.value else { return }
        let what = current == nil ? "missing" : "has the wrong value"
        if rule.enforces {
            worker.actions.append(Action(kind: .setxattr(name: backupMarker.name, value: backupMarker.value), path: path,
                                         rule: rule.name, reason: "backup-exclusion marker \(what)",
                                         identity: identity, type: type))
        } else {
            report(rule.index, path, "backup-exclusion marker \(backupMarker.name) \(what)", worker)
        }
    }

    private func checkCacheTag(_ rule: CompiledRule, listing: DirectoryListing, worker: EvaluationResults) {
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

    // MARK: Names

    /// Naming rules over one directory: lowercase renames with Finder-style free names, case collisions,
    /// and pattern findings. Deterministic: candidates are taken in byte order of their names.
    private func judgeNames(_ listing: DirectoryListing, _ candidates: [(rule: Int, entry: Int)], worker: EvaluationResults) {
        // Most directories hold tens of names: a linear scan beats building a hash set for each of them. A
        // large one gets a set of its names, built once (on first use), so its cost stays linear in its size.
        var names: Set<[UInt8]>?
        func exists(_ name: [UInt8]) -> Bool {
            if listing.count > 32 {
                if names == nil { names = Set((0..<listing.count).map { Array(listing.nameBytes($0)) }) }
                return names!.contains(name)
            }
            for j in 0..<listing.count where listing.nameBytes(j).elementsEqual(name) { return true }
            return false
        }
        var byRule: [Int: [Int]] = [:]
        for c in candidates { byRule[c.rule, default: []].append(c.entry) }
        for ruleIndex in byRule.keys.sorted() {
            let rule = rules[ruleIndex]
            guard case .naming(let naming) = rule.rule.kind else { continue }
            var entries = byRule[ruleIndex]!
            // Free names are handed out in byte order of the names: sort only when something is renamed.
            if naming.letterCase == .lower,
               entries.contains(where: { i in listing.nameBytes(i).contains { $0 >= 0x41 && $0 <= 0x5A || $0 >= 0x80 } }) {
                entries.sort { ByteOrder.precedes(listing.nameBytes($0), listing.nameBytes($1)) }
            }
            var planned: Set<[UInt8]> = []
            // Lowercase forms of the names that have uppercase letters, with the entries that have them: any
            // case collision involves one of them. In order of first appearance, found by hashing.
            var changed: [(lower: [UInt8], members: [Int])] = []
            var changedIndex: [[UInt8]: Int] = [:]
            for i in entries {
                let name = listing.nameBytes(i)
                if naming.letterCase == .lower {
                    switch LowercaseForm(name) {
                    case .notUTF8:
                        report(ruleIndex, listing.path(of: i), "name is not valid UTF-8: it cannot be lowercased", worker)
                        continue
                    case .unchanged:
                        break
                    case .changed(let lower):
                        if let k = changedIndex[lower] {
                            changed[k].members.append(i)
                        } else {
                            changedIndex[lower] = changed.count
                            changed.append((lower, [i]))
                        }
                        let target = NameRules.freeName(lower) { candidate in exists(candidate) || planned.contains(candidate) }
                        let targetPath = listing.path.appending(FileName(unchecked: target))
                        if let overlong = NameRules.overlong(target) {
                            // Never planned: the rename would fail with ENAMETOOLONG at apply.
                            report(ruleIndex, listing.path(of: i), "name has uppercase letters, but \(overlong); not renamed", worker)
                        } else if rule.enforces {
                            // No status (a mount point, vanished, unreadable): reported as skipped, never renamed.
                            guard let s = try? listing.status(i) else {
                                recordStatusFailure(listing, i, worker: worker)
                                continue
                            }
                            planned.insert(target)
                            worker.actions.append(Action(kind: .rename(to: targetPath), path: listing.path(of: i),
                                                         rule: rule.name, reason: "name has uppercase letters",
                                                         identity: s.identity, type: listing.type(i)))
                        } else {
                            planned.insert(target)
                            report(ruleIndex, listing.path(of: i),
                                   "name has uppercase letters (would be renamed to '\(PathEscaping.escape(target))')", worker)
                        }
                    }
                }
                if let text = rule.pattern, let pattern = worker.pattern(for: rule) {
                    if let name = String(validating: name, as: UTF8.self) {
                        if (try? pattern.wholeMatch(in: name)) == nil {
                            report(ruleIndex, listing.path(of: i), "name does not match pattern '\(text)'", worker)
                        }
                    } else if naming.letterCase != .lower {
                        report(ruleIndex, listing.path(of: i), "name is not valid UTF-8: it cannot match pattern '\(text)'", worker)
                    }
                }
            }
            guard !changed.isEmpty else { continue }
            // A lowercase name joins the group of the uppercase names that lower to it.
            for i in entries {
                let name = listing.nameBytes(i)
                // Only a name without uppercase letters can be another's lowercase form.
                if name.contains(where: { $0 >= 0x41 && $0 <= 0x5A }) { continue }
                if let k = changedIndex[Array(name)] { changed[k].members.append(i) }
            }
            for group in changed where group.members.count > 1 {
                for i in group.members {
                    let others = group.members.filter { $0 != i }.map { "'\(PathEscaping.escape(Array(listing.nameBytes($0))))'" }
                    report(ruleIndex, listing.path(of: i),
                           "differs only by case from \(others.joined(separator: ", ")): they collide on case-insensitive file systems",
                           worker)
                }
            }
        }
    }

    // MARK: Finishing a directory

    func couldNotEnter(_ path: RelativePath, because reason: WalkSkipReason, parent: EvaluatedDirectory,
                       worker: EvaluationResults) {
        worker.skipped.append(SkippedEntry(path: path, reason: reason.description))
        if parent.unitBy != nil { parent.aggregate.withLock { $0.undatable = true } }
    }

    /// Bottom-up: a directory that was expired and ended up with every entry deleted becomes one delete
    /// covering its contents; otherwise the deletions held inside it are released.
    func finished(_ directory: EvaluatedDirectory, worker: EvaluationResults) {
        let aggregate = directory.aggregate.withLock { a in
            let copy = a
            a.held = []
            return copy
        }
        let total = directory.status.bytesFreedByRemoval + aggregate.bytes
        let entries = 1 + aggregate.entries
        if let item = directory.trashItem {
            item.bytes = total
            item.entries = entries
        }
        var action: Action? = nil
        var wouldGo = false
        let newest = DirectoryUnits.newest(directory, aggregate)
        if let unit = directory.unit, !unit.quotas.isEmpty {
            // Quota units are weighed after the walk, against everything else the quota counts.
            worker.quotaUnits.append(QuotaUnitRecord(rules: unit.quotas, path: directory.path, identity: directory.status.identity,
                                                     entries: entries, newest: newest))
        }
        if let unit = directory.unit?.expiring, unit.expire.keep > 0, directory.deletion == nil {
            // Whether it goes depends on its siblings' dates: settled after the walk, with what it holds.
            var pending = PendingUnit(rule: unit.rule, scope: directory.path.parent, name: directory.path.lastComponent?.bytes ?? [],
                                      newest: newest, action: nil, finding: nil, held: aggregate.held)
            if let newest, Ages.isOlder(newest, than: unit.expire.after, now: now) {
                let reason = DirectoryUnits.reason(unit, newest: newest, now: now)
                if unit.enforces {
                    pending.action = Action(kind: .delete, path: directory.path, rule: rules[unit.rule].name, reason: reason,
                                            bytes: total, identity: directory.status.identity, type: .directory, entries: entries)
                } else {
                    pending.finding = "\(reason): would be deleted with its \(entries - 1) entries"
                }
            }
            worker.pendingUnits.append(pending)
        } else if let unit = directory.unit?.expiring, unit.expire.keep == 0, let newest, Ages.isOlder(newest, than: unit.expire.after, now: now) {
            let reason = DirectoryUnits.reason(unit, newest: newest, now: now)
            if unit.enforces {
                action = Action(kind: .delete, path: directory.path, rule: rules[unit.rule].name, reason: reason,
                                bytes: total, identity: directory.status.identity, type: .directory, entries: entries)
            } else {
                worker.actions.append(contentsOf: aggregate.held)
                report(unit.rule, directory.path, "\(reason): would be deleted with its \(entries - 1) entries", worker)
            }
            wouldGo = true
        } else if directory.unit == nil, directory.unitBy != nil, directory.parent?.holdsDeletions == true {
            // Inside a unit: what this folder held is the enclosing unit's to delete or release.
            directory.parent!.aggregate.withLock { $0.held += aggregate.held }
        } else if directory.unit != nil, directory.deletion == nil {
            worker.actions.append(contentsOf: aggregate.held)
        } else if let deletion = directory.deletion, aggregate.remaining == 0 {
            let what = aggregate.entries == 0 ? "empty" : "everything in it is deleted"
            action = Action(kind: .delete, path: directory.path, rule: rules[deletion.rule].name,
                            reason: "\(deletion.reason); \(what)", bytes: total,
                            identity: directory.status.identity, type: .directory, entries: entries)
            wouldGo = true
        } else {
            worker.actions.append(contentsOf: aggregate.held)
            if !directory.auditDeletions.isEmpty && aggregate.remainingAny == 0 {
                wouldGo = true
                for verdict in directory.auditDeletions {
                    report(verdict.rule, directory.path, "\(verdict.reason): would be deleted with its \(entries - 1) entries", worker)
                }
            }
        }
        guard let parent = directory.parent else { return }
        let emitted = parent.aggregate.withLock { p -> Bool in
            p.bytes += total
            p.entries += aggregate.entries
            if parent.unitBy != nil {
                if let newest { p.newest = max(p.newest, newest) } else { p.undatable = true }
            }
            if action != nil { p.remaining -= 1 }
            if wouldGo { p.remainingAny -= 1 }
            if let action, parent.holdsDeletions {
                p.held.append(action)
                return false
            }
            return true
        }
        if emitted, let action { worker.actions.append(action) }
    }
}

/// Reports walk progress now and then, from whichever thread gets there, one caller at a time.
final class ProgressReporter: Sendable {
    private let callback: @Sendable (Int, RelativePath) -> Void
    private let seen = Atomic<Int>(0)
    private let gate = Mutex<Void>(())

    init(_ callback: @escaping @Sendable (Int, RelativePath) -> Void) { self.callback = callback }

    func advance(by count: Int, in path: RelativePath) {
        let total = seen.add(count, ordering: .relaxed).newValue
        guard total / 2048 != (total - count) / 2048 else { return }
        gate.withLockIfAvailable { _ in callback(total, path) }
    }
}
