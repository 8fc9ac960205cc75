// One place per rule kind: what a kind does after the walk, how it explains a path and how reports describe
// it, behind one protocol. Nothing outside Kinds/ switches on a kind for these; the walk's per-entry code
// never goes through an existential.

/// What one rule kind contributes beyond the walk. Each kind's file (Kinds/<Kind>Kind.swift) implements it;
/// `Rule.Kind.behavior` is the only switch from a kind to its behaviour.
protocol RuleKindBehavior: Sendable {
    /// The YAML key that introduces the kind (`Rule.Kind.keyword`).
    static var keyword: String { get }

    /// Whether `resolve` runs after the deletes planned so far are settled (it then sees what is gone):
    /// kinds that delete run before, kinds that move or evict what is left run after.
    static var resolvesAfterSettledDeletes: Bool { get }

    /// The kind's whole-tree decisions after the walk, over every rule of the kind; most kinds decide
    /// everything during the walk and have none.
    static func resolve(_ context: inout ResolutionContext)

    /// The walk's judge for one rule of this kind, made once per compiled rule.
    func makeJudge() -> EntryJudge

    /// `policyctl explain` on the rule's scope itself, when the kind judges it (nil: rules judge what is inside).
    func explainScope(_ rule: CompiledRule) -> String?

    /// `policyctl explain`: the kind's verdict on an entry its rule selects and acts on, one line each.
    func explain(_ entry: ExplainedEntry) -> [String]

    /// Reports: one line saying what the rule keeps true.
    func summary(of rule: Rule, scope: String) -> String

    /// Reports: what to do about a finding of the rule.
    func help(for rule: Rule) -> String
}

extension RuleKindBehavior {
    static var resolvesAfterSettledDeletes: Bool { false }
    static func resolve(_ context: inout ResolutionContext) {}
    func explainScope(_ rule: CompiledRule) -> String? { nil }
}

/// An entry a rule selects and acts on, as `explain` sees it.
struct ExplainedEntry {
    let rule: CompiledRule
    /// The entry's directory below the rule's scope, as components, and its name.
    let directory: ArraySlice<ArraySlice<UInt8>>
    let name: ArraySlice<UInt8>
    let status: FileStatus
    let now: Int64
    /// Whether the policy has a trash folder (where forbidden entries go).
    let hasTrashFolder: Bool

    /// What an audit rule adds to a verdict that would change something.
    var consequence: String { rule.enforces ? "" : " (audit: reported only)" }
}

/// The rule kinds, in the order their resolution steps run. A new kind is a Rule.Kind case (Policy/Rule.swift:
/// its keyword and default severity), its settings (Policy/RuleKinds.swift), its YAML in PolicyDecoder and
/// PolicyValidator with Docs/policy.schema.json (kept central: one pass over a rule's keys, one set of
/// suggestions), and everything else in one Kinds/<Kind>Kind.swift listed here and in `Rule.Kind.behavior`.
/// RuleKindsTests check that these places agree.
enum RuleKinds {
    static let all: [any RuleKindBehavior.Type] = [
        TrashKind.self, ExpireKind.self, ForbidKind.self, QuotaKind.self, NamingKind.self, BackupKind.self, CustomKind.self,
    ]
}

extension Rule.Kind {
    /// This kind's behaviour, with its settings.
    var behavior: any RuleKindBehavior {
        switch self {
        case .expire(let expire): ExpireKind(expire)
        case .trash(let retention): TrashKind(retention)
        case .quota(let quota): QuotaKind(quota)
        case .naming(let naming): NamingKind(naming)
        case .backup(let backup): BackupKind(backup)
        case .forbid(let globs): ForbidKind(globs)
        case .custom(let custom): CustomKind(custom)
        }
    }
}
