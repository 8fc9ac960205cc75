// The policy-language side of a rule kind: its YAML key, how its value decodes and what is checked about it,
// how it is written back (`validate --effective`), and the defaults the language gives it. One conforming type
// per kind in Policy/Kinds/<Kind>Syntax.swift; what the kind does to a tree is its Evaluation/Kinds/ side,
// which this layer never sees. Rule.Kind (RuleKindRegistry.swift) lists the kinds once.

/// The policy language's part of one rule kind, with its settings. Internal: it decodes through PolicyDecoder,
/// which is internal too.
package protocol RuleKindSyntax: Sendable {
    /// The YAML key that introduces the kind.
    static var keyword: String { get }
    /// Whether a policy file can write the kind (custom rules are written in Swift only).
    static var writtenInYAML: Bool { get }
    /// The severity of the kind's findings when the rule gives none.
    static var defaultSeverity: Rule.Severity { get }
    /// Whether `inUse:` applies to the kind's rules (kinds that delete what a process may hold open).
    static var honoursInUse: Bool { get }

    /// Docs/policy.schema.json: the description of the kind's key among a rule's properties (JSON string text).
    static var schemaSummary: String { get }
    /// Docs/policy.schema.json: the kind's entry in `definitions` (`"KEY": { ... }`), indented as it stands there.
    static var schemaDefinition: String { get }

    /// The kind's settings from the node under its key, reporting every problem through `decoder`; nil when
    /// they are not usable. `context` names the rule and key (`rule 'x': 'expire'`).
    static func decode(_ node: Node, context: String, _ decoder: inout PolicyDecoder) -> Rule.Kind?

    /// The kind's key and value as `validate --effective` writes them, on one line.
    var effectiveYAML: String { get }

    /// The kind's own semantic checks on one of its rules; `label` is `rule 'name'`.
    func validate(_ rule: Rule, in policy: Policy, label: String, _ report: (Diagnostic.Severity, String) -> Void)

    /// Globs beyond `match` that pick what the rule acts on (a kind's own globs), for the overlap and state-folder checks.
    var selectingGlobs: [Glob] { get }
    /// What an enforcing rule of the kind does to the entries it removes, for the overlap warnings
    /// (`deletes`/`deleted`); nil when it removes nothing.
    var removal: (verb: String, outcome: String)? { get }
    /// Whether an enforcing rule of the kind renames entries.
    var renames: Bool { get }
    /// The warning when two rules of this kind have nested scopes; nil when they coexist.
    static func nestedWarning(_ outer: String, _ inner: String) -> String?
}

extension RuleKindSyntax {
    package static var writtenInYAML: Bool { true }
    package static var defaultSeverity: Rule.Severity { .warning }
    package static var honoursInUse: Bool { false }
    package func validate(_ rule: Rule, in policy: Policy, label: String, _ report: (Diagnostic.Severity, String) -> Void) {}
    package var selectingGlobs: [Glob] { [] }
    package var removal: (verb: String, outcome: String)? { nil }
    package var renames: Bool { false }
    package static func nestedWarning(_ outer: String, _ inner: String) -> String? { nil }
}

/// The words of an enforcing rule that deletes what it removes.
package let deletesEntries = (verb: "deletes", outcome: "deleted")
