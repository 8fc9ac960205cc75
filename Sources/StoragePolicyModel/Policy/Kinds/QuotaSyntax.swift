// quota in the policy language: `quota: { max: 512MiB, target: 90%, evict: oldest, minAge: 1d, keep: 2, unit: directory }`.

@_spi(Layers) import StoragePolicyFileSystem

/// `quota: { max: 512MiB, target: 90%, evict: oldest }`
public struct Quota: Sendable, Hashable {
    /// The most the scope's regular files may take (allocated bytes, as `du`).
    public var max: ByteSize
    /// What eviction brings the total down to.
    public var target: Target
    /// Which files go first.
    public var evict: Eviction
    /// No unit younger than this is evicted; nil: any age.
    public var minAge: PolicyDuration?
    /// The N newest units are never evicted.
    public var keep: Int
    /// What one eviction is: a file, or (`unit: directory`) a direct child folder of the scope as a whole.
    public var unit: RetentionUnit
    /// `order`, `first` and `maxEntries` (`order` replaces `evict` when set).
    public var eviction = EvictionChoice()
    /// `per: owner`: each owner's (uid's) files are a quota of their own; nil: one quota for the scope.
    public var per: Per? = nil

    /// What a quota is counted per.
    public enum Per: String, Sendable, Hashable, CaseIterable {
        /// Each uid's files apart: one heavy user evicts only their own files.
        case owner
    }

    /// The order in effect: `order` when set, else `evict`'s (oldest by mtime, lru by atime).
    public var evictionOrder: EvictionOrder { eviction.order ?? (evict == .lru ? .newestLastAccess : .oldest) }

    /// A quota of `max`, evicting down to `target`.
    public init(max: ByteSize, target: Target = .percent(100), evict: Eviction = .oldest,
                minAge: PolicyDuration? = nil, keep: Int = 0, unit: RetentionUnit = .entry) {
        self.max = max; self.target = target; self.evict = evict
        self.minAge = minAge; self.keep = keep; self.unit = unit
    }

    /// Where eviction stops: a size, or a percentage of `max`.
    public enum Target: Sendable, Hashable {
        case size(ByteSize)
        /// A percentage of `max`.
        case percent(Double)

        /// The target in bytes, for a quota of `max`.
        public func bytes(of max: ByteSize) -> Int64 {
            switch self {
            case .size(let s): return s.bytes
            case .percent(let p): return Int64((Double(max.bytes) * p / 100).rounded(.down))
            }
        }
    }

    /// The order files are evicted in (ties break by path).
    public enum Eviction: String, Sendable, Hashable, CaseIterable {
        /// Oldest modification time first.
        case oldest
        /// Least recently accessed first (atime; approximate on relatime/noatime mounts).
        case lru
    }
}

/// The quota kind's language side.
extension Quota {
    /// The timestamp a quota orders (and dates units) by.
    package var timestamp: Expire.Timestamp { evict == .lru ? .atime : .mtime }
}

