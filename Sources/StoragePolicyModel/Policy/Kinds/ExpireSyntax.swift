// expire in the policy language: `expire: 24h` or `expire: { after: 24h, by: mtime, keep: 3, unit: directory }`.

/// `expire: { after: 24h, by: mtime }`
public struct Expire: Sendable, Hashable {
    /// Entries older than this are deleted.
    public var after: PolicyDuration
    /// The timestamp age is judged by.
    public var by: Timestamp
    /// `keep: N`: in each directory, the N newest selected entries (or units) stay, expired or not.
    public var keep: Int
    /// What one deletion is: an entry, or (`unit: directory`) a direct child folder of the scope as a whole.
    public var unit: RetentionUnit
    /// `by: [atime, mtime]`: the newest of exactly these timestamps (two or more, as written; `by` is then
    /// `.newest`). nil: `by` alone decides.
    public var newestOf: [Timestamp]? = nil
    /// A floor for pressure rules (which evict a regenerable expire rule's files before `after`): nothing
    /// younger than this, by the same timestamp, is evicted. It changes nothing else; nil: no floor beyond `keep`.
    public var minAge: PolicyDuration? = nil

    /// Expire after `after`, judged by `by`, keeping the `keep` newest per directory.
    public init(after: PolicyDuration, by: Timestamp = .mtime, keep: Int = 0, unit: RetentionUnit = .entry) {
        self.after = after; self.by = by; self.keep = keep; self.unit = unit
    }

    /// Which timestamp an entry's age is measured from.
    public enum Timestamp: String, Sendable, Hashable, CaseIterable {
        case mtime, atime, ctime
        /// The newest of atime, mtime, btime (where recorded) and (for files) ctime: the safest, and
        /// systemd-tmpfiles' default (`abcmABM`).
        case newest
        /// The birth time (statx btime). Where the file system records none, entries are skipped (kept).
        case birth
    }
}

