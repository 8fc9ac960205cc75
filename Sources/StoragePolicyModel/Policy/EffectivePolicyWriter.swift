// `validate --effective`: a policy, after `extends` is merged, written back as YAML that loads to the same
// rules, each preceded by a comment naming the file it came from. Every string is double-quoted, so a
// name or glob can never change the document's structure.

/// Writes a (merged) policy as YAML.
package enum EffectivePolicyWriter {
    /// The policy as YAML with a `# from FILE:LINE` comment on each rule and layout entry.
    package static func yaml(_ policy: Policy) -> String {
        var out = "# The effective policy: what '\(policy.name)' means after extends is merged.\n"
        out += "version: \(policy.version)\nname: \(quote(policy.name))\n"
        if let d = policy.description { out += "description: \(quote(d))\n" }
        switch policy.maxDelete {
        case .count(let n)?: out += "max-delete: \(n)\n"
        case .percent(let p, let floor)?: out += "max-delete: { percent: \(percent(p)), atLeast: \(floor) }\n"
        case nil: break
        }
        if let window = policy.quarantine { out += "quarantine: \(window)\n" }
        if policy.journal != Policy.JournalRetention() {
            out += "journal: { keep: \(policy.journal.keep), history: \(policy.journal.history.map { "\($0.bytes)B" } ?? "none") }\n"
        }
        if !policy.layout.isEmpty {
            out += "layout:\n"
            for entry in policy.layout {
                if let from = entry.location { out += "  # from \(origin(from))\n" }
                out += "  - path: \(quote(entry.path.string))\n"
                if entry.excludeFromBackup { out += "    backup: exclude\n" }
                if entry.includeInBackup { out += "    backup: include\n" }
                if entry.cacheDirectoryTag { out += "    cacheTag: true\n" }
                if entry.type != .directory { out += "    type: \(entry.type.rawValue)\n" }
                if let t = entry.target { out += "    target: \(quote(String(decoding: t, as: UTF8.self)))\n" }
                if !entry.content.isEmpty { out += "    content: \(quote(String(decoding: entry.content, as: UTF8.self)))\n" }
                if let m = entry.mode { out += "    mode: \"\(LayoutEntry.octal(m))\"\n" }
                if let o = entry.owner { out += "    owner: \(o.name.map(quote) ?? String(o.id))\n" }
                if let g = entry.group { out += "    group: \(g.name.map(quote) ?? String(g.id))\n" }
                if entry.fix { out += "    fix: true\n" }
            }
        }
        let rules = policy.rules + policy.discoveringTrash
        out += rules.isEmpty ? "rules: []\n" : "rules:\n"
        for rule in rules {
            out += "  # from \(rule.location.map(origin) ?? "code")\n"
            out += "  - name: \(quote(rule.name))\n"
            // A discovering trash rule has no path of its own: each trash folder found is its root.
            if !rule.discovers { out += "    path: \(quote(rule.path.isRoot ? "." : rule.path.string))\n" }
            if !rule.match.isEmpty { out += "    match: \(list(rule.match.map(\.pattern)))\n" }
            if !rule.exclude.isEmpty { out += "    exclude: \(list(rule.exclude.map(\.pattern)))\n" }
            if let t = rule.type { out += "    type: \(t.rawValue)\n" }
            out += rule.filters.effectiveYAML
            if rule.mode != .enforce { out += "    mode: \(rule.mode.rawValue)\n" }
            if let s = rule.severity { out += "    severity: \(s.rawValue)\n" }
            if rule.regenerable { out += "    regenerable: true\n" }
            if let q = rule.quarantine { out += "    quarantine: \(q)\n" }
            out += "    \(rule.kind.syntax.effectiveYAML)\n"
        }
        out += PressureChecks.effectiveYAML(policy)
        if !policy.roots.isEmpty {
            out += "roots:\n"
            for root in policy.roots {
                if let from = root.location { out += "  # from \(origin(from))\n" }
                out += "  - path: \(quote(root.path))\n    rules: \(list(root.rules))\n"
            }
        }
        return out
    }

    package static func origin(_ location: PolicyLocation) -> String { "\(location.file):\(location.line)" }

    package static func percent(_ p: Double) -> String { p == p.rounded() ? "\(Int(p))%" : "\(p)%" }

    static func list(_ items: [String]) -> String { "[" + items.map(quote).joined(separator: ", ") + "]" }

    /// A YAML double-quoted scalar: backslash, quote and every control character escaped.
    package static func quote(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029 {
                    let hex = String(scalar.value, radix: 16, uppercase: true)
                    out += scalar.value <= 0xFF ? "\\x" + String(repeating: "0", count: 2 - hex.count) + hex
                                                : "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
