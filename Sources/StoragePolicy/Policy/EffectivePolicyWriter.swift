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
        if !policy.layout.isEmpty {
            out += "layout:\n"
            for entry in policy.layout {
                if let from = entry.location { out += "  # from \(origin(from))\n" }
                out += "  - path: \(quote(entry.path.string))\n"
                if entry.excludeFromBackup { out += "    backup: exclude\n" }
                if entry.includeInBackup { out += "    backup: include\n" }
                if entry.cacheDirectoryTag { out += "    cacheTag: true\n" }
            }
        }
        out += policy.rules.isEmpty ? "rules: []\n" : "rules:\n"
        for rule in policy.rules {
            out += "  # from \(rule.location.map(origin) ?? "code")\n"
            out += "  - name: \(quote(rule.name))\n"
            out += "    path: \(quote(rule.path.isRoot ? "." : rule.path.string))\n"
            if !rule.match.isEmpty { out += "    match: \(list(rule.match.map(\.pattern)))\n" }
            if !rule.exclude.isEmpty { out += "    exclude: \(list(rule.exclude.map(\.pattern)))\n" }
            if let t = rule.type { out += "    type: \(t.rawValue)\n" }
            if rule.mode != .enforce { out += "    mode: \(rule.mode.rawValue)\n" }
            if let s = rule.severity { out += "    severity: \(s.rawValue)\n" }
            out += "    \(kind(rule.kind))\n"
        }
        return out
    }

    static func kind(_ kind: Rule.Kind) -> String {
        switch kind {
        case .expire(let e):
            var parts = ["after: \(e.after)", "by: \(e.by.rawValue)"]
            if e.keep > 0 { parts.append("keep: \(e.keep)") }
            if e.unit != .entry { parts.append("unit: \(e.unit.rawValue)") }
            return "expire: { \(parts.joined(separator: ", ")) }"
        case .trash(let t):
            var parts = ["retain: \(t.retain)", "layout: \(t.layout.rawValue)"]
            if let m = t.maxSize { parts.append("maxSize: \(m.bytes)") }
            return "trash: { \(parts.joined(separator: ", ")) }"
        case .quota(let q):
            let target = switch q.target { case .size(let s): "\(s.bytes)"; case .percent(let p): percent(p) }
            var parts = ["max: \(q.max.bytes)", "target: \(target)", "evict: \(q.evict.rawValue)"]
            if let a = q.minAge { parts.append("minAge: \(a)") }
            if q.keep > 0 { parts.append("keep: \(q.keep)") }
            if q.unit != .entry { parts.append("unit: \(q.unit.rawValue)") }
            return "quota: { \(parts.joined(separator: ", ")) }"
        case .naming(let n):
            var parts: [String] = []
            if let c = n.letterCase { parts.append("case: \(c.rawValue)") }
            if let p = n.pattern { parts.append("pattern: \(quote(p))") }
            return "naming: { \(parts.joined(separator: ", ")) }"
        case .backup(let b):
            return "backup: { exclude: true, cacheTag: \(b.cacheDirectoryTag) }"
        case .forbid(let globs):
            return "forbid: \(list(globs.map(\.pattern)))"
        case .custom(let c):
            return "# custom rule \(quote(String(describing: c))) (written in Swift; not expressible in YAML)"
        }
    }

    static func origin(_ location: PolicyLocation) -> String { "\(location.file):\(location.line)" }

    static func percent(_ p: Double) -> String { p == p.rounded() ? "\(Int(p))%" : "\(p)%" }

    static func list(_ items: [String]) -> String { "[" + items.map(quote).joined(separator: ", ") + "]" }

    /// A YAML double-quoted scalar: backslash, quote and every control character escaped.
    static func quote(_ text: String) -> String {
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