/// The expire kind's language side.
package struct ExpireSyntax: RuleKindSyntax {
    package static let keyword = "expire"
    package static let honoursInUse = true
    package let expire: Expire

    package init(_ expire: Expire) { self.expire = expire }

    /// Docs/policy.schema.json: the kind's key among a rule's properties, as its description (JSON text).
    package static let schemaSummary = #"Delete entries older than a duration. `expire: 24h` is short for `expire: { after: 24h }`."#

    /// Docs/policy.schema.json: the kind's entry in `definitions`, as written there.
    package static let schemaDefinition = #"""
        "expire": {
          "description": "A duration (`expire: 24h`) or a mapping with after and by.",
          "anyOf": [
            { "$ref": "#/definitions/duration" },
            {
              "type": "object",
              "additionalProperties": false,
              "required": ["after"],
              "properties": {
                "after": {
                  "$ref": "#/definitions/duration",
                  "description": "Entries whose timestamp is older than this are deleted: 90s, 24h, 7d, 1d12h, 2w."
                },
                "by": {
                  "description": "The timestamp age is judged by: mtime, atime, ctime, or newest (the newest of atime, mtime, the birth time where the file system records one and, for files, ctime: the safest, and systemd-tmpfiles' default abcmABM), or birth (the birth time, statx btime; where the file system records none, plan and audit say so once per rule and its entries are kept). A list, such as [atime, mtime] (tmpfiles' AM), is the newest of exactly those.",
                  "anyOf": [
                    { "enum": ["mtime", "atime", "ctime", "newest", "birth"] },
                    {
                      "type": "array",
                      "items": { "enum": ["mtime", "atime", "ctime", "birth"] },
                      "minItems": 1
                    }
                  ],
                  "default": "mtime"
                },
                "keep": {
                  "$ref": "#/definitions/count",
                  "description": "In each directory of the scope, the N newest entries (or units) the rule selects are never deleted by it, expired or not.",
                  "default": 0
                },
                "unit": {
                  "$ref": "#/definitions/retentionUnit",
                  "description": "directory: each direct child folder of the scope expires whole, dated by the newest timestamp (per by) of anything inside it."
                },
                "minAge": {
                  "$ref": "#/definitions/duration",
                  "description": "Only for pressure rules, which may evict a regenerable expire rule's files before `after` (oldest first): no file younger than this (by the same timestamp) is evicted. Changes nothing else."
                }
              }
            }
          ]
        }
    """#

    package static func decode(_ node: Node, context: String, _ decoder: inout PolicyDecoder) -> Rule.Kind? {
        if node.scalar != nil, !node.isNull {  // shorthand: `expire: 24h`
            return decoder.duration(node, context: context).map { .expire(Expire(after: $0)) }
        }
        guard let pairs = decoder.mapping(node, context) else { return nil }
        var after: PolicyDuration? = nil
        var expire = Expire(after: PolicyDuration(seconds: 0))
        for (k, v) in pairs {
            guard let name = decoder.keyName(k, allowed: ["after", "by", "keep", "unit", "minAge"], context: context) else { continue }
            if name == "after" { after = decoder.duration(v, context: "\(context): 'after'") }
            if name == "by" { decodeBy(v, context: "\(context): 'by'", into: &expire, &decoder) }
            if name == "keep", let n = decoder.count(v, context: "\(context): 'keep'") { expire.keep = n }
            if name == "minAge" { expire.minAge = decoder.duration(v, context: "\(context): 'minAge'") }
            if name == "unit", let u = decoder.enumValue(v, RetentionUnit.self, context: "\(context): 'unit'") { expire.unit = u }
        }
        guard let after else {
            if !decoder.hasMisspelledKey(pairs, key: "after") { decoder.error(node, "\(context): missing 'after' (e.g. after: 24h)") }
            return nil
        }
        expire.after = after
        if expire.newestOf != nil && expire.unit == .directory {
            decoder.error(node, "\(context): 'by' as a list is not supported with 'unit: directory' (units are dated by one timestamp); use one of mtime, atime, ctime, newest, birth")
            return nil
        }
        return .expire(expire)
    }

    /// `by: mtime`, or `by: [atime, mtime]` (the newest of those): a list of one is that timestamp; `newest` is
    /// already the newest of all, so it is not listed.
    private static func decodeBy(_ v: Node, context: String, into expire: inout Expire, _ decoder: inout PolicyDecoder) {
        guard v.scalar == nil || v.isNull else {
            if let t = decoder.enumValue(v, Expire.Timestamp.self, context: context) { expire.by = t }
            return
        }
        guard let items = decoder.sequence(v, context) else { return }
        var listed: [Expire.Timestamp] = []
        for item in items {
            guard let t = decoder.enumValue(item, Expire.Timestamp.self, context: context) else { continue }
            if t == .newest {
                decoder.error(item, "\(context): 'newest' is already the newest of all timestamps; list only mtime, atime, ctime and birth, or write 'by: newest'")
            } else if listed.contains(t) {
                decoder.error(item, "\(context): '\(t.rawValue)' is listed twice")
            } else {
                listed.append(t)
            }
        }
        if items.isEmpty { decoder.error(v, "\(context): an empty list judges by nothing; give one or more of mtime, atime, ctime, birth") }
        if listed.count == 1 { expire.by = listed[0] }
        if listed.count > 1 { expire.by = .newest; expire.newestOf = listed }
    }

    package var effectiveYAML: String {
        var parts = ["after: \(expire.after)", "by: \(expire.byText)"]
        if expire.keep > 0 { parts.append("keep: \(expire.keep)") }
        if expire.unit != .entry { parts.append("unit: \(expire.unit.rawValue)") }
        if let a = expire.minAge { parts.append("minAge: \(a)") }
        return "expire: { \(parts.joined(separator: ", ")) }"
    }

    package var removal: (verb: String, outcome: String)? { deletesEntries }

    package func validate(_ rule: Rule, in policy: Policy, label: String, _ report: (Diagnostic.Severity, String) -> Void) {
        if expire.after.seconds == 0 {
            report(.warning, "\(label): 'after: 0s' expires everything in '\(rule.path.escaped)' at once")
        }
    }
}

extension Rule {
    /// `expire: { after:, by: }` — delete entries older than `after`.
    public static func expire(_ name: String, in path: String, after: PolicyDuration,
                              by: Expire.Timestamp = .mtime) -> RuleDraft {
        RuleDraft(name: name, path: path, kind: .ready(.expire(Expire(after: after, by: by))))
    }
}
