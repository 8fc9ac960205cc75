// Eviction order and counts, shared by quota and trash: `order: oldest | largest | newest-last-access`,
// `first: [globs]` (matching entries go before the rest) and `maxEntries: N` (ccache's max_files: inodes run
// out too). Kept apart from each kind's own keys so both kinds read, write and document them the same way.

@_spi(Layers) import StoragePolicyFileSystem

/// The order a quota or a trash evicts in (ties break by path).
public enum EvictionOrder: String, Sendable, Hashable, CaseIterable {
    /// Oldest first: a quota by mtime, a trash by when the item was trashed.
    case oldest
    /// Largest (allocated bytes) first, then oldest.
    case largest
    /// Least recently accessed first (atime), keeping the newest last access longest.
    case newestLastAccess = "newest-last-access"
}

/// `order`, `first` and `maxEntries` of a quota or trash rule. The default (all unset) changes nothing.
public struct EvictionChoice: Sendable, Hashable {
    /// nil: the kind's default (a quota's `evict`, a trash's trashed-longest-ago-first).
    public var order: EvictionOrder?
    /// Entries (paths relative to the scope; for a trash, to its items folder) matching one of these go first.
    public var first: [Glob]
    /// The most entries (files, or trash items) kept; nil: no count limit.
    public var maxEntries: Int?

    public init(order: EvictionOrder? = nil, first: [Glob] = [], maxEntries: Int? = nil) {
        self.order = order; self.first = first; self.maxEntries = maxEntries
    }

    /// True when nothing but the kind's default order applies.
    public var isDefault: Bool { order == nil && first.isEmpty && maxEntries == nil }

    /// True when more than `maxEntries` entries are held.
    package func exceedsEntries(_ count: Int) -> Bool { maxEntries.map { count > $0 } ?? false }

    /// True when `relative` (scope-relative) matches one of the `first` globs.
    package func goesFirst(_ relative: RelativePath) -> Bool { first.contains { $0.matches(relative) } }

    package static let keys = ["order", "first", "maxEntries"]

    /// Reads one of `keys` into the choice (errors at the value's mark).
    package mutating func decode(_ name: String, _ value: Node, context: String, _ decoder: inout PolicyDecoder) {
        switch name {
        case "order":
            if let o = decoder.enumValue(value, EvictionOrder.self, context: "\(context): 'order'") { order = o }
        case "first":
            first = decoder.globs(value, context: "\(context): 'first'")
        case "maxEntries":
            guard let n = decoder.count(value, context: "\(context): 'maxEntries'") else { return }
            if n == 0 {
                decoder.error(value, "\(context): 'maxEntries' must be at least 1 (leave it out for no count limit)")
            } else {
                maxEntries = n
            }
        default: break
        }
    }

    /// The `validate --effective` parts after the kind's own (none for the default).
    var effectiveParts: [String] {
        var parts: [String] = []
        if !first.isEmpty { parts.append("first: \(EffectivePolicyWriter.list(first.map(\.pattern)))") }
        if let n = maxEntries { parts.append("maxEntries: \(n)") }
        return parts
    }

    /// How the order reads in reasons and explain: `largest first`, `matching first: [*.part], then oldest (mtime)`.
    package func describe(_ order: EvictionOrder, oldest: String) -> String {
        let base = switch order {
        case .oldest: oldest
        case .largest: "largest"
        case .newestLastAccess: "least recently used (atime)"
        }
        guard !first.isEmpty else { return "\(base) first" }
        return "matching first: \(EffectivePolicyWriter.list(first.map(\.pattern))) first, then \(base)"
    }

    /// Docs/policy.schema.json: the three keys' properties (JSON text), each line indented by `indent` spaces.
    static func schemaProperties(orderDefault: String, indent: Int) -> String {
        let text = #"""
                "order": {
                  "description": "Eviction order: oldest, largest (allocated bytes, then oldest) or newest-last-access (least recently accessed first, by atime). Ties break by path. \#(orderDefault)",
                  "enum": ["oldest", "largest", "newest-last-access"]
                },
                "first": {
                  "$ref": "#/definitions/globs",
                  "description": "Entries matching one of these globs (relative to the scope; for a trash, to its items folder) are evicted before all others, in `order` among themselves."
                },
                "maxEntries": {
                  "type": "integer",
                  "minimum": 1,
                  "description": "The most entries kept (a quota: regular files, hard links once; a trash: items). Over it, entries are evicted in order until at most this many are left, whatever their size."
                }
        """#
        let pad = String(repeating: " ", count: indent - 8)
        return text.split(separator: "\n", omittingEmptySubsequences: false).map { pad + $0 }.joined(separator: "\n")
    }
}
