// A custom rule boxed so `Rule.Kind` stays `Sendable` and `Hashable` whatever type implements it.
// Equality compares the implementing type and its printed value; it never calls the rule.

/// A type-erased ``CustomRule``, the payload of `Rule.Kind.custom`.
///
/// Two boxes are equal when they hold the same Swift type with the same printed value
/// (`String(reflecting:)`): two instances of a struct rule with equal fields compare equal; closure-based
/// rules compare equal by type, which is why a rule's name (unique in a policy) is part of `Rule`'s equality.
public struct AnyCustomRule: Sendable, Hashable, CustomStringConvertible {
    /// The rule itself.
    public let base: any CustomRule
    private let key: String

    /// Boxes `rule`.
    public init(_ rule: some CustomRule) {
        base = rule
        key = String(reflecting: type(of: rule)) + ":" + String(reflecting: rule)
    }

    /// The rule's summary.
    public var summary: String { base.summary }

    /// The implementing type and its value, for fingerprints and debugging.
    public var description: String { key }

    /// Equal when both hold the same type with the same printed value.
    public static func == (a: AnyCustomRule, b: AnyCustomRule) -> Bool { a.key == b.key }
    /// Hashes what `==` compares.
    public func hash(into hasher: inout Hasher) { hasher.combine(key) }
}

/// A custom rule made of a closure: `Rule.custom("empty-files", in: "tmp") { entry in ... }`.
package struct ClosureCustomRule: CustomRule {
    /// What the rule checks, for reports.
    package let summary: String
    /// The judgement, called for every selected entry from the walking threads.
    package let body: @Sendable (CustomRuleEntry) -> [CustomRuleVerdict]

    /// A rule evaluating `body`, described in reports by `summary`.
    package init(summary: String, _ body: @escaping @Sendable (CustomRuleEntry) -> [CustomRuleVerdict]) {
        self.summary = summary; self.body = body
    }

    /// Calls `body`.
    package func evaluate(_ entry: CustomRuleEntry) -> [CustomRuleVerdict] { body(entry) }
}
