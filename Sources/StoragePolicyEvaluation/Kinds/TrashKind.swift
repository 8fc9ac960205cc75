// trash: the items of a trash folder, dated (FreeDesktop: by info/NAME.trashinfo; app: by the trash stamp or the
// index policyctl trash wrote), deleted once kept longer than `retain`, then down to `maxSize`. Never dates an item
// by its mtime, and never trusts an index entry written by anyone but root or the item's owner.

@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyModel
@_spi(Layers) import StoragePolicyPlan

/// The trash rule kind.
package struct TrashKind: RuleKindBehavior {
    package static let keyword = TrashSyntax.keyword
    let retention: TrashRetention

    package init(_ retention: TrashRetention) { self.retention = retention }

    package func makeJudge() -> any EntryJudge { TrashJudge() }

    /// A trash rule deletes the items of its folder (and their .trashinfo files).
    package func planProblem(_ action: Action, _ rule: CompiledRule, _ plan: PlanValidation, now: Int64) -> String? {
        guard case .delete = action.kind else { return plan.refusal(action, rule) }
        if let why = plan.structureProblem(action.path) { return why }
        guard let relative = action.path.relative(to: rule.rule.path), !relative.isRoot else { return plan.outside(rule) }
        let parts = relative.components
        let top = parts[0].bytes
        let suffix = Array(".trashinfo".utf8)
        if retention.layout != .freedesktop, parts.count == 1, rule.selects([], top[...]) { return nil }
        if retention.layout != .app, parts.count == 2 {
            let name = parts[1].bytes
            if top == Array("files".utf8), rule.selects([], name[...]) { return nil }
            if top == Array("info".utf8), action.type == .regular, name.count > suffix.count,
               name.suffix(suffix.count).elementsEqual(suffix), rule.selects([], name.dropLast(suffix.count)) {
                return nil
            }
        }
        return "a trash rule deletes only items of its trash folder \(plan.scopeText(rule)) (and their .trashinfo files)"
    }

    package func explain(_ entry: ExplainedEntry) -> [String] {
        let layout = entry.rule.trashLayout
        let depth = entry.directory.count
        let isItem = layout == .app ? depth == 0 : (depth == 1 && entry.directory.first!.elementsEqual("files".utf8))
        let dating = layout == .app ? "dated by its trash stamp, else ctime" : "dated by info/NAME.trashinfo"
        let retain = Ages.human(seconds: retention.retain.seconds, units: 4)
        // Only a regenerable trash's items can be taken sooner, by a pressure rule naming it (PressureKinds).
        let pressure = entry.rule.rule.regenerable
            ? "; regenerable: a pressure rule naming this rule may evict it sooner, trashed longest ago first"
                + (retention.minAge.map { ", never one trashed less than \($0) ago (minAge)" } ?? "")
            : ""
        return [isItem
            ? "a trash item (\(dating)): deleted once trashed more than \(retain) ago\(pressure)\(entry.consequence)"
            : "inside the trash folder but not an item itself: goes with its item"]
    }

    package func summary(of rule: Rule, scope: String) -> String {
        "Items in the trash \(scope) are kept for \(retention.retain) after they were trashed."
    }

    package func help(for rule: Rule) -> String {
        "Items trashed longer ago are deleted by `policyctl apply`; empty the trash, or adjust `retain`."
    }

    /// Retention over every recorded item, then each folder's maxSize, then orphaned `.trashinfo` files.
    package static func resolve(_ c: inout ResolutionContext) {
        let now = c.now
        let infos = Dictionary(c.trashInfos.map { (InfoKey(rule: $0.rule, name: $0.itemName), $0) }, uniquingKeysWith: { a, _ in a })
        var listed: [Int: Set<FileName>] = [:]
        for l in c.trashListings { listed[l.rule, default: []].formUnion(l.names) }
        var sizeCap = TrashSizeCap()
        for item in c.trashItems.sorted(by: { $0.path < $1.path }) {
            let rule = c.rules[item.rule]
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
                c.report(item.rule, item.path, "cannot tell when it was trashed: \(undated ?? "no date"); kept")
                sizeCap.hold(item)
                continue
            }
            guard !now.subtractingReportingOverflow(trashedAt).overflow else {
                c.report(item.rule, item.path, "cannot tell when it was trashed: its date (\(source)) is out of range; kept")
                sizeCap.hold(item)
                continue
            }
            guard Ages.isOlder(trashedAt, than: retention.retain, now: now) else {
                sizeCap.keep(item, trashedAt: trashedAt, info: info, source: source)
                continue
            }
            let reason = Ages.describe("trashed (\(source))", trashedAt, limit: retention.retain, now: now)
            if rule.enforces {
                c.actions.append(Action(kind: .delete, path: item.path, rule: rule.name, reason: reason, bytes: item.bytes,
                                        identity: item.identity, type: item.type, entries: item.entries))
                if let info {
                    c.actions.append(Action(kind: .delete, path: info.path, rule: rule.name,
                                            reason: "the .trashinfo of a deleted item", bytes: info.bytes,
                                            identity: info.identity, type: .regular))
                }
            } else {
                c.report(item.rule, item.path, "\(reason): would be deleted")
            }
        }
        let evictions = sizeCap.evictions(c.rules, now: now) { c.report($0, $1, $2) }
        c.actions += evictions
        // The items kept so far, for the pressure rules that name this trash (PressureEviction).
        if c.space != nil {
            for rule in c.rules where rule.pressureNamed {
                if case .trash(let retention) = rule.rule.kind {
                    c.trashPressure[rule.index] = sizeCap.pressureCandidates(rule.index, retention.eviction)
                }
            }
        }
        // Orphans: a .trashinfo (or app index entry) whose item is gone goes once it is older than `retain`,
        // as trash-cli does; one without a readable date is kept and reported. Only where the items folder
        // was listed whole: an unreadable files/ makes nothing an orphan.
        for info in c.trashInfos.sorted(by: { $0.path < $1.path }) {
            let rule = c.rules[info.rule]
            guard case .trash(let retention) = rule.rule.kind, let names = listed[info.rule],
                  !names.contains(info.itemName), rule.selects([], info.itemName.bytes[...]) else { continue }
            let what = rule.trashLayout == .freedesktop
                ? "an orphaned .trashinfo (there is no files/\(info.itemName.escaped))"
                : "an orphaned trash index entry (there is no \(info.itemName.escaped))"
            guard let date = info.deletionDate, !now.subtractingReportingOverflow(date).overflow else {
                c.report(info.rule, info.path, "\(what) \(info.problem ?? "has a DeletionDate out of range"); kept")
                continue
            }
            guard Ages.isOlder(date, than: retention.retain, now: now) else { continue }
            let reason = Ages.describe("\(what): trashed (DeletionDate)", date, limit: retention.retain, now: now)
            if rule.enforces {
                c.actions.append(Action(kind: .delete, path: info.path, rule: rule.name, reason: reason, bytes: info.bytes,
                                        identity: info.identity, type: .regular))
            } else {
                c.report(info.rule, info.path, "\(reason): would be deleted")
            }
        }
    }

    private struct InfoKey: Hashable {
        var rule: Int
        var name: FileName
    }
}

