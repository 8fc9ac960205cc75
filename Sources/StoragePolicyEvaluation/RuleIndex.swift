// The policy's rules compiled for the walk, indexed by scope in a trie over path components, so an entry
// meets only the rules whose scope holds it. Never touches the disk.

@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyModel

/// A rule ready for the walk: its globs as matchers, its kind's judge, its position in the policy.
/// A class: the walk reads rules for every entry, and a reference is one retain, not one per field.
package final class CompiledRule: Sendable {
    /// Position in the policy: earlier rules win ties (the same entry deleted by two rules).
    package let index: Int
    package let rule: Rule
    let scopeDepth: Int
    package let match: [PathMatcher]
    package let exclude: [PathMatcher]
    /// For trash rules: the layout found on disk (automatic resolved before the walk).
    package let trashLayout: TrashRetention.Layout
    /// How the walk meets entries for this rule's kind (Kinds/).
    let judge: any EntryJudge
    /// The entry types the rule acts on (its kind's default narrowed by `type:`), decided once.
    private let admitsRegular: Bool, admitsDirectory: Bool, admitsSymlink: Bool
    /// Whether the rule's filters (size, owner, group) need an entry's status: checked once per entry.
    let filtersByStatus: Bool
    /// Named by a pressure rule (an expire rule then records the files it keeps, which pressure may evict).
    package let pressureNamed: Bool

    package var name: String { rule.name }
    var enforces: Bool { rule.mode == .enforce }

    package init(index: Int, rule: Rule, trashLayout: TrashRetention.Layout = .app, pressureNamed: Bool = false) {
        self.index = index
        self.pressureNamed = pressureNamed
        self.rule = rule
        self.trashLayout = trashLayout
        let behavior = rule.kind.behavior
        judge = behavior.makeJudge()
        let kind = type(of: behavior)
        admitsRegular = kind.admits(.regular, filter: rule.type)
        admitsDirectory = kind.admits(.directory, filter: rule.type)
        admitsSymlink = kind.admits(.symlink, filter: rule.type)
        scopeDepth = rule.path.isEmpty ? 0 : rule.path.components.count
        let folds = rule.filters.caseInsensitive
        match = rule.match.map { PathMatcher($0, foldsCase: folds) }
        exclude = rule.exclude.map { PathMatcher($0, foldsCase: folds) }
        filtersByStatus = rule.filters.needsStatus
    }

    /// Why the entry with `status` is not selected by the rule's size, owner and group filters; nil when it is
    /// (always, without filters). Checked where match is, by the evaluator, before the kind's judge sees it.
    func filterRejection(_ status: FileStatus) -> String? {
        filtersByStatus ? rule.filters.rejection(type: status.type, userID: status.userID, groupID: status.groupID,
                                                 size: status.size) : nil
    }

    /// `match`/`exclude` for the scope-relative path `directory/name`.
    func selects(_ directory: ArraySlice<ArraySlice<UInt8>>, _ name: ArraySlice<UInt8>) -> Bool {
        for m in exclude where m.matches(directory, name) { return false }
        if match.isEmpty { return true }
        for m in match where m.matches(directory, name) { return true }
        return false
    }

    /// Whether the walk must go below subdirectory `directory/name` for this rule (the kind's judge decides).
    package func needsBelow(_ directory: ArraySlice<ArraySlice<UInt8>>, _ name: ArraySlice<UInt8>) -> Bool {
        judge.needsBelow(self, directory, name)
    }

    /// Whether `match` could select something below subdirectory `directory/name` (always, without globs).
    func matchCouldMatchBelow(_ directory: ArraySlice<ArraySlice<UInt8>>, _ name: ArraySlice<UInt8>) -> Bool {
        match.isEmpty || match.contains { $0.couldMatchBelow(directory, name) }
    }

    /// The `type:` filter with the kind's default (RuleKindBehavior.admits): quota counts regular files only;
    /// backup markers go on files and directories; the other kinds take any type they can act on.
    package func admits(_ type: FileType) -> Bool {
        switch type {
        case .regular: admitsRegular
        case .directory: admitsDirectory
        case .symlink: admitsSymlink
        default: false
        }
    }
}

/// Rule scopes and layout paths as a trie: a node per path component that leads to, or is, one of them.
package final class ScopeTrie: Sendable {
    /// Rules whose scope is exactly this path.
    package let rules: [Int]
    /// The next components on the way to a scope or layout directory. Every node is structure: walked,
    /// never expired, renamed or moved.
    let children: [[UInt8]: ScopeTrie]

    package init(rules: [Int], children: [[UInt8]: ScopeTrie]) {
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
