// Custom rules have no YAML: they are written in Swift (CustomRule), and `validate --effective` writes a comment.

/// The custom kind's language side.
struct CustomSyntax: RuleKindSyntax {
    static let keyword = "custom"
    static let writtenInYAML = false
    let custom: AnyCustomRule

    init(_ custom: AnyCustomRule) { self.custom = custom }

    /// Not in the schema: policy files cannot write custom rules.
    static let schemaSummary = ""
    static let schemaDefinition = ""

    /// Never called: the decoder offers only kinds written in YAML.
    static func decode(_ node: Node, context: String, _ decoder: inout PolicyDecoder) -> Rule.Kind? { nil }

    var effectiveYAML: String {
        "# custom rule \(EffectivePolicyWriter.quote(String(describing: custom))) (written in Swift; not expressible in YAML)"
    }
}
