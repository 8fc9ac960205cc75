// PolicyDecoder's readers for the values of keys: scalars, mappings and lists, numbers, durations, sizes,
// paths and globs, each reporting what is wrong with its mark and never guessing.

@_spi(Layers) import StoragePolicyFileSystem

extension PolicyDecoder {
    mutating func mapping(_ node: Node, _ what: String) -> [(key: Node, value: Node)]? {
        if let m = node.mapping { return m }
        error(node, "\(what): expected a mapping, found \(node.kindName)")
        return nil
    }

    package mutating func sequence(_ node: Node, _ what: String) -> [Node]? {
        if let s = node.sequence { return s }
        if node.isNull { return [] }
        error(node, "\(what): expected a list, found \(node.kindName)")
        return nil
    }

    package mutating func scalar(_ node: Node, _ what: String) -> String? {
        if let s = node.scalar, !node.isNull { return s }
        error(node, "\(what): expected a value, found \(node.kindName)")
        return nil
    }

    mutating func bool(_ node: Node, _ what: String) -> Bool? {
        guard let s = scalar(node, what) else { return nil }
        switch s {
        case "true", "True", "TRUE": return true
        case "false", "False", "FALSE": return false
        default:
            error(node, "\(what): expected true or false, found '\(s)'")
            return nil
        }
    }

    mutating func keyName(_ key: Node, allowed: [String], context: String) -> String? {
        guard let k = key.scalar else {
            error(key, "\(context): keys must be plain names, found \(key.kindName)")
            return nil
        }
        if allowed.contains(k) { return k }
        let hint = Suggestion.closest(to: k, in: allowed).map { " (did you mean '\($0)'?)" }
            ?? " (expected one of: \(allowed.joined(separator: ", ")))"
        error(key, "\(context): unknown key '\(k)'\(hint)")
        return nil
    }

    mutating func enumValue<E: RawRepresentable & CaseIterable>(_ node: Node, _ type: E.Type, context: String) -> E?
    where E.RawValue == String {
        guard let s = scalar(node, context) else { return nil }
        if let v = E(rawValue: s) { return v }
        let all = E.allCases.map(\.rawValue)
        let hint = Suggestion.closest(to: s, in: all).map { "did you mean '\($0)'? " } ?? ""
        error(node, "\(context): invalid value '\(s)' (\(hint)expected one of: \(all.joined(separator: ", ")))")
        return nil
    }

    package mutating func duration(_ node: Node, context: String) -> PolicyDuration? {
        guard let s = scalar(node, context) else { return nil }
        if let d = PolicyDuration(parsing: s) { return d }
        error(node, "\(context): invalid duration '\(s)' (expected \(PolicyDuration.acceptedForms))")
        return nil
    }

    /// A whole number of entries, 0 or more (`keep: 3`).
    package mutating func count(_ node: Node, context: String) -> Int? {
        guard let s = scalar(node, context) else { return nil }
        if node.style == .plain, let n = Int(s), n >= 0, n <= 1_000_000_000 { return n }
        error(node, "\(context): invalid count '\(s)' (expected a whole number such as 3)")
        return nil
    }

    /// `max-delete: 500`, `max-delete: 25%` (at least 10), or `max-delete: { percent: 25%, atLeast: 100 }`.
    mutating func deleteLimit(_ node: Node) -> DeleteLimit? {
        if node.mapping == nil {
            guard let text = scalar(node, "'max-delete'") else { return nil }
            switch DeleteLimit(parsing: text) {
            case .percent(let p, _)?: return .percent(p, atLeast: DeleteLimit.defaultFloor)
            case let limit?: return limit
            case nil:
                error(node, "invalid max-delete '\(text)': expected a count (500), a percentage (10%), or { percent: 10%, atLeast: 100 }")
                return nil
            }
        }
        guard let pairs = mapping(node, "'max-delete'") else { return nil }
        var percent: Double? = nil
        var floor = DeleteLimit.defaultFloor
        for (k, v) in pairs {
            guard let name = keyName(k, allowed: ["percent", "atLeast"], context: "'max-delete'") else { continue }
            if name == "percent", let text = scalar(v, "'max-delete': 'percent'") {
                if let p = DeleteLimit.percentage(text) { percent = p }
                else { error(v, "'max-delete': invalid percent '\(text)' (expected a percentage such as 25%)") }
            }
            if name == "atLeast", let n = count(v, context: "'max-delete': 'atLeast'") { floor = n }
        }
        guard let percent else {
            if !hasMisspelledKey(pairs, key: "percent") { error(node, "'max-delete': missing 'percent' (e.g. percent: 25%)") }
            return nil
        }
        return .percent(percent, atLeast: floor)
    }

    package mutating func size(_ node: Node, context: String) -> ByteSize? {
        guard let s = scalar(node, context) else { return nil }
        if let b = ByteSize(parsing: s), b.bytes > 0 { return b }
        // A well-formed zero (0, 0B, 0MiB) is a size, just not a usable one: say that, not "invalid".
        if ByteSize(parsing: s) != nil {
            error(node, "\(context): must be above zero, but '\(s)' is 0 bytes (e.g. 512MiB)")
            return nil
        }
        error(node, "\(context): invalid size '\(s)' (expected \(ByteSize.acceptedForms))")
        return nil
    }

    package mutating func scope(_ node: Node, context: String) -> RelativePath? {
        guard let s = scalar(node, "\(context): 'path'") else { return nil }
        if s.hasPrefix("/") || s.hasPrefix("~") {
            error(node, "\(context): path '\(s)' is absolute; rule and layout paths are relative to --root")
            return nil
        }
        guard let p = RelativePath(s) else {
            error(node, "\(context): path '\(s)' could reach outside the root ('..' is not allowed)")
            return nil
        }
        if p.components.first == Markers.stateDirectory {
            error(node, "\(context): path '\(s)' is inside policyctl's own state folder '.policyctl'")
            return nil
        }
        return p
    }

    package mutating func globs(_ node: Node, context: String) -> [Glob] {
        let items: [Node]
        if node.scalar != nil, !node.isNull { items = [node] }
        else if let s = sequence(node, context) { items = s }
        else { return [] }
        var result: [Glob] = []
        for item in items {
            guard let text = scalar(item, context) else { continue }
            do {
                result.append(try Glob(text))
            } catch {
                // Point at the offending character when the pattern sits on one line as written.
                var at = item
                if item.style == .plain, !text.contains("\n") {
                    at.mark.column += error.offset
                }
                self.error(at, "\(context): invalid pattern '\(text)': \(error.message)")
            }
        }
        return result
    }

    /// True when `key` is present, or a key close to it is (already reported as unknown, with a suggestion).
    func hasMisspelledKey(_ pairs: [(key: Node, value: Node)], key: String) -> Bool {
        pairs.contains { pair in
            guard let k = pair.key.scalar else { return false }
            return k == key || Suggestion.closest(to: k, in: [key]) != nil
        }
    }

    static func isIdentifier(_ s: String) -> Bool {
        !s.isEmpty && s.count <= 128 && s.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) }
    }
}