package struct QuotaSyntax: RuleKindSyntax {
    package static let keyword = "quota"
    package static let honoursInUse = true
    package let quota: Quota

    package init(_ quota: Quota) { self.quota = quota }

    /// Docs/policy.schema.json: the kind's key among a rule's properties, as its description (JSON text).
    package static let schemaSummary = #"Keep the regular files under the scope within a size, evicting until the total is at or below the target."#

    /// Docs/policy.schema.json: the kind's entry in `definitions`, as written there.
    package static let schemaDefinition = #"""
        "quota": {
          "description": "A size cap on the regular files under the scope.",
          "type": "object",
          "additionalProperties": false,
          "required": ["max"],
          "properties": {
            "max": {
              "$ref": "#/definitions/size",
              "description": "The most the regular files under the scope may take, in allocated bytes (as du counts): 512MiB, 2GiB."
            },
            "target": {
              "$ref": "#/definitions/quotaTarget",
              "description": "Once over max, evict until the total is at or below this: a percentage of max (90%) or a size at or below max.",
              "default": "100%"
            },
            "evict": {
              "description": "Eviction order. oldest: oldest modification time first. lru: least recently accessed first (atime, approximate on relatime and noatime mounts). Ties break by path.",
              "enum": ["oldest", "lru"],
              "default": "oldest"
            },
            "minAge": {
              "$ref": "#/definitions/duration",
              "description": "No unit younger than this is evicted. When it stops the total from reaching target, the plan evicts what it may and reports a violation."
            },
            "keep": {
              "$ref": "#/definitions/count",
              "description": "The N newest units are never evicted. When it stops the total from reaching target, the plan evicts what it may and reports a violation.",
              "default": 0
            },
            "unit": {
              "$ref": "#/definitions/retentionUnit",
              "description": "entry: each file is evicted on its own. directory: each direct child folder of the scope is evicted whole, dated by the newest evict timestamp of anything inside it and sized by the allocated bytes of its files; files directly in the scope are units of their own."
            },
    \#(EvictionChoice.schemaProperties(orderDefault: "Replaces evict (give one of the two); minAge and keep still protect the newest files.", indent: 8)),
            "per": {
              "description": "owner: the scope's files are grouped by owner (uid) and each owner over max is evicted down to target on their own (minAge, keep and maxEntries per owner too); other owners' files are untouched. Not with unit: directory.",
              "enum": ["owner"]
            }
          }
        }
    """#

    package static func decode(_ node: Node, context: String, _ decoder: inout PolicyDecoder) -> Rule.Kind? {
        guard let pairs = decoder.mapping(node, context) else { return nil }
        var max: ByteSize? = nil
        var target = Quota.Target.percent(100)
        var targetNode: Node? = nil
        var maxText = ""
        var evict = Quota.Eviction.oldest
        var minAge: PolicyDuration? = nil
        var keep = 0
        var unit = RetentionUnit.entry
        var eviction = EvictionChoice()
        var evictNode: Node? = nil
        var per: Quota.Per? = nil
        var perNode: Node? = nil
        for (k, v) in pairs {
            guard let name = decoder.keyName(k, allowed: ["max", "target", "evict", "minAge", "keep", "unit", "per"] + EvictionChoice.keys, context: context) else { continue }
            switch name {
            case "minAge":
                minAge = decoder.duration(v, context: "\(context): 'minAge'")
            case "keep":
                if let n = decoder.count(v, context: "\(context): 'keep'") { keep = n }
            case "unit":
                if let u = decoder.enumValue(v, RetentionUnit.self, context: "\(context): 'unit'") { unit = u }
            case "max":
                max = decoder.size(v, context: "\(context): 'max'")
                maxText = v.scalar ?? ""
            case "target":
                targetNode = v
                if let text = decoder.scalar(v, "\(context): 'target'") {
                    if text.hasSuffix("%"), let p = Double(text.dropLast()), p > 0, p <= 100 {
                        target = .percent(p)
                    } else if let s = ByteSize(parsing: text) {
                        target = .size(s)
                    } else {
                        decoder.error(v, "\(context): invalid target '\(text)' (expected a percentage of max such as 90%, or a size: \(ByteSize.acceptedForms))")
                    }
                }
            case "per":
                perNode = v
                per = decoder.enumValue(v, Quota.Per.self, context: "\(context): 'per'")
            case "evict":
                evictNode = v
                if let e = decoder.enumValue(v, Quota.Eviction.self, context: "\(context): 'evict'") { evict = e }
            default:
                eviction.decode(name, v, context: context, &decoder)
            }
        }
        guard let max else {
            if !decoder.hasMisspelledKey(pairs, key: "max") { decoder.error(node, "\(context): missing 'max' (e.g. max: 512MiB)") }
            return nil
        }
        if case .size(let s) = target, s > max, let targetNode {
            decoder.error(targetNode, "\(context): target \(targetNode.scalar ?? s.description) is above max \(maxText.isEmpty ? max.description : maxText); eviction stops at the target, so it must be at or below max")
        }
        if let order = eviction.order {
            if let evictNode {
                decoder.error(evictNode, "\(context): give 'order' or 'evict', not both (order: newest-last-access is evict: lru; drop 'evict')")
            }
            // The judge and the atime notes read `evict`: keep it in step with the order.
            evict = order == .newestLastAccess ? .lru : .oldest
        }
        if eviction.maxEntries != nil, unit == .directory, let n = pairs.first(where: { $0.key.scalar == "maxEntries" })?.value {
            decoder.error(n, "\(context): 'maxEntries' counts files, so it cannot be combined with unit: directory (drop one of the two)")
        }
        if per != nil, unit == .directory, let perNode {
            decoder.error(perNode, "\(context): 'per: owner' counts each owner's files, so it cannot be combined with unit: directory (a folder's files may have several owners; drop one of the two)")
        }
        var quota = Quota(max: max, target: target, evict: evict, minAge: minAge, keep: keep, unit: unit)
        quota.eviction = eviction
        quota.per = per
        return .quota(quota)
    }

    package var effectiveYAML: String {
        let target = switch quota.target { case .size(let s): "\(s.bytes)"; case .percent(let p): EffectivePolicyWriter.percent(p) }
        var parts = ["max: \(quota.max.bytes)", "target: \(target)",
                     quota.eviction.order.map { "order: \($0.rawValue)" } ?? "evict: \(quota.evict.rawValue)"]
        if let a = quota.minAge { parts.append("minAge: \(a)") }
        if quota.keep > 0 { parts.append("keep: \(quota.keep)") }
        if quota.unit != .entry { parts.append("unit: \(quota.unit.rawValue)") }
        parts += quota.eviction.effectiveParts
        if let per = quota.per { parts.append("per: \(per.rawValue)") }
        return "quota: { \(parts.joined(separator: ", ")) }"
    }

    package var removal: (verb: String, outcome: String)? { deletesEntries }

    package func validate(_ rule: Rule, in policy: Policy, label: String, _ report: (Diagnostic.Severity, String) -> Void) {
        if let type = rule.type, type == .directory || type == .symlink {
            report(.error, "\(label): quota counts regular files, so 'type: \(type.rawValue)' can never match")
        }
    }

    package static func nestedWarning(_ outer: String, _ inner: String) -> String? {
        "rules '\(outer)' and '\(inner)' both set a quota on nested scopes; each evicts on its own count"
    }
}

extension Rule {
    /// `quota: { max:, target:, evict: }` — keep a folder's files under `max`, evicting down to `target`.
    public static func quota(_ name: String, in path: String, max: ByteSize, target: Quota.Target = .percent(100),
                             evict: Quota.Eviction = .oldest) -> RuleDraft {
        RuleDraft(name: name, path: path, kind: .ready(.quota(Quota(max: max, target: target, evict: evict))))
    }
}
