// Semantic checks over a decoded policy: duplicate names, globs that can never match, scopes that fight.
// Reads only the model; errors make the policy invalid, warnings are shown and the policy still loads.

@_spi(Layers) import StoragePolicyFileSystem

package struct PolicyValidator {
    package let file: String
    package private(set) var diagnostics: [Diagnostic] = []

    package init(file: String) { self.file = file }

    private mutating func report(_ severity: Diagnostic.Severity, _ at: PolicyLocation?, _ message: String) {
        diagnostics.append(Diagnostic(severity: severity, location: at, message: message))
    }

    package mutating func validate(_ policy: Policy) {
        var firstByName: [String: Rule] = [:]
        for rule in policy.rules {
            if let first = firstByName[rule.name] {
                let at = first.location.map { " (first defined at \($0.line):\($0.column))" } ?? ""
                report(.error, rule.location, "duplicate rule name '\(rule.name)'\(at); rule names identify findings and journal entries")
            } else {
                firstByName[rule.name] = rule
            }
            validateGlobs(rule)
            // The kind's own checks (Kinds/<Kind>Syntax.swift).
            rule.kind.syntax.validate(rule, in: policy, label: "rule '\(rule.name)'") { report($0, rule.location, $1) }
        }
        diagnostics += RetentionChecks.checkUnits(policy)
        diagnostics += PressureChecks.validate(policy)
        diagnostics += RootChecks.validate(policy)
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
        for glob in rule.match + rule.kind.syntax.selectingGlobs where rule.path.isRoot && glob.isLiteral {
            if let p = RelativePath(glob.pattern), p.hasPrefix(state) {
                report(.error, rule.location, "\(label): '\(glob.pattern)' is inside '.policyctl', which is never scanned")
            }
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
            let ga = a.match + a.kind.syntax.selectingGlobs, gb = b.match + b.kind.syntax.selectingGlobs
            // Not with case: insensitive, where '*.txt' and '*.TXT' select the same entries.
            if !ga.isEmpty, !gb.isEmpty, !a.filters.caseInsensitive, !b.filters.caseInsensitive,
               ga.allSatisfy({ x in gb.allSatisfy { x.isDisjoint(from: $0) } }) {
                return false
            }
            return true
        }
        /// What an enforcing rule does to the entries it removes (its kind's words); nil when it removes none.
        func removal(_ r: Rule) -> (verb: String, outcome: String)? { r.mode == .enforce ? r.kind.syntax.removal : nil }
        func renames(_ r: Rule) -> Bool { r.mode == .enforce && r.kind.syntax.renames }
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
            // Each kind says what its removals are: moved to the trash, or deleted.
            if renames(a), let removed = removal(b) {
                report(.warning, a.location, "rule '\(a.name)' renames inside '\(shown(b.path))', where rule '\(b.name)' \(removed.verb); an entry both would touch is \(removed.outcome), not renamed")
            } else if renames(b), let removed = removal(a) {
                report(.warning, b.location, "rule '\(b.name)' renames inside '\(shown(a.path))', where rule '\(a.name)' \(removed.verb); an entry both would touch is \(removed.outcome), not renamed")
            }
            if a.kind.keyword == b.kind.keyword, let warning = a.kind.syntaxType.nestedWarning(a.name, b.name) {
                report(.warning, b.location, warning)
            }
        }
    }
}
