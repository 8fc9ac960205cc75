// Filters every kind takes beside `match:`: `size: { over:, under: }`, `owner:`, `group:` and `case: insensitive`
// for the rule's globs. They narrow what the rule selects, as match does; the walk checks them where it checks
// match (Evaluation/RuleIndex.swift, CompiledRule). Names of users and groups are resolved once, here, when the
// policy is decoded: an unknown name is an error at its file:line:col, never a filter that matches nothing.

@_spi(Layers) import StoragePolicyFileSystem

/// A user or a group a rule's `owner:` / `group:` names: its id, and the name it was written as.
public struct PrincipalFilter: Sendable, Hashable {
    /// The uid or gid entries must have.
    public var id: UInt32
    /// The name as written in the policy, when it was a name (nil for a number).
    public var name: String?

    public init(id: UInt32, name: String? = nil) { self.id = id; self.name = name }

    /// `alice (uid 1000)` or `uid 1000`.
    package func text(_ what: String) -> String { name.map { "\($0) (\(what) \(id))" } ?? "\(what) \(id)" }
}

/// What a rule selects beyond its globs. Empty (the default) selects everything match selects.
public struct EntryFilters: Sendable, Hashable {
    /// `size: { over: N }`: regular files of more than N bytes (st_size).
    public var sizeOver: ByteSize?
    /// `size: { under: N }`: regular files of fewer than N bytes.
    public var sizeUnder: ByteSize?
    /// `owner:`: entries (the entry itself, never a symlink's target) owned by this uid.
    public var owner: PrincipalFilter?
    /// `group:`: entries whose group is this gid.
    public var group: PrincipalFilter?
    /// `case: insensitive`: match, exclude (and forbid's own globs) ignore letter case.
    public var caseInsensitive: Bool

    public init(sizeOver: ByteSize? = nil, sizeUnder: ByteSize? = nil, owner: PrincipalFilter? = nil,
                group: PrincipalFilter? = nil, caseInsensitive: Bool = false) {
        self.sizeOver = sizeOver; self.sizeUnder = sizeUnder; self.owner = owner; self.group = group
        self.caseInsensitive = caseInsensitive
    }

    /// True when some filter needs the entry's status (size, owner, group).
    public var needsStatus: Bool { sizeOver != nil || sizeUnder != nil || owner != nil || group != nil }

    /// True when owner or group is filtered: what a saved plan does not record, so apply checks it again.
    public var selectsByOwnership: Bool { owner != nil || group != nil }

    /// Why an entry of this type, owner, group and size is not selected; nil when it is.
    public func rejection(type: FileType, userID: UInt32, groupID: UInt32, size: Int64) -> String? {
        sizeRejection(type: type, size: size) ?? ownershipRejection(userID: userID, groupID: groupID)
    }

    /// Why an entry of this owner and group is not selected by the owner and group filters; nil when it is.
    public func ownershipRejection(userID: UInt32, groupID: UInt32) -> String? {
        if let owner, owner.id != userID { return "owned by uid \(userID), not \(owner.text("uid"))" }
        if let group, group.id != groupID { return "its group is gid \(groupID), not \(group.text("gid"))" }
        return nil
    }

    /// Why an entry of this type and size is not selected by the size filter; nil when it is. A saved plan
    /// records both (the identity's size), so its actions are checked against this too.
    public func sizeRejection(type: FileType, size: Int64) -> String? {
        guard sizeOver != nil || sizeUnder != nil else { return nil }
        // A folder's st_size says nothing of what it holds, and a symlink's is its target's length.
        guard type == .regular else { return "a size filter selects regular files only, not a \(type.rawValue)" }
        if let over = sizeOver, size <= over.bytes { return "\(size) bytes, not over \(over.bytes) (size: over \(over))" }
        if let under = sizeUnder, size >= under.bytes { return "\(size) bytes, not under \(under.bytes) (size: under \(under))" }
        return nil
    }

    /// What `explain` says of an entry that passes: `size 5 bytes, owner uid 0`.
    package func passing(userID: UInt32, groupID: UInt32, size: Int64) -> String? {
        var parts: [String] = []
        if sizeOver != nil || sizeUnder != nil { parts.append("size \(size) bytes") }
        if let owner { parts.append("owner \(owner.text("uid"))") }
        if let group { parts.append("group \(group.text("gid"))") }
        return parts.isEmpty ? nil : "passes the filters: " + parts.joined(separator: ", ")
    }

