// Semantic checks over a decoded policy: duplicate names, globs that can never match, scopes that fight.
// Reads only the model; errors make the policy invalid, warnings are shown and the policy still loads.

struct PolicyValidator {
    let file: String
    private(set) var diagnostics: [Diagnostic] = []

    init(file: String) { self.file = file }

    private mutating func report(_ severity: Diagnostic.Severity, _ at: PolicyLocation?, _ message: String) {
        diagnostics.append(Diagnostic(severity: severity, location: at, message: message))
    }

    mutating func validate(_ policy: Policy) {
        var firstByName: [String: Rule] = [:]
        for rule in policy.rules {
            if let first = firstByName[rule.name] {
                let at = first.location.map { " (first defined at \($0.line):\($0.column))" } ?? ""
                report(.error, rule.location, "duplicate rule name '\(rule.name)'\(at); rule names identify findings and journal entries")
            } else {
                firstByName[rule.name] = rule
            }
            validateGlobs(rule)
            validateKind(rule, policy: policy)
        }
        diagnostics += RetentionChecks.checkUnits(policy)
        var layoutPaths: [RelativePath: LayoutEntry] = [:]
        for entry in policy.layout {
            if layoutPaths[entry.path] != nil {
                report(.warning, entry.location, "layout path '\(entry.path.escaped)' is listed twice")
            }
            layoutPaths[entry.path] = entry
        }
        validateOverlaps(policy.rules)
    }

    private mutating func validateGlobs(_ rule: Rule) {
        let label = "rule '\(rule.name)'"
        let excluded = Set(rule.exclude.map(\.pattern))
        for glob in rule.match where excluded.contains(glob.pattern) {
            report(.error, rule.location, "\(label): match '\(glob.pattern)' is also excluded, so it can never match")
        }
        if rule.exclude.contains(where: { $0.pattern == "**" || $0.pattern == "**/*" }) {
            report(.error, rule.location, "\(label): exclude '**' removes every entry, so the rule can never match")
        }
        let state = RelativePath([Markers.stateDirectory])
        for glob in rule.match + forbidGlobs(rule) where rule.path.isRoot && glob.isLiteral {
            if let p = RelativePath(glob.pattern), p.hasPrefix(state) {
                report(.error, rule.location, "\(label): '\(glob.pattern)' is inside '.policyctl', which is never scanned")
            }
        }
        if case .quota = rule.kind, let type = rule.type, type == .directory || type == .symlink {
            report(.error, rule.location, "\(label): quota counts regular files, so 'type: \(type.rawValue)' can never match")
        }
        if case .naming(let n) = rule.kind, n.pattern != nil, rule.type == .symlink {
            report(.warning, rule.location, "\(label): naming patterns on symlinks only check the link's own name")
        }
    }

    private func forbidGlobs(_ rule: Rule) -> [Glob] {
        if case .forbid(let globs) = rule.kind { return globs }
        return []
    }

    private mutating func validateKind(_ rule: Rule, policy: Policy) {
        let label = "rule '\(rule.name)'"
        switch rule.kind {
        case .expire(let e) where e.after.seconds == 0:
            report(.warning, rule.location, "\(label): 'after: 0s' expires everything in '\(rule.path.escaped)' at once")
        case .trash:
            if rule.path.isRoot {
                report(.error, rule.location, "\(label): the trash folder cannot be the root itself; name a folder such as Documents/UserFiles/.Trash")
            }
        case .forbid where rule.mode == .enforce && policy.trashFolder == nil:
            report(.warning, rule.location, "\(label): forbid in enforce mode moves entries to the trash, but the policy has no trash rule; they will only be reported")
        default:
            break
        }
    }

    /// Rules whose scopes nest and whose kinds pull in different directions.
    private mutating func validateOverlaps(_ rules: [Rule]) {
        func overlaps(_ a: Rule, _ b: Rule) -> Bool {
            guard a.path.hasPrefix(b.path) || b.path.hasPrefix(a.path) else { return false }
            // A nested scope the outer rule excludes cannot be fought over.
            let (outer, inner) = a.path.hasPrefix(b.path) ? (b, a) : (a, b)
            if let rel = inner.path.relative(to: outer.path), !rel.isRoot,
               outer.exclude.contains(where: { $0.matches(rel.appending(FileName(unchecked: [0x78]))) }) {
                return false
            }
            // Globs with different literal endings (`*.txt` vs `*.tmp`) never select the same entry.
            let ga = a.match + forbidGlobs(a), gb = b.match + forbidGlobs(b)
            if !ga.isEmpty, !gb.isEmpty, ga.allSatisfy({ x in gb.allSatisfy { x.isDisjoint(from: $0) } }) {
                return false
            }
            return true
        }
        func removes(_ r: Rule) -> Bool {
            switch r.kind {
            case .expire, .trash, .quota, .forbid: return r.mode == .enforce
            default: return false
            }
        }
        func renames(_ r: Rule) -> Bool {
            if case .naming(let n) = r.kind { return n.letterCase != nil && r.mode == .enforce }
            return false
        }
        func shown(_ p: RelativePath) -> String { p.isRoot ? "." : p.escaped }
        // Only rules whose scopes nest can fight: pair each rule with those at its own scope or an
        // ancestor's, found by path, so a policy with thousands of rules is not checked pair by pair.
        var byScope: [RelativePath: [Int]] = [:]
        for (i, r) in rules.enumerated() { byScope[r.path, default: []].append(i) }
        var pairs: [(Int, Int)] = []
        for (j, r) in rules.enumerated() {
            var scope = r.path
            while true {
                for i in byScope[scope] ?? [] where i < j || (scope != r.path && i > j) { pairs.append((min(i, j), max(i, j))) }
                if scope.isRoot { break }
                scope = scope.parent
            }
        }
        pairs.sort { $0 < $1 }
        for (i, k) in pairs {
            let a = rules[i], b = rules[k]
            guard overlaps(a, b) else { continue }
            // A forbid rule moves its entries to the trash rather than deleting them: the warning says which.
            func removal(_ r: Rule) -> (verb: String, outcome: String) {
                if case .forbid = r.kind { return ("moves entries to the trash", "moved to the trash") }
                return ("deletes", "deleted")
            }
            if renames(a), removes(b) {
                let (verb, outcome) = removal(b)
                report(.warning, a.location, "rule '\(a.name)' renames inside '\(shown(b.path))', where rule '\(b.name)' \(verb); an entry both would touch is \(outcome), not renamed")
            } else if renames(b), removes(a) {
                let (verb, outcome) = removal(a)
                report(.warning, b.location, "rule '\(b.name)' renames inside '\(shown(a.path))', where rule '\(a.name)' \(verb); an entry both would touch is \(outcome), not renamed")
            }
            if case .quota = a.kind, case .quota = b.kind {
                report(.warning, b.location, "rules '\(a.name)' and '\(b.name)' both set a quota on nested scopes; each evicts on its own count")
            }
            if case .trash = a.kind, case .trash = b.kind {
                report(.warning, b.location, "rules '\(a.name)' and '\(b.name)' are nested trash folders")
            }
        }
    }
}
