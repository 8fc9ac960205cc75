// naming: names with uppercase letters are renamed to their lowercase form (a free numbered one when taken),
// names not matching `pattern` are reported. Decided per directory during the walk; a pattern is never fixed.
// Its language side (settings, YAML, checks, `Rule.naming`) is Policy/Kinds/NamingSyntax.swift.

@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyModel
@_spi(Layers) import StoragePolicyPlan

/// The naming rule kind.
package struct NamingKind: RuleKindBehavior {
    package static let keyword = NamingSyntax.keyword
    let naming: Naming

    package init(_ naming: Naming) { self.naming = naming }

    package func makeJudge() -> any EntryJudge { NamingJudge(naming) }

    /// A pattern that is not a regular expression checks nothing: said before the walk, as an error.
    package func compileProblem(_ rule: CompiledRule) -> String? {
        guard let pattern = naming.pattern, NamingJudge.of(rule).pattern == nil else { return nil }
        return "pattern '\(pattern)' is not a valid regular expression; names were not checked"
    }

    /// A naming rule with `case: lower` renames what it selects to its lowercase name (or a numbered free form)
    /// in the same directory; patterns rename nothing.
    package func planProblem(_ action: Action, _ rule: CompiledRule, _ plan: PlanValidation, now: Int64) -> String? {
        guard case .rename(let to) = action.kind else { return plan.refusal(action, rule) }
        let path = action.path
        if let why = plan.structureProblem(path) { return why }
        let style = NameStyle(naming: naming)
        guard style.renames else { return "rule '\(rule.name)' only reports names; it renames nothing" }
        if let why = plan.selection(action, rule) { return why }
        guard to.parent == path.parent, let name = path.lastComponent, let target = to.lastComponent else {
            return "a naming rule renames within the same directory"
        }
        guard case .changed(let lower) = style.form(name.bytes[...]) else {
            return style.isLowercaseOnly ? "the name has no uppercase letters to lowercase" : "the name is already \(style.description)"
        }
        if naming.onCollision == .report && target.bytes != lower {
            return "the naming rule renames it to '\(PathEscaping.escape(lower))' only (onCollision: report), not '\(target.escaped)'"
        }
        guard NameRules.isFreeForm(target.bytes, of: lower) else {
            return "the naming rule renames it to '\(PathEscaping.escape(lower))' (or a numbered free form), not '\(target.escaped)'"
        }
        return target.bytes.count <= NameRules.nameMax ? nil : "its target name is longer than \(NameRules.nameMax) bytes"
    }

    package func explain(_ entry: ExplainedEntry) -> [String] {
        let name = entry.name
        var findings: [String] = []
        let style = NameStyle(naming: naming)
        if style.renames && !style.isLowercaseOnly {
            switch style.form(name[...]) {
            case .unchanged: findings.append("name is \(style.description)")
            case .changed(let target):
                findings.append("\(style.reason): rename to '\(PathEscaping.escape(target))'\(naming.onCollision == .report ? " (reported instead when taken)" : " or a free numbered form")\(entry.consequence)")
            case .notUTF8: findings.append("name is not valid UTF-8: it cannot be restyled")
            }
        }
        if style.isLowercaseOnly {
            if let lower = NameRules.lowercased(name) {
                findings.append(lower.elementsEqual(name) ? "name is lowercase" : "name has uppercase letters: rename to '\(PathEscaping.escape(lower))' or a free numbered form\(entry.consequence)")
            } else {
                findings.append("name is not valid UTF-8: it cannot be lowercased")
            }
        }
        if let text = naming.pattern {
            if let compiled = try? Regex(text, as: Substring.self), let n = String(validating: name, as: UTF8.self) {
                findings.append((try? compiled.wholeMatch(in: n)) != nil ? "name matches pattern '\(text)'" : "name does not match pattern '\(text)'")
            } else {
                findings.append("name cannot be checked against pattern '\(text)'")
            }
        }
        return findings
    }

    package func summary(of rule: Rule, scope: String) -> String {
        var parts: [String] = []
        let style = NameStyle(naming: naming)
        if style.isLowercaseOnly { parts.append("are lowercase") } else if style.renames { parts.append("are \(style.description)") }
        if let p = naming.pattern { parts.append("match /\(p)/") }
        return "Names under \(scope) \(parts.joined(separator: " and "))."
    }

    package func help(for rule: Rule) -> String {
        naming.renames
            ? "`policyctl apply` renames them (Finder-style `name (2).ext` when the target is taken); rename them, or adjust the rule."
            : "Rename the entries so they match the pattern; patterns are reported, never fixed automatically."
    }
}

