// naming: names with uppercase letters are renamed to their lowercase form (a free numbered one when taken),
// names not matching `pattern` are reported. Decided per directory during the walk; a pattern is never fixed.

/// The naming rule kind.
struct NamingKind: RuleKindBehavior {
    static let keyword = "naming"
    let naming: Naming

    init(_ naming: Naming) { self.naming = naming }

    func explain(_ entry: ExplainedEntry) -> [String] {
        let name = entry.name
        var findings: [String] = []
        if naming.letterCase == .lower {
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

    func summary(of rule: Rule, scope: String) -> String {
        var parts: [String] = []
        if naming.letterCase == .lower { parts.append("are lowercase") }
        if let p = naming.pattern { parts.append("match /\(p)/") }
        return "Names under \(scope) \(parts.joined(separator: " and "))."
    }

    func help(for rule: Rule) -> String {
        naming.letterCase != nil
            ? "`policyctl apply` renames them (Finder-style `name (2).ext` when the target is taken); rename them, or adjust the rule."
            : "Rename the entries so they match the pattern; patterns are reported, never fixed automatically."
    }
}
