// Turns a YAML node tree into a Policy, collecting every structural and type error with its mark.
// Never stops at the first problem and never guesses: an unknown key is an error with a suggestion.

struct PolicyDecoder {
    let file: String
    private(set) var diagnostics: [Diagnostic] = []
    /// `extends:` entries as written, with where each is written (resolved by PolicyInheritance).
    private(set) var extends: [(reference: String, location: PolicyLocation)] = []
    /// Rules written with `enabled: false`: they drop the inherited rule of that name.
    private(set) var disabled: [(name: String, location: PolicyLocation, nameOnly: Bool)] = []
    /// Top-level keys the file sets itself, so inherited values are overridden only by what is written.
    private(set) var written: Set<String> = []

    init(file: String) { self.file = file }

    static let topLevelKeys = ["version", "name", "description", "extends", "max-delete", "layout", "rules"]
    static let ruleKeys = ["name", "description", "enabled", "path", "match", "exclude", "type", "mode", "severity",
                           "inUse", "expire", "trash", "quota", "naming", "backup", "forbid"]
    static let kindKeys = ["expire", "trash", "quota", "naming", "backup", "forbid"]
    static let layoutKeys = ["path", "backup", "cacheTag"]

    // MARK: Diagnostics

    func location(_ node: Node) -> PolicyLocation {
        PolicyLocation(file: file, line: node.mark.line, column: node.mark.column)
    }

    mutating func error(_ node: Node, _ message: String) {
        diagnostics.append(Diagnostic(severity: .error, location: location(node), message: message))
    }

    mutating func warning(_ node: Node, _ message: String) {
        diagnostics.append(Diagnostic(severity: .warning, location: location(node), message: message))
    }

    // MARK: Policy

    mutating func decode(_ root: Node?) -> Policy? {
        guard let root else {
            diagnostics.append(Diagnostic(severity: .error, location: PolicyLocation(file: file, line: 1, column: 1),
                                          message: "the policy is empty; it needs at least 'version: 1' and 'name'"))
            return nil
        }
        guard let pairs = mapping(root, "the policy") else { return nil }
        var policy = Policy(name: "", source: location(root))
        var seenName = false, seenVersion = false
        for (key, value) in pairs {
            guard let k = keyName(key, allowed: PolicyDecoder.topLevelKeys, context: "the policy") else { continue }
            written.insert(k)
            switch k {
            case "version":
                seenVersion = true
                if let v = scalar(value, "'version'") {
                    if v != "1" {
                        error(value, "unsupported policy version '\(v)' (this policyctl reads version 1)")
                    } else if value.style != .plain {
                        error(value, "'version' is the number 1, not the text \"1\" (remove the quotes)")
                    }
                }
            case "name":
                if let n = scalar(value, "'name'") {
                    seenName = true
                    if !PolicyDecoder.isIdentifier(n) {
                        error(value, "policy name '\(n)' must be letters, digits, '-', '_' or '.' (it names journal entries and unit files)")
                    }
                    policy.name = n
                }
            case "description":
                policy.description = scalar(value, "'description'")
            case "extends":
                let items = value.scalar != nil && !value.isNull ? [value] : (sequence(value, "'extends'") ?? [])
                for item in items {
                    if let reference = scalar(item, "'extends'") { extends.append((reference, location(item))) }
                }
            case "max-delete":
                policy.maxDelete = deleteLimit(value)
            case "layout":
                if let items = sequence(value, "'layout'") {
                    policy.layout = items.compactMap { layoutEntry($0) }
                }
            case "rules":
                if let items = sequence(value, "'rules'") {
                    policy.rules = items.compactMap { rule($0) }
                }
            default: break
            }
        }
        if !seenVersion { error(root, "missing 'version' (add 'version: 1')") }
        if !seenName { error(root, "missing 'name' (a short identifier such as 'app-sandbox')") }
        return policy
    }

    // MARK: Layout