    /// The filters' lines of a rule in `validate --effective` (each `    key: value\n`).
    package var effectiveYAML: String {
        var out = ""
        if sizeOver != nil || sizeUnder != nil {
            var parts: [String] = []
            if let o = sizeOver { parts.append("over: \(o.bytes)") }
            if let u = sizeUnder { parts.append("under: \(u.bytes)") }
            out += "    size: { \(parts.joined(separator: ", ")) }\n"
        }
        // A name is written as the name (it resolves to the same id again); a number as the number.
        if let owner { out += "    owner: \(owner.name.map(EffectivePolicyWriter.quote) ?? "\(owner.id)")\n" }
        if let group { out += "    group: \(group.name.map(EffectivePolicyWriter.quote) ?? "\(group.id)")\n" }
        if caseInsensitive { out += "    case: insensitive\n" }
        return out
    }
}

extension PolicyDecoder {
    /// The rule keys the filters add beside match.
    static let filterKeys = ["size", "owner", "group", "case"]

    /// Decodes filter key `key` of a rule into `filters`; false when `key` is not a filter key.
    package mutating func filter(_ key: String, _ value: Node, label: String, into filters: inout EntryFilters) -> Bool {
        switch key {
        case "size": sizeFilter(value, context: "\(label): 'size'", into: &filters)
        case "owner": filters.owner = principal(value, context: "\(label): 'owner'", group: false)
        case "group": filters.group = principal(value, context: "\(label): 'group'", group: true)
        case "case":
            if let v = scalar(value, "\(label): 'case'") {
                if v == "insensitive" { filters.caseInsensitive = true }
                else if v != "sensitive" {
                    error(value, "\(label): invalid case '\(v)' (expected insensitive or sensitive; a naming rule's case goes under 'naming:')")
                }
            }
        default: return false
        }
        return true
    }

    private mutating func sizeFilter(_ node: Node, context: String, into filters: inout EntryFilters) {
        guard let pairs = mapping(node, context) else { return }
        for (k, v) in pairs {
            guard let name = keyName(k, allowed: ["over", "under"], context: context) else { continue }
            guard let bytes = size(v, context: "\(context): '\(name)'") else { continue }
            if name == "over" { filters.sizeOver = bytes } else { filters.sizeUnder = bytes }
        }
        if pairs.isEmpty { error(node, "\(context): give 'over', 'under' or both, e.g. { over: 100MiB }") }
        if let o = filters.sizeOver, let u = filters.sizeUnder, u.bytes <= o.bytes + 1 {
            error(node, "\(context): no size is over \(o.bytes) and under \(u.bytes) bytes; the rule would select nothing")
        }
    }

    /// A user or group as a name (resolved now) or a number; an unknown name is an error at its mark.
    mutating func principal(_ node: Node, context: String, group: Bool) -> PrincipalFilter? {
        guard let text = scalar(node, context) else { return nil }
        let what = group ? "group" : "user"
        if !text.isEmpty, text.allSatisfy({ $0.isASCII && $0.isNumber }) {
            guard let id = UInt32(text), id != UInt32.max else {
                error(node, "\(context): \(what) id \(text) is out of range (0 to \(UInt32.max - 1))")
                return nil
            }
            return PrincipalFilter(id: id)
        }
        switch group ? UserDatabase.groupID(named: text) : UserDatabase.userID(named: text) {
        case .id(let id): return PrincipalFilter(id: id, name: text)
        case .unknown:
            error(node, "\(context): no \(what) named '\(text)' on this system (\(group ? "getent group" : "getent passwd") lists them; a number is taken as an id)")
        case .failed(let why):
            error(node, "\(context): the \(what) database could not be read for '\(text)': \(why)")
        }
        return nil
    }
}

/// Docs/policy.schema.json: the filters among a rule's properties (JSON text at the depth they stand there).
package enum EntryFilterSchema {
    package static let properties = #"""
            "size": {
              "description": "Select only regular files of more than over, or fewer than under, bytes (st_size), or between the two: { over: 100MiB }, { under: 1KiB }.",
              "type": "object",
              "additionalProperties": false,
              "minProperties": 1,
              "properties": {
                "over": {
                  "$ref": "#/definitions/size",
                  "description": "Regular files of more than this many bytes."
                },
                "under": {
                  "$ref": "#/definitions/size",
                  "description": "Regular files of fewer than this many bytes."
                }
              }
            },
            "owner": {
              "description": "Select only entries owned by this user: a name (resolved once, when the policy is read; an unknown name is an error) or a uid. The entry itself is judged, never a symlink's target.",
              "type": ["string", "integer"]
            },
            "group": {
              "description": "Select only entries of this group: a name (resolved once, when the policy is read) or a gid.",
              "type": ["string", "integer"]
            },
            "case": {
              "description": "insensitive: match, exclude and forbid globs ignore letter case ('*.txt' also selects 'A.TXT'). sensitive (the default) compares bytes.",
              "enum": ["insensitive", "sensitive"],
              "default": "sensitive"
            },
    """#
}
