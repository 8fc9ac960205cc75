// Node: one YAML value (scalar, sequence or mapping) with the mark where it starts, as the reader builds it.
// Never loses a mark or reorders a mapping: policy errors name line and column, and keys keep file order.

/// A YAML node. Aliases are already resolved: an alias is a copy of its anchor's node that shares the
/// anchor's storage and carries the alias's own mark.
package struct Node: Sendable {
    package enum Kind: Sendable {
        case scalar(String, style: ScalarStyle)
        case sequence([Node])
        /// Keys in file order; the reader has already refused duplicate scalar keys.
        case mapping([(key: Node, value: Node)])
    }

    /// How a scalar was written. Only plain scalars can mean null (`~`, `null`, or nothing at all).
    package enum ScalarStyle: Sendable, Hashable {
        case plain, singleQuoted, doubleQuoted, literal, folded
    }

    package var kind: Kind
    /// Where the node starts: its first character, or the `-` / first key of a block collection.
    package var mark: Mark
    /// The explicit tag, resolved to its full form (`!!str` is `tag:yaml.org,2002:str`); nil when untagged.
    package var tag: String?

    package init(_ kind: Kind, mark: Mark, tag: String? = nil) {
        self.kind = kind
        self.mark = mark
        self.tag = tag
    }

    /// The text of a scalar, nil for a collection. A null scalar returns its text too (`~`, `""`).
    package var scalar: String? {
        if case .scalar(let value, _) = kind { return value }
        return nil
    }

    package var sequence: [Node]? {
        if case .sequence(let items) = kind { return items }
        return nil
    }

    package var mapping: [(key: Node, value: Node)]? {
        if case .mapping(let pairs) = kind { return pairs }
        return nil
    }

    /// The scalar's style, nil for a collection.
    package var style: ScalarStyle? {
        if case .scalar(_, let style) = kind { return style }
        return nil
    }

    /// True for YAML's null: an untagged plain `~`, `null`, `Null`, `NULL` or empty scalar, or `!!null`.
    /// A quoted `"null"` is a string, so it is not null.
    package var isNull: Bool {
        guard case .scalar(let value, let style) = kind else { return false }
        if let tag { return tag == "tag:yaml.org,2002:null" }
        guard style == .plain else { return false }
        switch value {
        case "", "~", "null", "Null", "NULL": return true
        default: return false
        }
    }

    /// What the node is, for messages such as "expected a list, found a mapping".
    /// Null is named apart ("null") because "found a string" would mislead for `rules:` left empty.
    package var kindName: String {
        switch kind {
        case .scalar: return isNull ? "null" : "a string"
        case .sequence: return "a list"
        case .mapping: return "a mapping"
        }
    }
}