    mutating func layoutEntry(_ node: Node) -> LayoutEntry? {
        if node.scalar != nil, !node.isNull {
            guard let path = scope(node, context: "layout entry") else { return nil }
            if path.isRoot {
                error(node, "layout entry: path must name a directory below the root")
                return nil
            }
            return LayoutEntry(path: path, location: location(node))
        }
        guard let pairs = mapping(node, "a layout entry") else { return nil }
        var entry = LayoutEntry(path: .root, location: location(node))
        var hasPath = false
        for (key, value) in pairs {
            guard let k = keyName(key, allowed: PolicyDecoder.layoutKeys, context: "layout entry") else { continue }
            switch k {
            case "path":
                if let p = scope(value, context: "layout entry") {
                    if p.isRoot { error(value, "layout entry: path must name a directory below the root") }
                    entry.path = p
                    hasPath = true
                }
            case "backup":
                if let v = scalar(value, "'backup'") {
                    switch v {
                    case "exclude": entry.excludeFromBackup = true
                    case "include": entry.excludeFromBackup = false; entry.includeInBackup = true
                    default: error(value, "layout entry: invalid backup '\(v)' (expected exclude or include)")
                    }
                }
            case "cacheTag":
                if let b = bool(value, "'cacheTag'") { entry.cacheDirectoryTag = b }
            default: break
            }
        }
        if !hasPath {
            if !pairs.contains(where: { $0.key.scalar == "path" }) { error(node, "layout entry: missing 'path'") }
            return nil
        }
        if entry.cacheDirectoryTag && !entry.excludeFromBackup {
            warning(node, "layout entry '\(entry.path.escaped)': cacheTag without 'backup: exclude' still writes CACHEDIR.TAG")
        }
        return entry
    }

    // MARK: Rules

    mutating func rule(_ node: Node) -> Rule? {
        guard let pairs = mapping(node, "a rule") else { return nil }
        let name = pairs.first { $0.key.scalar == "name" }?.value.scalar
        let label = name.map { "rule '\($0)'" } ?? "rule"
        var rule = Rule(name: name ?? "", path: .root, kind: .forbid([]), location: location(node))
        var kinds: [(String, Node)] = []
        var hasPath = false
        var enabled = true
        for (key, value) in pairs {
            guard let k = keyName(key, allowed: PolicyDecoder.ruleKeys, context: label) else { continue }
            switch k {
            case "enabled":
                if let b = bool(value, "\(label): 'enabled'") { enabled = b }
            case "name":
                if let n = scalar(value, "\(label): 'name'"), !PolicyDecoder.isIdentifier(n) {
                    error(value, "rule name '\(n)' must be letters, digits, '-', '_' or '.'")
                }
            case "description":
                _ = scalar(value, "\(label): 'description'")
            case "path":
                if let p = scope(value, context: label) { rule.path = p; hasPath = true }
            case "match":
                rule.match = globs(value, context: "\(label): 'match'")
            case "exclude":
                rule.exclude = globs(value, context: "\(label): 'exclude'")
            case "type":
                if let t = enumValue(value, EntryTypeFilter.self, context: "\(label): 'type'") { rule.type = t }
            case "mode":
                if let m = enumValue(value, Rule.Mode.self, context: "\(label): 'mode'") { rule.mode = m }
            case "severity":
                if let s = enumValue(value, Rule.Severity.self, context: "\(label): 'severity'") { rule.severity = s }
            case "inUse":
                if let u = enumValue(value, InUseHandling.self, context: "\(label): 'inUse'") { rule.inUse = u }
                if !pairs.contains(where: { ["expire", "quota", "trash"].contains($0.key.scalar ?? "") }) {
                    error(value, "\(label): 'inUse' applies to expire, quota and trash rules only")
                }
            default:
                kinds.append((k, value))
            }
        }
        if name == nil { error(node, "rule: missing 'name'") }
        if !enabled, let name {
            // `enabled: false` drops the inherited rule of this name (and this one, if it is written in full).
            let nameOnly = kinds.isEmpty && !pairs.contains(where: { $0.key.scalar == "path" })
            disabled.append((name, location(node), nameOnly))
            if nameOnly { return nil }
        }
        if !hasPath, !pairs.contains(where: { $0.key.scalar == "path" }) {
            error(node, "\(label): missing 'path' (the rule's scope, relative to --root; '.' for the root itself)")
        }
        if kinds.isEmpty {
            error(node, "\(label): no rule kind; add exactly one of \(PolicyDecoder.kindKeys.joined(separator: ", "))")
            return nil
        }
        if kinds.count > 1 {
            let names = kinds.map { "'\($0.0)'" }.joined(separator: " and ")
            error(kinds[1].1, "\(label): one rule has one kind, but this one has \(names); split it into \(kinds.count) rules")
        }
        let (kindKey, kindNode) = kinds[0]
        guard let kind = ruleKind(kindKey, kindNode, label: label) else { return nil }
        rule.kind = kind
        return name == nil || !hasPath || !enabled ? nil : rule
    }

