// The policy's rules compiled for the walk, indexed by scope in a trie over path components, so an entry
// meets only the rules whose scope holds it. Never touches the disk.

/// A rule ready for the walk: its globs as matchers, its regex checked, its position in the policy.
/// A class: the walk reads rules for every entry, and a reference is one retain, not one per field.
final class CompiledRule: Sendable {
    /// Position in the policy: earlier rules win ties (the same entry deleted by two rules).
    let index: Int
    let rule: Rule
    let scopeDepth: Int
    let match: [PathMatcher]
    let exclude: [PathMatcher]
    let forbid: [PathMatcher]
    /// The naming pattern, when it is a valid regular expression. Regex values are not Sendable, so
    /// each thread compiles its own copy (EvaluationResults.pattern(for:)).
    let pattern: String?
    /// For trash rules: the layout found on disk (automatic resolved before the walk).
    let trashLayout: TrashRetention.Layout
    /// How the walk meets entries for this rule's kind (Kinds/).
    let judge: EntryJudge

    var name: String { rule.name }
    var enforces: Bool { rule.mode == .enforce }

    init(index: Int, rule: Rule, trashLayout: TrashRetention.Layout = .app) {
        self.index = index
        self.rule = rule
        self.trashLayout = trashLayout
        judge = rule.kind.behavior.makeJudge()
        scopeDepth = rule.path.isEmpty ? 0 : rule.path.components.count
        match = rule.match.map(PathMatcher.init)
        exclude = rule.exclude.map(PathMatcher.init)
        if case .forbid(let globs) = rule.kind { forbid = globs.map(PathMatcher.init) } else { forbid = [] }
        if case .naming(let naming) = rule.kind, let text = naming.pattern, (try? Regex(text, as: Substring.self)) != nil {
            pattern = text
        } else {
            pattern = nil
        }
    }

    /// `match`/`exclude` for the scope-relative path `directory/name`.
    func selects(_ directory: ArraySlice<ArraySlice<UInt8>>, _ name: ArraySlice<UInt8>) -> Bool {
        for m in exclude where m.matches(directory, name) { return false }
        if match.isEmpty { return true }
        for m in match where m.matches(directory, name) { return true }
        return false
    }

    /// The forbid glob `directory/name` matches, if any.
    func forbiddenBy(_ directory: ArraySlice<ArraySlice<UInt8>>, _ name: ArraySlice<UInt8>) -> Glob? {
        forbid.first { $0.matches(directory, name) }?.glob
    }

    /// Whether the walk must go below subdirectory `directory/name` for this rule.
    func needsBelow(_ directory: ArraySlice<ArraySlice<UInt8>>, _ name: ArraySlice<UInt8>) -> Bool {
        switch rule.kind {
        case .trash:
            return true
        case .expire:
            // A selected directory may be deleted once empty: its contents must be seen.
            if selects(directory, name) && admits(.directory) { return true }
            return matchCouldMatchBelow(directory, name)
        case .forbid:
            return matchCouldMatchBelow(directory, name) && forbid.contains { $0.couldMatchBelow(directory, name) }
        case .backup:
            // Selected directories check their own marker when visited.
            if !match.isEmpty && selects(directory, name) { return true }
            return !match.isEmpty && matchCouldMatchBelow(directory, name)
        case .quota, .naming, .custom:
            return matchCouldMatchBelow(directory, name)
        }
    }

    private func matchCouldMatchBelow(_ directory: ArraySlice<ArraySlice<UInt8>>, _ name: ArraySlice<UInt8>) -> Bool {
        match.isEmpty || match.contains { $0.couldMatchBelow(directory, name) }
    }

    /// The `type:` filter with each kind's default: quota counts regular files only; backup markers go on
    /// files and directories; the other kinds take any type they can act on.
    func admits(_ type: FileType) -> Bool {
        switch rule.kind {
        case .quota: return type == .regular
        case .backup:
            guard type == .regular || type == .directory else { return false }
            return rule.type?.admits(type) ?? true
        default:
            guard type == .regular || type == .directory || type == .symlink else { return false }
            return rule.type?.admits(type) ?? true
        }
    }
}

/// Rule scopes and layout paths as a trie: a node per path component that leads to, or is, one of them.
final class ScopeTrie: Sendable {
    /// Rules whose scope is exactly this path.
    let rules: [Int]
    /// The next components on the way to a scope or layout directory. Every node is structure: walked,
    /// never expired, renamed or moved.
    let children: [[UInt8]: ScopeTrie]

    init(rules: [Int], children: [[UInt8]: ScopeTrie]) {
        self.rules = rules; self.children = children
    }

    /// Builds the trie for `rules` (by index) and the extra structural `paths` (layout, trash folder).
    static func build(scopes: [(index: Int, path: RelativePath)], structural: [RelativePath]) -> ScopeTrie {
        final class Builder {
            var rules: [Int] = []
            var children: [[UInt8]: Builder] = [:]
            func node(_ path: RelativePath) -> Builder {
                var current = self
                for c in path.components {
                    if let next = current.children[c.bytes] { current = next } else {
                        let next = Builder()
                        current.children[c.bytes] = next
                        current = next
                    }
                }
                return current
            }
            func freeze() -> ScopeTrie {
                ScopeTrie(rules: rules, children: children.mapValues { $0.freeze() })
            }
        }
        let root = Builder()
        for scope in scopes { root.node(scope.path).rules.append(scope.index) }
        for path in structural { _ = root.node(path) }
        return root.freeze()
    }

    func child(_ name: ArraySlice<UInt8>) -> ScopeTrie? {
        children.isEmpty ? nil : children[Array(name)]
    }
}
