// forbid: entries matching a forbidden glob are moved into the first trash rule's folder under a free name, or
// reported. Never moves what is already in the trash, or what an earlier step deletes or moves. Its language side
// (YAML, checks, `Rule.forbid`) is Policy/Kinds/ForbidSyntax.swift.

@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyModel
@_spi(Layers) import StoragePolicyPlan

/// The forbid rule kind.
package struct ForbidKind: RuleKindBehavior {
    package static let keyword = ForbidSyntax.keyword
    package static let resolvesAfterSettledDeletes = true
    let globs: [Glob]

    package init(_ globs: [Glob]) { self.globs = globs }

    package func makeJudge() -> any EntryJudge { ForbidJudge(globs) }

    package func explain(_ entry: ExplainedEntry) -> [String] {
        let rule = entry.rule
        guard let glob = ForbidJudge.of(rule).forbiddenBy(rule, entry.directory, entry.name) else {
            return ["not forbidden: matches none of \(globs.map { "'\($0.pattern)'" }.joined(separator: ", "))"]
        }
        return ["forbidden (matches '\(glob.pattern)'): \(rule.enforces ? (entry.hasTrashFolder ? "moved to the trash" : "reported; the policy has no trash folder") : "reported")"]
    }

    package func summary(of rule: Rule, scope: String) -> String {
        "Nothing under \(scope) matches \(globs.map { "'\($0.pattern)'" }.joined(separator: ", "))."
    }

    package func help(for rule: Rule) -> String {
        rule.mode == .audit
            ? "Move the entries where they belong (private data to Application Support, caches to Caches); the rule only reports."
            : "`policyctl apply` moves them to the trash; move them where they belong, or adjust the rule."
    }

    /// A forbid rule plans the trash folder (mkdir) and moves of entries its globs match into it.
    package func planProblem(_ action: Action, _ rule: CompiledRule, _ plan: PlanValidation, now: Int64) -> String? {
        let path = action.path
        switch action.kind {
        case .mkdir:
            guard let folder = plan.policy.trashFolder else { return plan.refusal(action, rule) }
            let targets = [folder, folder.appending(FileName("files")!)]
            return targets.contains(where: { $0.hasPrefix(path) }) ? nil
                : "a forbid rule creates only the trash folder \(folder.escaped) and the directories leading to it"
        case .trash(let to):
            if let why = plan.structureProblem(path) { return why }
            if let why = plan.selection(action, rule) { return why }
            let (directory, name) = plan.components(path, rule)
            guard ForbidJudge.of(rule).forbiddenBy(rule, directory, name) != nil else { return "it matches none of the forbid globs of rule '\(rule.name)'" }
            guard let folder = plan.policy.trashFolder else { return "the policy has no trash folder to move it to" }
            if path.hasPrefix(folder) { return "it is already in the trash folder" }
            let layout = plan.policy.rules.lazy.compactMap { if case .trash(let t) = $0.kind { t.layout } else { nil } }.first ?? .automatic
            var targets: [RelativePath] = []
            if layout != .freedesktop { targets.append(folder) }
            if layout != .app { targets.append(folder.appending(FileName("files")!)) }
            // Apply reads `to` as the trash folder (and picks a free name there); the planner has also written
            // the item's path in the folder. Either way it must end in the policy's trash folder.
            if to == folder { return nil }
            guard targets.contains(to.parent), let moved = to.lastComponent, let original = path.lastComponent,
                  NameRules.isFreeForm(moved.bytes, of: original.bytes) else {
                return "forbidden entries go to the trash folder \(folder.escaped) under their own name (or a numbered form), not to \(to.escaped)"
            }
            return nil
        default:
            return plan.refusal(action, rule)
        }
    }

    /// Forbidden entries: moved into the trash folder under a free name, or reported.
    package static func resolve(_ c: inout ResolutionContext) {
        // Taken: the names in the folder, those a .trashinfo or index entry still describes, and (app layout)
        // the names of the folder's own structure.
        // PathKeys: a name's bytes hashed in one piece ([UInt8] hashed byte by byte, for every name in the folder).
        var taken = Set(c.folderNames.map { PathKey($0.bytes[...]) })
        let trashRule = c.firstTrashRule
        if let first = trashRule {
            for info in c.trashInfos where info.rule == first.index { taken.insert(PathKey(info.itemName.bytes[...])) }
            if first.trashLayout == .app {
                for name in [TrashFolder.indexName, TrashFolder.filesName, TrashFolder.infoName] { taken.insert(PathKey(name.bytes[...])) }
            }
        }
        var madeTrashFolder = false
        var previousForbidden: RelativePath? = nil
        let forbidden = c.records(ForbiddenEntries.self).flatMap(\.entries)
        for entry in forbidden.sorted(by: { ($0.path, $0.rule) < ($1.path, $1.rule) }) {
            let rule = c.rules[entry.rule]
            if entry.path == previousForbidden { continue }  // a later rule forbidding the same entry
            previousForbidden = entry.path
            if c.gone.isRemoved(entry.path) { continue }
            if let folder = trashRule?.rule.path, entry.path.hasPrefix(folder) {
                continue  // already in the trash
            }
            let what = "forbidden (matches '\(entry.glob)')"
            guard rule.enforces else {
                c.report(entry.rule, entry.path, what)
                continue
            }
            guard let trashTarget = c.trashTarget else {
                c.report(entry.rule, entry.path, "\(what); the policy has no trash folder to move it to")
                continue
            }
            if !madeTrashFolder {
                madeTrashFolder = true
                for path in c.missingTrashTarget {
                    c.actions.append(Action(kind: .mkdir, path: path, rule: rule.name, reason: "trash folder for forbidden entries"))
                }
            }
            let name = NameRules.freeName(entry.name.bytes) { taken.contains(PathKey($0[...])) }
            taken.insert(PathKey(name[...]))
            let move = Action(kind: .trash(to: trashTarget.appending(FileName(unchecked: name))), path: entry.path,
                              rule: rule.name, reason: what, identity: entry.identity, type: entry.type)
            c.actions.append(move)
            c.gone.recordMove(move)
        }
    }
}

