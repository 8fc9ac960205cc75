// Turns a YAML node tree into a Policy, collecting every structural and type error with its mark.
// Never stops at the first problem and never guesses: an unknown key is an error with a suggestion.

package struct PolicyDecoder {
    package let file: String
    package private(set) var diagnostics: [Diagnostic] = []
    /// `extends:` entries as written, with where each is written (resolved by PolicyInheritance).
    private(set) var extends: [(reference: String, location: PolicyLocation)] = []
    /// Rules written with `enabled: false`: they drop the inherited rule of that name.
    private(set) var disabled: [(name: String, location: PolicyLocation, nameOnly: Bool)] = []
    /// Top-level keys the file sets itself, so inherited values are overridden only by what is written.
    package private(set) var written: Set<String> = []

    package init(file: String) { self.file = file }

    static let topLevelKeys = ["version", "name", "description", "extends", "max-delete", "layout", "rules", "pressure", "roots",
                               "quarantine", "journal"]
    /// The keys of the kinds (Rule.Kind's registry), which a rule has exactly one of.
    static let kindKeys = Rule.Kind.yamlKeywords
    static let ruleKeys = ["name", "description", "enabled", "path", "match", "exclude", "type", "mode", "severity",
                           "inUse", "regenerable", "quarantine"] + filterKeys + kindKeys
    /// The kinds `inUse:` applies to, and how the error for the others lists them.
    static let inUseKinds = Rule.Kind.syntaxes.filter { $0.writtenInYAML && $0.honoursInUse }.map { $0.keyword }
    static let inUseKindsText = {
        let sorted = inUseKinds.sorted()
        return sorted.count < 2 ? sorted.joined() : sorted.dropLast().joined(separator: ", ") + " and " + sorted.last!
    }()
    static let layoutKeys = ["path", "backup", "cacheTag", "mode", "owner", "group", "fix", "type", "target", "content"]

    // MARK: Diagnostics

    package func location(_ node: Node) -> PolicyLocation {
        PolicyLocation(file: file, line: node.mark.line, column: node.mark.column)
    }

    package mutating func error(_ node: Node, _ message: String) {
        diagnostics.append(Diagnostic(severity: .error, location: location(node), message: message))
    }

    package mutating func warning(_ node: Node, _ message: String) {
        diagnostics.append(Diagnostic(severity: .warning, location: location(node), message: message))
    }

    // MARK: Policy

    package mutating func decode(_ root: Node?) -> Policy? {
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
            case "pressure":
                policy.pressure = pressureRules(value)
            case "quarantine":
                switch quarantineSetting(value, context: "'quarantine'") {
                case .window(let d)?: policy.quarantine = d
                default: policy.quarantine = nil
                }
            case "journal":
                if let retention = journalRetention(value) { policy.journal = retention }
            case "roots":
                if let items = sequence(value, "'roots'") {
                    policy.roots = items.compactMap { rootEntry($0) }
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

    package mutating func layoutEntry(_ node: Node) -> LayoutEntry? {
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
            case "mode": entry.mode = layoutMode(value)
            case "owner": entry.owner = principal(value, context: "layout entry: 'owner'", group: false)
            case "group": entry.group = principal(value, context: "layout entry: 'group'", group: true)
            case "fix":
                if let b = bool(value, "'fix'") { entry.fix = b }
            case "type":
                if let v = scalar(value, "layout entry: 'type'") {
                    if let t = LayoutType(rawValue: v) { entry.type = t }
                    else { error(value, "layout entry: invalid type '\(v)' (expected directory, file or symlink)") }
                }
            case "target":
                if let v = scalar(value, "layout entry: 'target'") {
                    if let problem = LayoutEntry.targetProblem(v) { error(value, "layout entry: " + problem) } else { entry.target = Array(v.utf8) }
                }
            case "content":
                if let v = scalar(value, "layout entry: 'content'") {
                    if let problem = LayoutEntry.contentProblem(v) { error(value, "layout entry: " + problem) } else { entry.content = Array(v.utf8) }
                }
            default: break
            }
        }
        if !hasPath {
            if !pairs.contains(where: { $0.key.scalar == "path" }) { error(node, "layout entry: missing 'path'") }
            return nil
        }
        checkType(entry, node, pairs.map(\.key))
        if entry.fix && !entry.hasAttributes {
            warning(node, "layout entry '\(entry.path.escaped)': 'fix: true' without mode, owner or group repairs nothing")
        }
        if entry.cacheDirectoryTag && !entry.excludeFromBackup {
            warning(node, "layout entry '\(entry.path.escaped)': cacheTag without 'backup: exclude' still writes CACHEDIR.TAG")
        }
        return entry
    }

    /// The keys a layout entry's type allows: a symlink has a target and no mode, owner or group (as tmpfiles'
    /// `L` lines set none); only a file has content; only a directory carries backup markers.
    mutating func checkType(_ entry: LayoutEntry, _ node: Node, _ keys: [Node]) {
        let label = "layout entry '\(entry.path.escaped)'"
        func key(_ name: String) -> Node { keys.first { $0.scalar == name } ?? node }
        if entry.type != .directory {
            for name in ["backup", "cacheTag"] where keys.contains(where: { $0.scalar == name }) {
                error(key(name), "\(label): '\(name)' applies to directories only, not a \(entry.type.rawValue)")
            }
        }
        if entry.type == .symlink {
            if entry.target == nil && !keys.contains(where: { $0.scalar == "target" }) {
                error(node, "\(label): a symlink needs 'target:', what it points to")
            }
            for name in ["mode", "owner", "group"] where keys.contains(where: { $0.scalar == name }) {
                error(key(name), "\(label): a symlink has no '\(name)' of its own here (remove it; set it on the target)")
            }
        } else if keys.contains(where: { $0.scalar == "target" }) {
            error(key("target"), "\(label): 'target' is for 'type: symlink' only")
        }
        if entry.type != .file && keys.contains(where: { $0.scalar == "content" }) {
            error(key("content"), "\(label): 'content' is for 'type: file' only")
        }
    }

    /// `mode: "0750"`: a quoted octal string. An unquoted number is refused, because YAML reads `0750` as
    /// 750 (1.2) or 488 (1.1) depending on the reader, and either silently gives the wrong bits.
    mutating func layoutMode(_ node: Node) -> UInt32? {
        guard let text = scalar(node, "layout entry: 'mode'") else { return nil }
        if node.style == .plain {
            error(node, "layout entry: mode \(text) must be a quoted octal string, e.g. mode: \"\(text.count < 4 ? String(repeating: "0", count: 4 - text.count) + text : text)\" (unquoted, YAML readers disagree on whether it is octal or decimal)")
            return nil
        }
        guard let bits = LayoutEntry.modeBits(text) else {
            error(node, "layout entry: " + LayoutEntry.invalidMode(text))
            return nil
        }
        return bits
    }

    // MARK: Rules

    package mutating func rule(_ node: Node) -> Rule? {
        guard let pairs = mapping(node, "a rule") else { return nil }
        let name = pairs.first { $0.key.scalar == "name" }?.value.scalar
        let label = name.map { "rule '\($0)'" } ?? "rule"
        var rule = Rule(name: name ?? "", path: .root, kind: .placeholder, location: location(node))
        var kinds: [(String, Node)] = []
        var hasPath = false
        var enabled = true
        for (key, value) in pairs {
            guard let k = keyName(key, allowed: PolicyDecoder.ruleKeys, context: label) else { continue }
            switch k {
            case "enabled":
                if let b = bool(value, "\(label): 'enabled'") { enabled = b }
            case "regenerable":
                if let b = bool(value, "\(label): 'regenerable'") { rule.regenerable = b }
            case "quarantine":
                rule.quarantine = quarantineSetting(value, context: "\(label): 'quarantine'")
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
                if !pairs.contains(where: { PolicyDecoder.inUseKinds.contains($0.key.scalar ?? "") }) {
                    error(value, "\(label): 'inUse' applies to \(PolicyDecoder.inUseKindsText) rules only")
                }
            default:
                if !filter(k, value, label: label, into: &rule.filters) { kinds.append((k, value)) }
            }
        }
        if name == nil { error(node, "rule: missing 'name'") }
        if !enabled, let name {
            // `enabled: false` drops the inherited rule of this name (and this one, if it is written in full).
            let nameOnly = kinds.isEmpty && !pairs.contains(where: { $0.key.scalar == "path" })
            disabled.append((name, location(node), nameOnly))
            if nameOnly { return nil }
        }
        // `trash: { discover: true }` finds its folders: it has no path (RootChecks and TrashSyntax say so).
        let discovers = kinds.count == 1 && kinds[0].0 == "trash" && kinds[0].1.mapping?.contains {
            $0.key.scalar == "discover" && $0.value.scalar == "true" } == true
        if !hasPath, !discovers, !pairs.contains(where: { $0.key.scalar == "path" }) {
            error(node, "\(label): missing 'path' (the rule's scope, relative to --root; '.' for the root itself)")
        }
        if discovers, hasPath, let at = pairs.first(where: { $0.key.scalar == "path" }) {
            error(at.key, "\(label): 'discover: true' runs the rule on every trash folder discovery finds, so it takes no 'path' (remove it, or remove discover)")
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
        // A window holds back deletes: a kind that never deletes has none to hold.
        if rule.quarantine != nil, kind.syntax.removal == nil, let at = pairs.first(where: { $0.key.scalar == "quarantine" }) {
            error(at.key, "\(label): 'quarantine' holds back deletes, and a '\(kindKey)' rule deletes nothing (remove it; it applies to expire, quota and trash rules)")
        }
        return name == nil || !(hasPath || discovers) || !enabled ? nil : rule
    }

    /// `- { path: /var/tmp, rules: [tmp-expiry, residue] }`: one entry of `roots:` (checked by RootChecks).
    package mutating func rootEntry(_ node: Node) -> PolicyRoot? {
        guard let pairs = mapping(node, "a root entry") else { return nil }
        var root = PolicyRoot(path: "", rules: [], location: location(node))
        var hasPath = false, hasRules = false
        for (key, value) in pairs {
            guard let k = keyName(key, allowed: ["path", "rules"], context: "root entry") else { continue }
            if k == "path", let p = scalar(value, "root entry: 'path'") {
                root.path = p; hasPath = true
                root.location = location(value)
            }
            if k == "rules" {
                let items = value.scalar != nil && !value.isNull ? [value] : (sequence(value, "root entry: 'rules'") ?? [])
                hasRules = true
                for item in items {
                    if let name = scalar(item, "root entry: a rule name") {
                        root.rules.append(name); root.ruleLocations.append(location(item))
                    }
                }
            }
        }
        if !hasPath { error(node, "root entry: missing 'path' (an absolute directory, or ~/... for --user runs)"); return nil }
        if !hasRules { error(node, "root '\(root.path)': missing 'rules' (the names of the rules that apply under it)"); return nil }
        return root
    }

    /// The settings under a kind's key, decoded by the kind (Policy/Kinds/<Kind>Syntax.swift).
    mutating func ruleKind(_ key: String, _ node: Node, label: String) -> Rule.Kind? {
        guard let syntax = Rule.Kind.syntax(forKeyword: key) else { return nil }
        return syntax.decode(node, context: "\(label): '\(key)'", &self)
    }
}
