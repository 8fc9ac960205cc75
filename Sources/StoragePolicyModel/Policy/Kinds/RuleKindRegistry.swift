// The registry of rule kinds: the one place that lists them. Every list of kind keywords (the decoder's rule
// keys and its "no rule kind" message, `inUse:`'s kinds, the schema's kind properties) is derived from
// `Rule.Kind.syntaxes`; the evaluation side maps each case to its behaviour in Evaluation/Kinds/RuleKindBehavior.swift.
// Adding a kind: a case here, its Policy/Kinds/<Kind>Syntax.swift and its Evaluation/Kinds/<Kind>Kind.swift.

extension Rule {
    /// The kinds of rule, one per YAML key, plus rules written in Swift.
    public enum Kind: Sendable, Hashable {
        case expire(Expire)
        case trash(TrashRetention)
        case quota(Quota)
        case naming(Naming)
        case backup(BackupExclusion)
        case forbid([Glob])
        /// A rule written in Swift (see ``CustomRule``); the YAML decoder never produces it.
        case custom(AnyCustomRule)

        /// The key that introduces this kind in YAML.
        public var keyword: String { syntaxType.keyword }
    }
}

extension Rule.Kind {
    /// Every kind's language side, in the order the policy language lists them (messages and the schema).
    static let syntaxes: [any RuleKindSyntax.Type] = [
        ExpireSyntax.self, TrashSyntax.self, QuotaSyntax.self, NamingSyntax.self, BackupSyntax.self, ForbidSyntax.self,
        CustomSyntax.self,
    ]

    /// This kind's language side, with its settings.
    var syntax: any RuleKindSyntax {
        switch self {
        case .expire(let expire): ExpireSyntax(expire)
        case .trash(let retention): TrashSyntax(retention)
        case .quota(let quota): QuotaSyntax(quota)
        case .naming(let naming): NamingSyntax(naming)
        case .backup(let backup): BackupSyntax(backup)
        case .forbid(let globs): ForbidSyntax(globs)
        case .custom(let custom): CustomSyntax(custom)
        }
    }

    /// This kind's language side without its settings: nothing is copied (severity is asked per finding).
    var syntaxType: any RuleKindSyntax.Type {
        switch self {
        case .expire: ExpireSyntax.self
        case .trash: TrashSyntax.self
        case .quota: QuotaSyntax.self
        case .naming: NamingSyntax.self
        case .backup: BackupSyntax.self
        case .forbid: ForbidSyntax.self
        case .custom: CustomSyntax.self
        }
    }

    /// A kind for a rule while it is decoded, replaced by the kind its file writes before the rule is used.
    static let placeholder = Rule.Kind.forbid([])

    /// The keys of the kinds a policy file can write, in the language's order.
    static let yamlKeywords: [String] = syntaxes.filter { $0.writtenInYAML }.map { $0.keyword }

    /// The language side of the kind a policy file writes with `keyword`.
    static func syntax(forKeyword keyword: String) -> (any RuleKindSyntax.Type)? {
        syntaxes.first { $0.writtenInYAML && $0.keyword == keyword }
    }
}
