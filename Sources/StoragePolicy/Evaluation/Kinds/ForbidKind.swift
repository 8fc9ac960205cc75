// forbid: entries matching a forbidden glob are moved into the first trash rule's folder under a free name, or
// reported. Never moves what is already in the trash, or what an earlier step deletes or moves.

/// The forbid rule kind.
struct ForbidKind: RuleKindBehavior {
    static let keyword = "forbid"
    static let resolvesAfterSettledDeletes = true
    let globs: [Glob]

    init(_ globs: [Glob]) { self.globs = globs }

    func makeJudge() -> EntryJudge { ForbidJudge() }

    func explain(_ entry: ExplainedEntry) -> [String] {
        let rule = entry.rule
        guard let glob = rule.forbiddenBy(entry.directory, entry.name) else {
            return ["not forbidden: matches none of \(rule.forbid.map { "'\($0.glob.pattern)'" }.joined(separator: ", "))"]
        }
        return ["forbidden (matches '\(glob.pattern)'): \(rule.enforces ? (entry.hasTrashFolder ? "moved to the trash" : "reported; the policy has no trash folder") : "reported")"]
    }

    func summary(of rule: Rule, scope: String) -> String {
        "Nothing under \(scope) matches \(globs.map { "'\($0.pattern)'" }.joined(separator: ", "))."
    }

    func help(for rule: Rule) -> String {
        rule.mode == .audit
            ? "Move the entries where they belong (private data to Application Support, caches to Caches); the rule only reports."
            : "`policyctl apply` moves them to the trash; move them where they belong, or adjust the rule."
    }

    /// Forbidden entries: moved into the trash folder under a free name, or reported.
    static func resolve(_ c: inout ResolutionContext) {
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
        for entry in c.forbidden.sorted(by: { ($0.path, $0.rule) < ($1.path, $1.rule) }) {
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

/// The walk's side of forbid rules: forbidden entries recorded, to be moved once the walk is done.
final class ForbidJudge: EntryJudge, @unchecked Sendable {
    override func judgeEntry(_ e: Evaluator, _ view: Evaluator.RuleView, _ listing: DirectoryListing, _ i: Int,
                             name: ArraySlice<UInt8>, type: FileType, status: inout EntryStatus, scratch: inout EntryScratch,
                             worker: EvaluationResults) {
        let rule = view.rule
        guard rule.admits(type), rule.selects(view.directory, name),
              let glob = rule.forbiddenBy(view.directory, name), let s = status.read(e, worker: worker) else { return }
        worker.forbidden.append(ForbiddenEntry(rule: view.index, path: listing.path(of: i), name: listing.name(i),
                                               glob: glob.pattern, type: type, identity: s.identity))
    }
}
