// forbid in the policy language: `forbid: [GLOB, ...]` (or one glob), entries that must not exist in the scope.
// Its findings are errors by default; enforced, it moves entries into the trash folder (Evaluation/Kinds/ForbidKind.swift).

/// The forbid kind's language side: its globs.
package struct ForbidSyntax: RuleKindSyntax {
    package static let keyword = "forbid"
    package static let defaultSeverity = Rule.Severity.error
    package let globs: [Glob]

    package init(_ globs: [Glob]) { self.globs = globs }

    /// Docs/policy.schema.json: the kind's key among a rule's properties, as its description (JSON text).
    package static let schemaSummary = #"Globs for entries that must not exist in the scope. audit reports them; enforce moves them into the policy's trash folder (never deletes), or only reports them when the policy has no trash rule."#

    /// Docs/policy.schema.json: the kind's entry in `definitions`, as written there.
    package static let schemaDefinition = #"""
        "forbid": {
          "description": "One glob or a non-empty list of globs naming entries that must not exist.",
          "anyOf": [
            { "$ref": "#/definitions/glob" },
            { "type": "array", "minItems": 1, "items": { "$ref": "#/definitions/glob" } }
          ]
        }
    """#

    package static func decode(_ node: Node, context: String, _ decoder: inout PolicyDecoder) -> Rule.Kind? {
        let patterns = decoder.globs(node, context: context)
        // An empty list is worth its own error only when no pattern in it was already reported as invalid.
        if patterns.isEmpty && !decoder.diagnostics.contains(where: { $0.severity == .error && $0.location == decoder.location(node) }) {
            decoder.error(node, "\(context): list at least one pattern")
        }
        return .forbid(patterns)
    }

    package var effectiveYAML: String { "forbid: \(EffectivePolicyWriter.list(globs.map(\.pattern)))" }

    package var selectingGlobs: [Glob] { globs }

    /// Forbidden entries are moved to the trash rather than deleted: the overlap warning says which.
    package var removal: (verb: String, outcome: String)? { ("moves entries to the trash", "moved to the trash") }

    package func validate(_ rule: Rule, in policy: Policy, label: String, _ report: (Diagnostic.Severity, String) -> Void) {
        if rule.mode == .enforce && policy.trashFolder == nil {
            report(.warning, "\(label): forbid in enforce mode moves entries to the trash, but the policy has no trash rule; they will only be reported")
        }
    }
}

extension Rule {
    /// `forbid: [...]` — entries that must not exist.
    public static func forbid(_ name: String, in path: String, _ patterns: String...) -> RuleDraft {
        RuleDraft(name: name, path: path, kind: .checked { draft in
            if patterns.isEmpty { draft.fail("\(draft.owner): forbid needs at least one pattern") }
            return .forbid(draft.globs(patterns))
        })
    }
}