/// An entry a forbid rule selected.
package struct ForbiddenEntry: Sendable {
    package var rule: Int
    package var path: RelativePath
    package var name: FileName
    var glob: String
    package var type: FileType
    package var identity: EntryIdentity?
}

/// One thread's forbidden entries, moved once the walk is done.
package final class ForbiddenEntries: KindRecords {
    @exclusivity(unchecked) package var entries: [ForbiddenEntry] = []
    package init() {}
}

/// The walk's side of forbid rules: forbidden entries recorded, to be moved once the walk is done.
package final class ForbidJudge: EntryJudge {
    let forbid: [PathMatcher]
    /// The same globs ignoring letter case, for a rule with `case: insensitive` (the judge is made before it
    /// knows its rule, so both are made: a handful of globs).
    let forbidFolded: [PathMatcher]

    package init(_ globs: [Glob]) {
        forbid = globs.map(PathMatcher.init)
        forbidFolded = globs.map { PathMatcher($0, foldsCase: true) }
    }

    /// The forbid globs as `rule` matches them.
    func matchers(_ rule: CompiledRule) -> [PathMatcher] { rule.rule.filters.caseInsensitive ? forbidFolded : forbid }

    /// The judge of a compiled forbid rule (the judge its kind made for it).
    package static func of(_ rule: CompiledRule) -> ForbidJudge { rule.judge as! ForbidJudge }

    /// The forbid glob `directory/name` matches, if any.
    func forbiddenBy(_ rule: CompiledRule, _ directory: ArraySlice<ArraySlice<UInt8>>, _ name: ArraySlice<UInt8>) -> Glob? {
        matchers(rule).first { $0.matches(directory, name) }?.glob
    }

    package func needsBelow(_ rule: CompiledRule, _ directory: ArraySlice<ArraySlice<UInt8>>, _ name: ArraySlice<UInt8>) -> Bool {
        rule.matchCouldMatchBelow(directory, name) && matchers(rule).contains { $0.couldMatchBelow(directory, name) }
    }

    package func judgeEntry(_ e: Evaluator, _ view: Evaluator.RuleView, _ listing: DirectoryListing, _ i: Int,
                             name: ArraySlice<UInt8>, type: FileType, status: inout EntryStatus, scratch: inout EntryScratch,
                             worker: EvaluationResults) {
        let rule = view.rule
        guard rule.admits(type), rule.selects(view.directory, name),
              let glob = forbiddenBy(rule, view.directory, name), let s = status.read(e, worker: worker) else { return }
        worker.records(ForbiddenEntries.self).entries.append(
            ForbiddenEntry(rule: view.index, path: listing.path(of: i), name: listing.name(i),
                           glob: glob.pattern, type: type, identity: s.identity))
    }
}
