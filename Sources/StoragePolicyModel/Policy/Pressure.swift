// Pressure rules, the top-level `pressure:` list: when the root's volume has less free space than `freeBelow`,
// the named rules evict beyond their normal limits until `freeUntil`. Only rules marked `regenerable: true`
// may be named (journald's lesson: purging to keep free space when someone else fills the disk is an attack
// vector, so pressure may only ever take data that can be fetched or rebuilt), and only quota, expire and trash
// rules: a co-tenant who fills the disk drains caches, down to their minAge and keep floors, and nothing else.

@_spi(Layers) import StoragePolicyFileSystem

/// `- name: low-disk, freeBelow: 10%, freeUntil: 15%, evict: [thumbnail-quota]`
public struct PressureRule: Sendable, Hashable {
    public var name: String
    /// The rule acts when the volume's free space (statvfs f_bavail) is below this.
    public var freeBelow: FreeSpace
    /// Once acting, it evicts until the free space is at least this.
    public var freeUntil: FreeSpace
    /// The rules that evict, in order, by name.
    public var evict: [String]
    /// Where it is written (nil for a policy built in code), and where each `evict` name is.
    public var location: PolicyLocation?
    var evictLocations: [PolicyLocation] = []

    public init(name: String, freeBelow: FreeSpace, freeUntil: FreeSpace, evict: [String], location: PolicyLocation? = nil) {
        self.name = name; self.freeBelow = freeBelow; self.freeUntil = freeUntil; self.evict = evict; self.location = location
    }

    /// A free-space level: a percentage of the volume's size, or a size.
    public enum FreeSpace: Sendable, Hashable, CustomStringConvertible {
        case percent(Double)
        case size(ByteSize)

        /// The level in bytes on a volume of `total` bytes.
        public func bytes(ofVolume total: Int64) -> Int64 {
            switch self {
            case .size(let s): return s.bytes
            case .percent(let p): return Int64((Double(total) * p / 100).rounded(.up))
            }
        }

        public var description: String {
            switch self {
            case .size(let s): return s.description
            case .percent(let p): return EffectivePolicyWriter.percent(p)
            }
        }

        var effective: String {
            switch self {
            case .size(let s): return "\(s.bytes)"
            case .percent(let p): return EffectivePolicyWriter.percent(p)
            }
        }
    }

    /// The kinds a pressure rule may name in this version.
    static let evictableKinds = ["quota", "expire", "trash"]
}

extension PolicyDecoder {
    /// The top-level `pressure:` list.
    mutating func pressureRules(_ node: Node) -> [PressureRule] {
        guard let items = sequence(node, "'pressure'") else { return [] }
        var result: [PressureRule] = []
        for item in items {
            guard let pairs = mapping(item, "a pressure rule") else { continue }
            let name = pairs.first { $0.key.scalar == "name" }?.value.scalar
            let label = name.map { "pressure rule '\($0)'" } ?? "pressure rule"
            var below: PressureRule.FreeSpace? = nil, until: PressureRule.FreeSpace? = nil
            var evict: [String] = [], evictLocations: [PolicyLocation] = []
            for (k, v) in pairs {
                guard let key = keyName(k, allowed: ["name", "description", "freeBelow", "freeUntil", "evict"], context: label) else { continue }
                switch key {
                case "name":
                    if let n = scalar(v, "\(label): 'name'"), !PolicyDecoder.isIdentifier(n) {
                        error(v, "pressure rule name '\(n)' must be letters, digits, '-', '_' or '.'")
                    }
                case "description": _ = scalar(v, "\(label): 'description'")
                case "freeBelow": below = freeSpace(v, context: "\(label): 'freeBelow'")
                case "freeUntil": until = freeSpace(v, context: "\(label): 'freeUntil'")
                case "evict":
                    for n in sequence(v, "\(label): 'evict'") ?? [] {
                        if let s = scalar(n, "\(label): 'evict'") { evict.append(s); evictLocations.append(location(n)) }
                    }
                default: break
                }
            }
            if name == nil { error(item, "pressure rule: missing 'name'") }
            for (key, value) in [("freeBelow", below), ("freeUntil", until)] where value == nil && !hasMisspelledKey(pairs, key: key) {
                error(item, "\(label): missing '\(key)' (a percentage of the volume such as 10%, or a size such as 2GiB)")
            }
            if evict.isEmpty, !pairs.contains(where: { $0.key.scalar == "evict" }) {
                error(item, "\(label): missing 'evict' (the regenerable quota rules it may evict, in order: evict: [thumbnail-quota])")
            }
            if let below, let until, let at = pairs.first(where: { $0.key.scalar == "freeUntil" })?.value {
                var backwards = false
                if case .percent(let a) = below, case .percent(let b) = until, b < a { backwards = true }
                if case .size(let a) = below, case .size(let b) = until, b < a { backwards = true }
                if backwards {
                    error(at, "\(label): freeUntil \(until) is below freeBelow \(below); eviction runs until freeUntil, so it must be at or above freeBelow")
                }
            }
            guard let name, let below, let until else { continue }
            var rule = PressureRule(name: name, freeBelow: below, freeUntil: until, evict: evict, location: location(item))
            rule.evictLocations = evictLocations
            result.append(rule)
        }
        return result
    }