/// The walk's side of trash rules: items recorded with their dates, `.trashinfo` files read.
package final class TrashJudge: EntryJudge {
    /// Every item in the folder is looked at, however deep.
    package func needsBelow(_ rule: CompiledRule, _ directory: ArraySlice<ArraySlice<UInt8>>, _ name: ArraySlice<UInt8>) -> Bool {
        true
    }

    package func prepare(_ e: Evaluator, _ rule: CompiledRule, _ listing: DirectoryListing,
                          worker: EvaluationResults) -> (role: Evaluator.TrashRole, measuresAll: Bool) {
        let role = e.trashRole(rule, parentComponents: listing.components[...])
        if role == .items {
            // Every name, judged or not (unreadable ones too): a .trashinfo is an orphan only when its
            // item is really absent, never because the item could not be stat'ed.
            worker.trashListings.append(TrashItemsListing(rule: rule.index, names: Set((0..<listing.count).map(listing.name))))
        }
        return (role, role == .items || role == .inside || (role == .folder && rule.trashLayout == .app))
    }

    package func judgeDirectory(_ e: Evaluator, _ rule: CompiledRule, directory: ArraySlice<ArraySlice<UInt8>>,
                                 _ d: inout DirectoryJudgement, worker: EvaluationResults) {
        let listing = d.listing
        guard !d.structural, e.trashRole(rule, parentComponents: listing.components.dropLast()) == .items,
              rule.selects([], d.name) else { return }
        // An app trash's index folder is its structure, never an item.
        if rule.trashLayout == .app && d.name.elementsEqual(TrashFolder.indexName.bytes) { return }
        let item = e.makeTrashItem(rule, path: listing.path, name: listing.path.lastComponent!, status: listing.directoryStatus,
                                   stamp: { () throws(FileSystemError) -> [UInt8]? in try listing.extendedAttribute(Markers.trashStampAttribute, of: nil) })
        d.trashItem = item
        worker.trashItems.append(item)
    }

    package func judgeEntry(_ e: Evaluator, _ view: Evaluator.RuleView, _ listing: DirectoryListing, _ i: Int,
                             name: ArraySlice<UInt8>, type: FileType, status: inout EntryStatus, scratch: inout EntryScratch,
                             worker: EvaluationResults) {
        e.judgeTrashEntry(view.rule, role: view.trashRole, listing, i, type: type, status: &status, worker: worker)
    }
}

