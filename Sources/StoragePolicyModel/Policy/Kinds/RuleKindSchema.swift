// The parts of Docs/policy.schema.json that speak of the kinds, made from the registry: `policyctl schema`
// (PolicyctlCommands/PolicySchema.swift) writes them into the rest of the schema, so a new kind's key,
// alternative and definition appear there with no list to keep in step.

/// The kinds' parts of the policy schema, as JSON text at the depth they stand in the file.
package enum RuleKindSchema {
    private static var yamlKinds: [any RuleKindSyntax.Type] { Rule.Kind.syntaxes.filter { $0.writtenInYAML } }

    /// The kinds a rule has exactly one of, as a sentence lists them (`a, b or c`).
    package static var kindList: String {
        let keys = Rule.Kind.yamlKeywords
        return keys.count < 2 ? keys.joined() : keys.dropLast().joined(separator: ", ") + " or " + keys.last!
    }

    /// `expire, quota and trash`: the kinds `inUse:` applies to.
    package static var inUseList: String { PolicyDecoder.inUseKindsText }

    /// Each kind's key among a rule's properties, referring to its definition.
    package static var properties: String {
        yamlKinds.map { kind in
            """
                    "\(kind.keyword)": {
                      "$ref": "#/definitions/\(kind.keyword)",
                      "description": "\(kind.schemaSummary)"
                    }
            """
        }.joined(separator: ",\n")
    }

    /// The rule's `oneOf` alternatives: each kind with a path.
    package static var alternatives: String {
        yamlKinds.map { "        { \"required\": [\"\($0.keyword)\", \"path\"] }," }.joined(separator: "\n")
    }

    /// `{ "required": ["expire"] }, ...`: a rule that names any kind (what `enabled: false` alone may not).
    package static var anyKindRequired: String {
        yamlKinds.map { "{ \"required\": [\"\($0.keyword)\"] }" }.joined(separator: ", ")
    }

    /// Each kind's entry in `definitions`.
    package static var definitions: String { yamlKinds.map { $0.schemaDefinition }.joined(separator: ",\n") }
}
