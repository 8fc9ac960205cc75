// naming in the policy language: `naming: { case: lower, pattern: '^[a-z0-9_]+$' }`, either or both. Its settings
// (Naming), how they decode and are written back, and the DSL's `Rule.naming`. The walk's side is
// Evaluation/Kinds/NamingKind.swift.

/// `naming: { case: lower }` and/or `naming: { pattern: '^[a-z0-9_]+\.txt$' }`
public struct Naming: Sendable, Hashable {
    /// `case: lower` renames names with uppercase letters; nil leaves case alone.
    public var letterCase: LetterCase?
    /// A regular expression every selected name must match in full; violations are reported, never fixed.
    public var pattern: String?

    /// A naming rule: a case to enforce, a pattern to report, or both.
    public init(letterCase: LetterCase? = nil, pattern: String? = nil) {
        self.letterCase = letterCase; self.pattern = pattern
    }

    /// The letter case names must have.
    public enum LetterCase: String, Sendable, Hashable, CaseIterable {
        case lower
    }
}

/// The naming kind's language side.
package struct NamingSyntax: RuleKindSyntax {
    package static let keyword = "naming"
    package let naming: Naming

    package init(_ naming: Naming) { self.naming = naming }

    /// Docs/policy.schema.json: the kind's key among a rule's properties, as its description (JSON text).
    package static let schemaSummary = #"File-name rules: case: lower renames to lowercase; pattern reports names that do not match."#

    /// Docs/policy.schema.json: the kind's entry in `definitions`, as written there.
    package static let schemaDefinition = #"""
        "naming": {
          "description": "case, pattern, or both.",
          "type": "object",
          "additionalProperties": false,
          "minProperties": 1,
          "properties": {
            "case": {
              "description": "lower: rename selected entries to lowercase; a taken name gets a Finder-style counter, 'name (2).ext'.",
              "enum": ["lower"]
            },
            "pattern": {
              "$ref": "#/definitions/text",
              "description": "A regular expression every selected entry's name must match in full, such as '^[a-z0-9_]+\\.txt$' (single-quote it in YAML). Violations are reported, never fixed."
            }
          }
        }
    """#

    package static func decode(_ node: Node, context: String, _ decoder: inout PolicyDecoder) -> Rule.Kind? {
        guard let pairs = decoder.mapping(node, context) else { return nil }
        var naming = Naming()
        for (k, v) in pairs {
            guard let name = decoder.keyName(k, allowed: ["case", "pattern"], context: context) else { continue }
            if name == "case", let c = decoder.enumValue(v, Naming.LetterCase.self, context: "\(context): 'case'") { naming.letterCase = c }
            if name == "pattern", let p = decoder.scalar(v, "\(context): 'pattern'") {
                do { _ = try Regex(p) } catch {
                    decoder.error(v, "\(context): invalid pattern '\(p)': \(error)")
                }
                naming.pattern = p
            }
        }
        if naming.letterCase == nil && naming.pattern == nil {
            if !pairs.contains(where: { ["case", "pattern"].contains($0.key.scalar ?? "") }) {
                decoder.error(node, "\(context): give 'case: lower', a 'pattern', or both")
            }
            return nil
        }
        return .naming(naming)
    }

    package var effectiveYAML: String {
        var parts: [String] = []
        if let c = naming.letterCase { parts.append("case: \(c.rawValue)") }
        if let p = naming.pattern { parts.append("pattern: \(EffectivePolicyWriter.quote(p))") }
        return "naming: { \(parts.joined(separator: ", ")) }"
    }

    package var renames: Bool { naming.letterCase != nil }

    package func validate(_ rule: Rule, in policy: Policy, label: String, _ report: (Diagnostic.Severity, String) -> Void) {
        if naming.pattern != nil, rule.type == .symlink {
            report(.warning, "\(label): naming patterns on symlinks only check the link's own name")
        }
    }
}

extension Rule {
    /// `naming: { case:, pattern: }` — lowercase names, or report names that do not match `pattern`.
    public static func naming(_ name: String, in path: String, case letterCase: Naming.LetterCase? = nil,
                              pattern: String? = nil) -> RuleDraft {
        RuleDraft(name: name, path: path, kind: .ready(.naming(Naming(letterCase: letterCase, pattern: pattern))))
    }
}
