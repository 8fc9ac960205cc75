// One place per rule kind: its judge for the walk, what it decides after the walk, the actions a saved plan
// may hold for it, how it explains a path and how reports describe it, behind one protocol. Nothing outside
// Kinds/ switches on a kind for these; the walk's per-entry code never goes through an existential. The
// kind's language side (YAML, validation, effective YAML, DSL) is its Policy/Kinds/<Kind>Syntax.swift.

@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyModel
@_spi(Layers) import StoragePolicyPlan

/// What one rule kind does to a tree. Each kind's file (Kinds/<Kind>Kind.swift) implements it;
/// `Rule.Kind.behavior` is the only switch from a kind to its behaviour.
package protocol RuleKindBehavior: Sendable {
    /// The YAML key that introduces the kind (its RuleKindSyntax's).
    static var keyword: String { get }

    /// Whether a rule of the kind acts on an entry of `type`, given the rule's `type:` filter (nil: none).
    /// Asked once per type when the rule is compiled.
    static func admits(_ type: FileType, filter: EntryTypeFilter?) -> Bool

    /// Whether `resolve` runs after the deletes planned so far are settled (it then sees what is gone):
    /// kinds that delete run before, kinds that move or evict what is left run after.
    static var resolvesAfterSettledDeletes: Bool { get }

    /// The kind's whole-tree decisions after the walk, over every rule of the kind; most kinds decide
    /// everything during the walk and have none.
    static func resolve(_ context: inout ResolutionContext)

    /// The walk's judge for one rule of this kind, made once per compiled rule.
    func makeJudge() -> any EntryJudge

    /// Why a compiled rule of the kind cannot judge anything (a finding before the walk); nil when it can.
    func compileProblem(_ rule: CompiledRule) -> String?

    /// Saved plans (PlanValidation): why the rule, which enforces, could not have planned `action`; nil when
    /// it could, judging ages against `now`. The path is already known to be neither the root nor policyctl's state.
    func planProblem(_ action: Action, _ rule: CompiledRule, _ plan: PlanValidation, now: Int64) -> String?

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
    /// Regular files, directories and symlinks, as the rule's filter admits them.
    package static func admits(_ type: FileType, filter: EntryTypeFilter?) -> Bool {
        guard type == .regular || type == .directory || type == .symlink else { return false }
        return filter?.admits(type) ?? true
    }
    package func compileProblem(_ rule: CompiledRule) -> String? { nil }
    /// A kind that plans no changes: every action is refused.
    package func planProblem(_ action: Action, _ rule: CompiledRule, _ plan: PlanValidation, now: Int64) -> String? {
        plan.refusal(action, rule)
    }
    package static var resolvesAfterSettledDeletes: Bool { false }
    package static func resolve(_ context: inout ResolutionContext) {}
    package func explainScope(_ rule: CompiledRule) -> String? { nil }
}

/// An entry a rule selects and acts on, as `explain` sees it.
package struct ExplainedEntry {
    package let rule: CompiledRule
    /// The entry's directory below the rule's scope, as components, and its name.
    package let directory: ArraySlice<ArraySlice<UInt8>>
    package let name: ArraySlice<UInt8>
    package let status: FileStatus
    package let now: Int64
    /// Whether the policy has a trash folder (where moves into the trash go).
    let hasTrashFolder: Bool

    /// What an audit rule adds to a verdict that would change something.
    var consequence: String { rule.enforces ? "" : " (audit: reported only)" }
}

/// The rule kinds' behaviours, in the order their resolution steps run. A new kind is a Rule.Kind case with its
/// language side (Policy/Kinds/RuleKindRegistry.swift and <Kind>Syntax.swift), and everything else in one
/// Kinds/<Kind>Kind.swift listed here and in `Rule.Kind.behavior`. RuleKindsTests check that these agree.
package enum RuleKinds {
    package static let all: [any RuleKindBehavior.Type] = [
        TrashKind.self, ExpireKind.self, ForbidKind.self, QuotaKind.self, NamingKind.self, BackupKind.self, CustomKind.self,
    ]
}

extension Rule.Kind {
    /// This kind's behaviour, with its settings.
    package var behavior: any RuleKindBehavior {
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