    mutating func ruleKind(_ key: String, _ node: Node, label: String) -> Rule.Kind? {
        let context = "\(label): '\(key)'"
        switch key {
        case "expire":
            if node.scalar != nil, !node.isNull {  // shorthand: `expire: 24h`
                return duration(node, context: context).map { .expire(Expire(after: $0)) }
            }
            guard let pairs = mapping(node, context) else { return nil }
            var after: PolicyDuration? = nil
            var expire = Expire(after: PolicyDuration(seconds: 0))
            for (k, v) in pairs {
                guard let name = keyName(k, allowed: ["after", "by", "keep", "unit"], context: context) else { continue }
                if name == "after" { after = duration(v, context: "\(context): 'after'") }
                if name == "by", let t = enumValue(v, Expire.Timestamp.self, context: "\(context): 'by'") { expire.by = t }
                if name == "keep", let n = count(v, context: "\(context): 'keep'") { expire.keep = n }
                if name == "unit", let u = enumValue(v, RetentionUnit.self, context: "\(context): 'unit'") { expire.unit = u }
            }
            guard let after else {
                if !hasMisspelledKey(pairs, key: "after") { error(node, "\(context): missing 'after' (e.g. after: 24h)") }
                return nil
            }
            expire.after = after
            return .expire(expire)
        case "trash":
            if node.scalar != nil, !node.isNull {
                return duration(node, context: context).map { .trash(TrashRetention(retain: $0)) }
            }
            guard let pairs = mapping(node, context) else { return nil }
            var retain: PolicyDuration? = nil
            var layout = TrashRetention.Layout.automatic
            var maxSize: ByteSize? = nil
            for (k, v) in pairs {
                guard let name = keyName(k, allowed: ["retain", "layout", "maxSize"], context: context) else { continue }
                if name == "retain" { retain = duration(v, context: "\(context): 'retain'") }
                if name == "layout", let l = enumValue(v, TrashRetention.Layout.self, context: "\(context): 'layout'") { layout = l }
                if name == "maxSize" { maxSize = size(v, context: "\(context): 'maxSize'") }
            }
            guard let retain else {
                if !hasMisspelledKey(pairs, key: "retain") { error(node, "\(context): missing 'retain' (e.g. retain: 30d)") }
                return nil
            }
            return .trash(TrashRetention(retain: retain, layout: layout, maxSize: maxSize))
        case "quota":
            guard let pairs = mapping(node, context) else { return nil }
            var max: ByteSize? = nil
            var target = Quota.Target.percent(100)
            var targetNode: Node? = nil
            var maxText = ""
            var evict = Quota.Eviction.oldest
            var minAge: PolicyDuration? = nil
            var keep = 0
            var unit = RetentionUnit.entry
            for (k, v) in pairs {
                guard let name = keyName(k, allowed: ["max", "target", "evict", "minAge", "keep", "unit"], context: context) else { continue }
                switch name {
                case "minAge":
                    minAge = duration(v, context: "\(context): 'minAge'")
                case "keep":
                    if let n = count(v, context: "\(context): 'keep'") { keep = n }
                case "unit":
                    if let u = enumValue(v, RetentionUnit.self, context: "\(context): 'unit'") { unit = u }
                case "max":
                    max = size(v, context: "\(context): 'max'")
                    maxText = v.scalar ?? ""
                case "target":
                    targetNode = v
                    if let text = scalar(v, "\(context): 'target'") {
                        if text.hasSuffix("%"), let p = Double(text.dropLast()), p > 0, p <= 100 {
                            target = .percent(p)
                        } else if let s = ByteSize(parsing: text) {
                            target = .size(s)
                        } else {
                            error(v, "\(context): invalid target '\(text)' (expected a percentage of max such as 90%, or a size: \(ByteSize.acceptedForms))")
                        }
                    }
                case "evict":
                    if let e = enumValue(v, Quota.Eviction.self, context: "\(context): 'evict'") { evict = e }
                default: break
                }
            }
            guard let max else {
                if !hasMisspelledKey(pairs, key: "max") { error(node, "\(context): missing 'max' (e.g. max: 512MiB)") }
                return nil
            }
            if case .size(let s) = target, s > max, let targetNode {
                error(targetNode, "\(context): target \(targetNode.scalar ?? s.description) is above max \(maxText.isEmpty ? max.description : maxText); eviction stops at the target, so it must be at or below max")
            }
            return .quota(Quota(max: max, target: target, evict: evict, minAge: minAge, keep: keep, unit: unit))
        case "naming":
            guard let pairs = mapping(node, context) else { return nil }
            var naming = Naming()
            for (k, v) in pairs {
                guard let name = keyName(k, allowed: ["case", "pattern"], context: context) else { continue }
                if name == "case", let c = enumValue(v, Naming.LetterCase.self, context: "\(context): 'case'") { naming.letterCase = c }
                if name == "pattern", let p = scalar(v, "\(context): 'pattern'") {
                    do { _ = try Regex(p) } catch {
                        self.error(v, "\(context): invalid pattern '\(p)': \(error)")
                    }
                    naming.pattern = p
                }
            }
            if naming.letterCase == nil && naming.pattern == nil {
                if !pairs.contains(where: { ["case", "pattern"].contains($0.key.scalar ?? "") }) {
                    error(node, "\(context): give 'case: lower', a 'pattern', or both")
                }
                return nil
            }
            return .naming(naming)
        case "backup":
            if let v = node.scalar, !node.isNull {
                guard v == "exclude" else {
                    error(node, "\(context): invalid value '\(v)' (expected 'exclude', or a mapping with exclude: true and cacheTag)")
                    return nil
                }
                return .backup(BackupExclusion())
            }
            guard let pairs = mapping(node, context) else { return nil }
            var exclusion = BackupExclusion()
            var excluded = true
            for (k, v) in pairs {
                guard let name = keyName(k, allowed: ["exclude", "cacheTag"], context: context) else { continue }
                if name == "exclude", let b = bool(v, "\(context): 'exclude'") { excluded = b }
                if name == "cacheTag", let b = bool(v, "\(context): 'cacheTag'") { exclusion.cacheDirectoryTag = b }
            }
            if !excluded { error(node, "\(context): 'exclude: false' makes the rule do nothing; remove the rule instead") ; return nil }
            return .backup(exclusion)
        case "forbid":
            let patterns = globs(node, context: context)
            if patterns.isEmpty && !diagnostics.contains(where: { $0.severity == .error && $0.location == location(node) }) {
                error(node, "\(context): list at least one pattern")
            }
            return .forbid(patterns)
        default:
            return nil
        }
    }

    // MARK: Values

    mutating func mapping(_ node: Node, _ what: String) -> [(key: Node, value: Node)]? {
        if let m = node.mapping { return m }
        error(node, "\(what): expected a mapping, found \(node.kindName)")
        return nil
    }

    mutating func sequence(_ node: Node, _ what: String) -> [Node]? {
        if let s = node.sequence { return s }
        if node.isNull { return [] }
        error(node, "\(what): expected a list, found \(node.kindName)")
        return nil
    }

    mutating func scalar(_ node: Node, _ what: String) -> String? {
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

    mutating func duration(_ node: Node, context: String) -> PolicyDuration? {
        guard let s = scalar(node, context) else { return nil }
        if let d = PolicyDuration(parsing: s) { return d }
        error(node, "\(context): invalid duration '\(s)' (expected \(PolicyDuration.acceptedForms))")
        return nil
    }

    /// A whole number of entries, 0 or more (`keep: 3`).
    mutating func count(_ node: Node, context: String) -> Int? {
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

    mutating func size(_ node: Node, context: String) -> ByteSize? {
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

    mutating func scope(_ node: Node, context: String) -> RelativePath? {
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

    mutating func globs(_ node: Node, context: String) -> [Glob] {
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
