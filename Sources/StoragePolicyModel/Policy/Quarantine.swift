// The policy's `quarantine:` (top level and per rule) and `journal:` keys: how long deletes are held back in
// the quarantine before they are purged, and how much of the journal stays whole. Values only: apply decides per
// delete from `window(for:)` (Docs/policy-reference.md, "quarantine", "journal").

@_spi(Layers) import StoragePolicyFileSystem

/// A rule's `quarantine:`: its own window, or `none` (its deletes are plain deletes).
public enum QuarantineSetting: Sendable, Hashable, CustomStringConvertible {
    case none
    case window(PolicyDuration)

    public var description: String {
        switch self {
        case .none: "none"
        case .window(let d): d.description
        }
    }
}

extension Policy {
    /// `journal: { keep: 10, history: 256MiB }`: the newest `keep` transactions stay whole in the live journal
    /// when it is rotated (past 16 MiB); older ones move to gzip history files, which past `history` bytes are
    /// removed oldest first (nil: never).
    public struct JournalRetention: Sendable, Hashable {
        public var keep: Int
        public var history: ByteSize?

        public static let defaultKeep = 10
        public static let defaultHistory = ByteSize(bytes: 256 << 20)

        public init(keep: Int = JournalRetention.defaultKeep, history: ByteSize? = JournalRetention.defaultHistory) {
            self.keep = keep; self.history = history
        }
    }

    /// How long a delete of `rule` is held in the quarantine: the rule's own `quarantine:`, else the policy's;
    /// nil for a plain delete. Zero is no window.
    public func quarantineWindow(for rule: Rule) -> PolicyDuration? {
        switch rule.quarantine {
        case .none?: return nil
        case .window(let d)?: return d.seconds > 0 ? d : nil
        case nil: return quarantine.flatMap { $0.seconds > 0 ? $0 : nil }
        }
    }

    /// Every rule's window by name (only rules with one): what a plan records and apply reads.
    public var quarantineWindows: [String: PolicyDuration] {
        var out: [String: PolicyDuration] = [:]
        for rule in rules + discoveringTrash { if let w = quarantineWindow(for: rule) { out[rule.name] = w } }
        return out
    }
}

extension PolicyDecoder {
    /// `quarantine: 7d` or `quarantine: none`.
    mutating func quarantineSetting(_ node: Node, context: String) -> QuarantineSetting? {
        guard let text = scalar(node, context) else { return nil }
        if text == "none" { return QuarantineSetting.none }
        if let d = PolicyDuration(parsing: text) { return d.seconds > 0 ? .window(d) : QuarantineSetting.none }
        error(node, "\(context): invalid quarantine '\(text)' (expected a duration such as 7d, or none; durations are \(PolicyDuration.acceptedForms))")
        return nil
    }

    /// `journal: { keep: 10, history: 256MiB }` (`history: none` keeps every history file).
    mutating func journalRetention(_ node: Node) -> Policy.JournalRetention? {
        guard let pairs = mapping(node, "'journal'") else { return nil }
        var retention = Policy.JournalRetention()
        for (k, v) in pairs {
            guard let key = keyName(k, allowed: ["keep", "history"], context: "'journal'") else { continue }
            switch key {
            case "keep":
                if let n = count(v, context: "'journal': 'keep'") { retention.keep = n }
            case "history":
                if v.scalar == "none" { retention.history = nil }
                else if let size = size(v, context: "'journal': 'history'") { retention.history = size }
            default: break
            }
        }
        return retention
    }
}