    /// `10%` (above 0, at most 100) or a size.
    package mutating func freeSpace(_ node: Node, context: String) -> PressureRule.FreeSpace? {
        guard let text = scalar(node, context) else { return nil }
        if text.hasSuffix("%") {
            if let p = Double(text.dropLast()), p > 0, p <= 100 { return .percent(p) }
        } else if let s = ByteSize(parsing: text) {
            return .size(s)
        }
        error(node, "\(context): invalid free space '\(text)' (expected a percentage of the volume such as 10%, or a size: \(ByteSize.acceptedForms))")
        return nil
    }
}

package enum PressureChecks {
    /// Every name a pressure rule evicts must be a regenerable quota, expire or trash rule of the policy (errors at
    /// the name); an expire rule with `unit: directory` cannot be named (pressure evicts its files one by one).
    package static func validate(_ policy: Policy) -> [Diagnostic] {
        var out: [Diagnostic] = []
        var seen = Set<String>()
        for p in policy.pressure {
            if !seen.insert(p.name).inserted {
                out.append(Diagnostic(severity: .error, location: p.location, message: "duplicate pressure rule name '\(p.name)'"))
            }
            for (i, name) in p.evict.enumerated() {
                let at = i < p.evictLocations.count ? p.evictLocations[i] : p.location
                let label = "pressure rule '\(p.name)': 'evict'"
                guard let rule = policy.rules.first(where: { $0.name == name }) else {
                    let hint = Suggestion.closest(to: name, in: policy.rules.map(\.name)).map { " (did you mean '\($0)'?)" } ?? ""
                    out.append(Diagnostic(severity: .error, location: at, message: "\(label): there is no rule '\(name)'\(hint)"))
                    continue
                }
                guard PressureRule.evictableKinds.contains(rule.kind.keyword) else {
                    out.append(Diagnostic(severity: .error, location: at, message: "\(label): rule '\(name)' (\(rule.kind.keyword)) is not a quota, expire or trash rule; pressure evicts only through those (name a regenerable quota over the same cache)"))
                    continue
                }
                if case .expire(let expire) = rule.kind, expire.unit == .directory {
                    out.append(Diagnostic(severity: .error, location: at, message: "\(label): rule '\(name)' expires whole folders (unit: directory); pressure evicts an expire rule's files one by one, so name an expire rule with unit: entry, or a quota with unit: directory"))
                    continue
                }
                if !rule.regenerable {
                    out.append(Diagnostic(severity: .error, location: at, message: "\(label): rule '\(name)' is not marked regenerable; add 'regenerable: true' to it if its files can be fetched or rebuilt again (pressure never evicts anything else)"))
                }
                if rule.mode == .audit {
                    out.append(Diagnostic(severity: .warning, location: at, message: "\(label): rule '\(name)' is in audit mode, so pressure only reports what it would evict"))
                }
            }
        }
        return out
    }

    /// `validate --effective`'s lines for the list.
    package static func effectiveYAML(_ policy: Policy) -> String {
        guard !policy.pressure.isEmpty else { return "" }
        var out = "pressure:\n"
        for p in policy.pressure {
            if let from = p.location { out += "  # from \(EffectivePolicyWriter.origin(from))\n" }
            out += "  - name: \(EffectivePolicyWriter.quote(p.name))\n"
            out += "    freeBelow: \(p.freeBelow.effective)\n    freeUntil: \(p.freeUntil.effective)\n"
            out += "    evict: \(EffectivePolicyWriter.list(p.evict))\n"
        }
        return out
    }
}
