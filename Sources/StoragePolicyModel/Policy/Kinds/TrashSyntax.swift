// trash in the policy language: `trash: 30d` or `trash: { retain: 30d, layout: freedesktop, maxSize: 1GiB }`.

@_spi(Layers) import StoragePolicyFileSystem

/// `trash: { retain: 30d }`
public struct TrashRetention: Sendable, Hashable {
    /// Items trashed longer ago than this are deleted.
    public var retain: PolicyDuration
    /// How the trash folder is organised.
    public var layout: Layout
    /// After retention, the items trashed longest ago go until the trash holds at most this; nil: no cap.
    public var maxSize: ByteSize?
    /// `order` and `first` (which items maxSize and maxEntries take first) and `maxEntries`.
    public var eviction = EvictionChoice()
    /// A floor for pressure rules (which may evict a regenerable trash's items before `retain`): nothing
    /// trashed more recently than this is evicted. It changes nothing else; nil: no floor.
    public var minAge: PolicyDuration? = nil
    /// `discover: true`: the rule runs, rule path and all, on every trash folder the FreeDesktop specification
    /// names (TrashDiscovery: the home trash, each volume's `.Trash/$uid` and `.Trash-$uid`; every user's when
    /// run as root), each as a root of its own (PolicyRoots.swift). Such a rule has no `path`.
    public var discover = false

    /// Keep trashed items for `retain`, and (with `maxSize`) the trash at most that big.
    public init(retain: PolicyDuration, layout: Layout = .automatic, maxSize: ByteSize? = nil) {
        self.retain = retain; self.layout = layout; self.maxSize = maxSize
    }

    /// The layout of a trash folder (declared with TrashFolder, in FileSystem/TrashFolder.swift).
    public typealias Layout = TrashFolder.Layout
}

/// The trash kind's language side.
package struct TrashSyntax: RuleKindSyntax {
    package static let keyword = "trash"
    package static let honoursInUse = true
    package let retention: TrashRetention

    package init(_ retention: TrashRetention) { self.retention = retention }

    /// Docs/policy.schema.json: the kind's key among a rule's properties, as its description (JSON text).
    package static let schemaSummary = #"The scope is a trash folder: delete items that have been in it longer than a duration. `trash: 30d` is short for `trash: { retain: 30d }`."#

    /// Docs/policy.schema.json: the kind's entry in `definitions`, as written there.
    package static let schemaDefinition = #"""
        "trash": {
          "description": "A duration (`trash: 30d`) or a mapping with retain and layout.",
          "anyOf": [
            { "$ref": "#/definitions/duration" },
            {
              "type": "object",
              "additionalProperties": false,
              "required": ["retain"],
              "properties": {
                "retain": {
                  "$ref": "#/definitions/duration",
                  "description": "How long an item stays in the trash, measured from when it was trashed (never from its mtime): 30d."
                },
                "layout": {
                  "description": "How the trash folder is organised. auto: freedesktop when the folder has files/ or info/, else app. freedesktop: files/NAME with info/NAME.trashinfo (DeletionDate). app: items directly in the folder, stamped by `policyctl trash` (hard-linked files and symlinks in its .policyctl-info/ index; else judged by ctime).",
                  "enum": ["auto", "freedesktop", "app"],
                  "default": "auto"
                },
                "maxSize": {
                  "$ref": "#/definitions/size",
                  "description": "After retention, while the trash holds more than this (allocated bytes), items are deleted in `order` (by default trashed longest ago first) until it is at or below it. An item larger than maxSize on its own goes first, so one big item never empties the whole trash."
                },
                "discover": {
                  "type": "boolean",
                  "default": false,
                  "description": "true: the rule runs on every trash folder the FreeDesktop specification names, as `policyctl trash --discover` lists them (the home trash, each mounted volume's .Trash/$uid in a sticky root-owned .Trash, and .Trash-$uid; every user's when run as root), each as a root of its own with its own lock and journal. Such a rule has no path, and no root of `roots:` names it."
                },
                "minAge": {
                  "$ref": "#/definitions/duration",
                  "description": "Only for pressure rules, which may evict a regenerable trash's items before `retain` (in `order`): no item trashed more recently than this is evicted. Changes nothing else."
                },
    \#(EvictionChoice.schemaProperties(orderDefault: "For a trash, oldest is trashed longest ago first (the default) and newest-last-access reads the item's own atime.", indent: 12))
              }
            }
          ]
        }
    """#

    package static func decode(_ node: Node, context: String, _ decoder: inout PolicyDecoder) -> Rule.Kind? {
        if node.scalar != nil, !node.isNull {
            return decoder.duration(node, context: context).map { .trash(TrashRetention(retain: $0)) }
        }
        guard let pairs = decoder.mapping(node, context) else { return nil }
        var retain: PolicyDuration? = nil
        var layout = TrashRetention.Layout.automatic
        var maxSize: ByteSize? = nil
        var eviction = EvictionChoice()
        var minAge: PolicyDuration? = nil
        var discover = false
        for (k, v) in pairs {
            guard let name = decoder.keyName(k, allowed: ["retain", "layout", "maxSize", "minAge", "discover"] + EvictionChoice.keys, context: context) else { continue }
            if name == "retain" { retain = decoder.duration(v, context: "\(context): 'retain'") }
            if name == "layout", let l = decoder.enumValue(v, TrashRetention.Layout.self, context: "\(context): 'layout'") { layout = l }
            if name == "maxSize" { maxSize = decoder.size(v, context: "\(context): 'maxSize'") }
            if name == "minAge" { minAge = decoder.duration(v, context: "\(context): 'minAge'") }
            if name == "discover", let b = decoder.bool(v, "\(context): 'discover'") { discover = b }
            eviction.decode(name, v, context: context, &decoder)
        }
        guard let retain else {
            if !decoder.hasMisspelledKey(pairs, key: "retain") { decoder.error(node, "\(context): missing 'retain' (e.g. retain: 30d)") }
            return nil
        }
        var retention = TrashRetention(retain: retain, layout: layout, maxSize: maxSize)
        retention.eviction = eviction
        retention.minAge = minAge
        retention.discover = discover
        return .trash(retention)
    }

    package var effectiveYAML: String {
        var parts = ["retain: \(retention.retain)", "layout: \(retention.layout.rawValue)"]
        if let m = retention.maxSize { parts.append("maxSize: \(m.bytes)") }
        if let o = retention.eviction.order { parts.append("order: \(o.rawValue)") }
        parts += retention.eviction.effectiveParts
        if let a = retention.minAge { parts.append("minAge: \(a)") }
        if retention.discover { parts.append("discover: true") }
        return "trash: { \(parts.joined(separator: ", ")) }"
    }

    package var removal: (verb: String, outcome: String)? { deletesEntries }

    package func validate(_ rule: Rule, in policy: Policy, label: String, _ report: (Diagnostic.Severity, String) -> Void) {
        if rule.path.isRoot && !retention.discover {
            report(.error, "\(label): the trash folder cannot be the root itself; name a folder such as Documents/UserFiles/.Trash")
        }
    }

    package static func nestedWarning(_ outer: String, _ inner: String) -> String? {
        "rules '\(outer)' and '\(inner)' are nested trash folders"
    }
}

extension Rule {
    /// `trash: { retain: }` — empty a trash folder of items trashed longer ago than `retain`.
    public static func trash(_ name: String, in path: String, retain: PolicyDuration,
                             layout: TrashRetention.Layout = .automatic) -> RuleDraft {
        RuleDraft(name: name, path: path, kind: .ready(.trash(TrashRetention(retain: retain, layout: layout))))
    }
}
