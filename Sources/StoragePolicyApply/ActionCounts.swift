// How many steps of each verb a transaction carried out, kept in `StepVerb`'s order so every renderer lists them
// the same way without an order of its own. The journal stores them by the verbs' raw values.

/// Steps carried out, per verb; iterates in `StepVerb` order, verbs with a count of zero left out.
public struct ActionCounts: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral, Codable {
    /// Indexed by `StepVerb.ordinal`: apply counts every step, and a dictionary update per step showed up.
    private var values = [Int](repeating: 0, count: StepVerb.count)

    public init() {}

    public init(dictionaryLiteral elements: (StepVerb, Int)...) {
        for (verb, n) in elements { self[verb] += n }
    }

    /// Counts as the journal and JSON spell them (`write-tag: 2`); names that are no verb are left out.
    public init(names: [String: Int]) {
        for (name, n) in names { if let verb = StepVerb(rawValue: name) { values[verb.ordinal] += n } }
    }

    public subscript(verb: StepVerb) -> Int {
        get { values[verb.ordinal] }
        set { values[verb.ordinal] = newValue }
    }

    /// True when nothing was counted.
    public var isEmpty: Bool { values.allSatisfy { $0 == 0 } }
    /// All steps counted.
    public var total: Int { values.reduce(0, +) }
    /// By the verbs' raw values: what the journal's commit record and the JSON summary carry.
    public var byName: [String: Int] {
        Dictionary(uniqueKeysWithValues: StepVerb.allCases.compactMap { v in values[v.ordinal] == 0 ? nil : (v.rawValue, values[v.ordinal]) })
    }

    /// Encoded as the journal's JSON object of names, exactly as `[String: Int]` was.
    public init(from decoder: any Decoder) throws {
        self.init(names: try decoder.singleValueContainer().decode([String: Int].self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(byName)
    }

    public func makeIterator() -> some IteratorProtocol<(verb: StepVerb, count: Int)> {
        StepVerb.allCases.compactMap { v in values[v.ordinal] == 0 ? nil : (verb: v, count: values[v.ordinal]) }.makeIterator()
    }
}