extension Evaluator {
    package enum TrashRole { case folder, items, infos, inside, ignored }

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

    func judgeTrashEntry(_ rule: CompiledRule, role: TrashRole, _ listing: DirectoryListing, _ i: Int,
                                 type: FileType, status: inout EntryStatus, worker: EvaluationResults) {
        switch role {
        case .items:
            // Directories are recorded when they are visited, with their totals.
            guard type != .directory, rule.selects([], listing.nameBytes(i)), let s = status.read(self, worker: worker) else { return }
            worker.trashItems.append(makeTrashItem(rule, path: listing.path(of: i), name: listing.name(i), status: s,
                                                   stamp: { () throws(FileSystemError) -> [UInt8]? in try listing.extendedAttribute(Markers.trashStampAttribute, of: i) }))
        case .infos:
            let name = listing.nameBytes(i)
            let suffix = Array(".trashinfo".utf8)
            guard type == .regular, name.count > suffix.count, name.suffix(suffix.count).elementsEqual(suffix),
                  let s = status.read(self, worker: worker) else { return }
            let reading: TrashDates.Reading?
            do { reading = TrashDates.read(trashInfo: try listing.readPrefix(of: i, limit: 64 * 1024)) } catch { reading = nil }
            worker.trashInfos.append(TrashInfoFile(rule: rule.index, itemName: FileName(unchecked: Array(name.dropLast(suffix.count))),
                                                   path: listing.path(of: i), deletionDate: reading?.date,
                                                   problem: reading == nil ? "cannot be read" : reading!.problem,
                                                   identity: s.identity, bytes: s.bytesFreedByRemoval, userID: s.userID))
        case .inside:
            _ = status.read(self, worker: worker)
        case .folder, .ignored:
            return
        }
    }

    /// A trash item dated, for the app layout, by the stamp `policyctl trash` wrote, else by ctime (never
    /// mtime: a file keeps its old mtime when it is trashed). FreeDesktop items are dated after the walk.
    func makeTrashItem(_ rule: CompiledRule, path: RelativePath, name: FileName, status: FileStatus,
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
        item.accessTimeNs = status.accessTimeNs
        return item
    }

}
