// Custom rules have no YAML: they are written in Swift (CustomRule), and `validate --effective` writes a comment.

/// The custom kind's language side.
package struct CustomSyntax: RuleKindSyntax {
    package static let keyword = "custom"
    package static let writtenInYAML = false
    package let custom: AnyCustomRule

    package init(_ custom: AnyCustomRule) { self.custom = custom }

    /// Not in the schema: policy files cannot write custom rules.
    package static let schemaSummary = ""
    package static let schemaDefinition = ""

    /// Never called: the decoder offers only kinds written in YAML.
    package static func decode(_ node: Node, context: String, _ decoder: inout PolicyDecoder) -> Rule.Kind? { nil }

    package var effectiveYAML: String {
        "# custom rule \(EffectivePolicyWriter.quote(String(describing: custom))) (written in Swift; not expressible in YAML)"
    }
}