/// The walk's side of naming rules: selected entries are gathered, then judged with their siblings' names.
package final class NamingJudge: EntryJudge {
    let naming: Naming
    /// The pattern, when it is a valid regular expression. Regex values are not Sendable, so each thread
    /// compiles its own copy (NamingPatterns).
    package let pattern: String?

    package init(_ naming: Naming) {
        self.naming = naming
        if let text = naming.pattern, (try? Regex(text, as: Substring.self)) != nil { pattern = text } else { pattern = nil }
    }

    /// The judge of a compiled naming rule (the judge its kind made for it).
    package static func of(_ rule: CompiledRule) -> NamingJudge { rule.judge as! NamingJudge }

    package func judgeEntry(_ e: Evaluator, _ view: Evaluator.RuleView, _ listing: DirectoryListing, _ i: Int,
                             name: ArraySlice<UInt8>, type: FileType, status: inout EntryStatus, scratch: inout EntryScratch,
                             worker: EvaluationResults) {
        if view.rule.admits(type), view.rule.selects(view.directory, name) { scratch.gathered.append((view.index, i)) }
    }

    /// One naming rule over one directory: lowercase renames with Finder-style free names, case collisions,
    /// and pattern findings. Deterministic: candidates are taken in byte order of their names.
    package func judgeGathered(_ e: Evaluator, _ rule: CompiledRule, _ listing: DirectoryListing, _ entries: [Int],
                                worker: EvaluationResults) {
        // Most directories hold tens of names: a linear scan beats building a hash set for each of them. A
        // large one gets a set of its names, built once (on first use), so its cost stays linear in its size.
        // Names are hashed as PathKeys: their bytes in one piece, the listing's own bytes (no copy per name);
        // a [UInt8] key hashed byte by byte and was copied out of the listing.
        var names: Set<PathKey>?
        func exists(_ name: [UInt8]) -> Bool {
            if listing.count > 32 {
                if names == nil {
                    var all = Set<PathKey>(minimumCapacity: listing.count)
                    for j in 0..<listing.count { all.insert(PathKey(listing.nameBytes(j))) }
                    names = all
                }
                return names!.contains(PathKey(name[...]))
            }
            for j in 0..<listing.count where listing.nameBytes(j).elementsEqual(name) { return true }
            return false
        }
        let ruleIndex = rule.index
        let naming = self.naming
        let style = NameStyle(naming: naming)
        let pattern = self.pattern.flatMap { worker.records(NamingPatterns.self).compiled($0, for: ruleIndex) }
        var entries = entries
        // Free names are handed out in byte order of the names: sort only when something is renamed.
        if style.isLowercaseOnly ? entries.contains(where: { i in listing.nameBytes(i).contains { $0 >= 0x41 && $0 <= 0x5A || $0 >= 0x80 } })
            : style.renames {
            entries = listing.sortedByName(entries)
        }
        var planned: Set<PathKey> = []
        // Lowercase forms of the names that have uppercase letters, with the entries that have them: any
        // case collision involves one of them. In order of first appearance, found by hashing.
        var changed: [(lower: [UInt8], members: [Int])] = []
        var changedIndex: [PathKey: Int] = [:]
        for i in entries {
            let name = listing.nameBytes(i)
            if style.renames {
                switch style.form(name) {
                case .notUTF8:
                    e.report(ruleIndex, listing.path(of: i), "name is not valid UTF-8: it cannot be \(style.isLowercaseOnly ? "lowercased" : "restyled")", worker)
                    continue
                case .unchanged:
                    break
                case .changed(let lower):
                    if changed.isEmpty && planned.isEmpty {
                        // Sized once for the folder: growing them step by step rehashed every name so far.
                        changedIndex.reserveCapacity(entries.count)
                        planned.reserveCapacity(entries.count)
                    }
                    // Case collisions are lowercase's own finding; other styles only number (or report) a taken name.
                    if style.isLowercaseOnly, let k = changedIndex[PathKey(lower[...])] {
                        changed[k].members.append(i)
                    } else if style.isLowercaseOnly {
                        changedIndex[PathKey(lower[...])] = changed.count
                        changed.append((lower, [i]))
                    }
                    if naming.onCollision == .report, exists(lower) || planned.contains(PathKey(lower[...])) {
                        e.report(ruleIndex, listing.path(of: i),
                                 "\(style.reason), but '\(PathEscaping.escape(lower))' is taken (onCollision: report); not renamed", worker)
                        continue
                    }
                    let target = NameRules.freeName(lower) { candidate in exists(candidate) || planned.contains(PathKey(candidate[...])) }
                    let targetPath = listing.path.appending(FileName(unchecked: target))
                    if let overlong = NameRules.overlong(target) {
                        // Never planned: the rename would fail with ENAMETOOLONG at apply.
                        e.report(ruleIndex, listing.path(of: i), "\(style.reason), but \(overlong); not renamed", worker)
                    } else if rule.enforces {
                        // No status (a mount point, vanished, unreadable): reported as skipped, never renamed.
                        guard let s = try? listing.status(i) else {
                            e.recordStatusFailure(listing, i, worker: worker)
                            continue
                        }
                        planned.insert(PathKey(target[...]))
                        worker.actions.append(Action(kind: .rename(to: targetPath), path: listing.path(of: i),
                                                     rule: rule.name, reason: style.reason,
                                                     identity: s.identity, type: listing.type(i)))
                    } else {
                        planned.insert(PathKey(target[...]))
                        e.report(ruleIndex, listing.path(of: i),
                               "\(style.reason) (would be renamed to '\(PathEscaping.escape(target))')", worker)
                    }
                }
            }
            if let text = self.pattern, let pattern {
                if let name = String(validating: name, as: UTF8.self) {
                    if (try? pattern.wholeMatch(in: name)) == nil {
                        e.report(ruleIndex, listing.path(of: i), "name does not match pattern '\(text)'", worker)
                    }
                } else if !style.renames {
                    e.report(ruleIndex, listing.path(of: i), "name is not valid UTF-8: it cannot match pattern '\(text)'", worker)
                }
            }
        }
        guard !changed.isEmpty else { return }
        // A lowercase name joins the group of the uppercase names that lower to it.
        for i in entries {
            let name = listing.nameBytes(i)
            // Only a name without uppercase letters can be another's lowercase form.
            if name.contains(where: { $0 >= 0x41 && $0 <= 0x5A }) { continue }
            if let k = changedIndex[PathKey(name)] { changed[k].members.append(i) }
        }
        for group in changed where group.members.count > 1 {
            for i in group.members {
                let others = group.members.filter { $0 != i }.map { "'\(PathEscaping.escape(Array(listing.nameBytes($0))))'" }
                e.report(ruleIndex, listing.path(of: i),
                       "differs only by case from \(others.joined(separator: ", ")): they collide on case-insensitive file systems",
                       worker)
            }
        }
    }
}

/// One thread's compiled naming patterns, by rule number.
package final class NamingPatterns: KindRecords {
    private var patterns: [Int: Regex<Substring>] = [:]
    package init() {}

    /// This thread's compiled copy of rule `rule`'s pattern `text`.
    package func compiled(_ text: String, for rule: Int) -> Regex<Substring>? {
        if let compiled = patterns[rule] { return compiled }
        guard let compiled = try? Regex(text, as: Substring.self) else { return nil }
        patterns[rule] = compiled
        return compiled
    }
}
