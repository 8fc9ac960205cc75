// A saved plan checked against the current policy before apply: every action must be one the policy can
// produce for its path (rule, kind, scope, globs, rename target, xattr), or the whole plan is refused.
// A plan file can be edited by anyone who can write it; the policy (hash-checked) is what is trusted.
// Static: reads no disk. Uses the evaluator's own compiled rules, so there is one matcher, not two.

@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyModel
@_spi(Layers) import StoragePolicyPlan

/// Why a saved plan was refused: the first action the current policy could not have produced.
public struct InvalidPlanAction: Error, Sendable, CustomStringConvertible {
    /// Position of the action in the plan (0-based).
    public let index: Int
    /// The action.
    public let action: Action
    /// What the policy says against it.
    public let reason: String

    /// `action 3 (delete tmp/x by rule 'tmp'): ...`
    public var description: String {
        var what = "\(action.kind.name) \(action.path.escaped)"
        switch action.kind {
        case .rename(let to), .trash(let to): what += " -> \(to.escaped)"
        case .setxattr(let name, _): what += " \(PrintableText.escapingControls(name))"
        default: break
        }
        return "action \(index + 1) (\(what) by rule '\(PrintableText.escapingControls(action.rule))'): \(reason)"
    }
}

/// Checks that every action of a plan is one `policy` produces for that path.
///
/// What is checked, per action: the path is not the root nor in `.policyctl`; the rule exists, enforces,
/// and its kind makes this kind of action; the path is in the rule's scope, matches its globs, is not
/// structure (a scope, a layout directory or the way to one), and has a type the rule admits; and what the
/// kind itself requires of its actions (its planProblem in Evaluation/Kinds/<Kind>Kind.swift: a rename
/// target, a move into the trash folder, the marker attribute, an age by the recorded mtime, which mkdirs).
/// The layout's own actions are checked here. What cannot be checked without the disk (an age by atime or
/// ctime, an eviction order, a trash item's date) is bounded by the rule's scope and globs: a forged
/// action can at most do what that rule could do to that path.
package struct PlanValidation: Sendable {
    /// The policy the plan must come from.
    package let policy: Policy
    private let rules: [CompiledRule]
    /// Each rule's kind behaviour, made once: its planProblem judges the rule's actions.
    private let behaviors: [any RuleKindBehavior]
    private let byName: [String: Int]
    private let structural: [RelativePath]
    /// The backup marker apply sets.
    let marker: (name: String, value: [UInt8])

    /// A validator for plans of `policy`, with the backup marker apply would set.
    package init(policy: Policy, backupMarker: (name: String, value: [UInt8]) = Markers.backupAttribute) {
        self.policy = policy
        rules = policy.rules.enumerated().map { CompiledRule(index: $0.offset, rule: $0.element, trashLayout: .automatic) }
        behaviors = policy.rules.map(\.kind.behavior)
        byName = Dictionary(rules.map { ($0.name, $0.index) }, uniquingKeysWith: { a, _ in a })
        var paths = policy.rules.map(\.path) + policy.layout.map(\.path)
        if let folder = policy.trashFolder {
            paths += [folder, folder.appending(FileName("files")!), folder.appending(FileName("info")!)]
        }
        structural = paths
        marker = backupMarker
    }

    /// The first action of `plan` the policy could not have produced; nil when every action could. Ages are
    /// measured against `now` (nil: the clock), never the plan's own evaluation time, as forgeable as the rest.
    package func firstInvalid(in plan: Plan, now: Int64? = nil) -> InvalidPlanAction? {
        let now = now ?? Planner.currentTimeNs()
        if plan.policy != policy.name {
            if let first = plan.actions.first {
                return InvalidPlanAction(index: 0, action: first, reason: "the plan names policy '\(PrintableText.escapingControls(plan.policy))', not '\(policy.name)'")
            }
            return nil
        }
        for (i, action) in plan.actions.enumerated() {
            if let reason = problem(with: action, now: now) { return InvalidPlanAction(index: i, action: action, reason: reason) }
        }
        return nil
    }

    /// Why the policy could not have produced `action` by `now` (nil: the clock); nil when it could.
    package func problem(with action: Action, now: Int64? = nil) -> String? {
        let now = now ?? Planner.currentTimeNs()
        let path = action.path
        if path.isRoot { return "it targets the root itself" }
        if Self.isState(path) { return "it is in .policyctl, policyctl's own state" }
        switch action.kind {
        case .rename(let to), .trash(let to):
            if to.isRoot { return "its target is the root itself" }
            if Self.isState(to) { return "its target is in .policyctl, policyctl's own state" }
            if action.identity == nil || action.type == nil { return "it records no identity or type for its target" }
        case .delete, .untag:
            if action.identity == nil || action.type == nil { return "it records no identity or type for its target" }
        case .mkdir, .setxattr, .writeTag, .unmark, .setPermissions, .mkfile, .symlink:
            break
        }
        if action.rule == "layout" {
            let why = layoutProblem(action)
            if why == nil || byName["layout"] == nil { return why }
        }
        guard let index = byName[action.rule] else { return "the policy has no rule '\(PrintableText.escapingControls(action.rule))'" }
        let rule = rules[index]
        guard rule.enforces else { return "rule '\(rule.name)' is in audit mode: it never changes anything" }
        // The rule's kind knows which actions it plans (Evaluation/Kinds/<Kind>Kind.swift, planProblem).
        return behaviors[index].planProblem(action, rule, self, now: now)
    }

    // MARK: Parts for the kinds

    /// The refusal of an action the rule's kind never plans; an action that would change a path of the
    /// tree's structure is refused as that first.
    package func refusal(_ action: Action, _ rule: CompiledRule) -> String {
        switch action.kind {
        case .delete, .rename, .trash:
            if let why = structureProblem(action.path) { return why }
        default:
            break
        }
        let keyword = rule.rule.kind.keyword
        let article = "aeiou".contains(keyword.first!) ? "an" : "a"
        return "rule '\(rule.name)' is \(article) \(keyword) rule: it never plans \(action.kind.name)"
    }

    /// Why `path` may not be deleted, renamed or moved: it is a scope, a layout directory or the way to one.
    func structureProblem(_ path: RelativePath) -> String? {
        isStructural(path) ? "\(path.escaped) is a rule's scope, a layout directory or the way to one: never changed" : nil
    }

    // MARK: Parts

    /// `.policyctl` at the top of the root is the engine's own state: no plan ever touches it.
    static func isState(_ path: RelativePath) -> Bool {
        let state = Markers.stateDirectory.bytes
        return path.bytes.starts(with: state) && (path.bytes.count == state.count || path.bytes[state.count] == 0x2F)
    }

    private func layoutProblem(_ action: Action) -> String? {
        let path = action.path
        switch action.kind {
        case .mkdir:
            return policy.layout.contains(where: { $0.path.hasPrefix(path) && ($0.type == .directory || $0.path != path) }) ? nil
                : "the layout creates only its directories and the directories leading to them"
        case .setxattr(let name, let value):
            guard name == marker.name, value == marker.value else {
                return "the only attribute the layout sets is \(marker.name) with its marker value"
            }
            return policy.layout.contains(where: { $0.path == path && $0.excludeFromBackup }) ? nil
                : "no layout directory with 'backup: exclude' is at \(path.escaped)"
        case .writeTag:
            return policy.layout.contains(where: { $0.path == path && $0.cacheDirectoryTag }) ? nil
                : "no layout directory with a cache tag is at \(path.escaped)"
        case .unmark(let name):
            guard name == marker.name else { return "the only attribute the layout removes is \(marker.name)" }
            return policy.layout.contains(where: { $0.path == path && $0.includeInBackup }) ? nil
                : "no layout directory with 'backup: include' is at \(path.escaped)"
        case .untag:
            guard path.lastComponent == Markers.cacheTagName, action.type == .regular else {
                return "the layout removes only a regular file named CACHEDIR.TAG"
            }
            return policy.layout.contains(where: { $0.path == path.parent && $0.includeInBackup }) ? nil
                : "no layout directory with 'backup: include' is at \(path.parent.escaped)"
        case .setPermissions(let mode, let owner, let group):
            guard let entry = policy.layout.first(where: { $0.path == path }), entry.hasAttributes else {
                return "no layout directory with a mode, owner or group is at \(path.escaped)"
            }
            // Only the bits and ids the entry names, and on a directory that exists (the plan recorded its
            // identity) only with `fix: true`: without it apply never changes what it did not create.
            if let mode, mode != entry.mode { return "the layout sets the mode of \(path.escaped) to \(entry.mode.map(Action.octal) ?? "nothing")" }
            if let owner, owner != entry.owner?.id { return "the layout sets the owner of \(path.escaped) to \(entry.owner.map { String($0.id) } ?? "no one")" }
            if let group, group != entry.group?.id { return "the layout sets the group of \(path.escaped) to \(entry.group.map { String($0.id) } ?? "nothing")" }
            if action.identity != nil && !entry.fix { return "layout directory \(path.escaped) has no 'fix: true': an existing directory's mode and owner are never changed" }
            let type: FileType = entry.type == .file ? .regular : entry.type == .symlink ? .symlink : .directory
            return action.type == type ? nil : "\(path.escaped) is a \(entry.noun) in the policy, not a \(action.type?.rawValue ?? "entry of unknown type")"
        case .mkfile(let content, let mode, let owner, let group):
            guard let entry = policy.layout.first(where: { $0.path == path && $0.type == .file }) else {
                return "no layout file is at \(path.escaped)"
            }
            if content != entry.content { return "the content is not the layout file's" }
            if mode != entry.mode || owner != entry.owner?.id || group != entry.group?.id { return "the mode and owner are not the layout file's" }
            return nil
        case .symlink(let target):
            guard let entry = policy.layout.first(where: { $0.path == path && $0.type == .symlink }) else {
                return "no layout symlink is at \(path.escaped)"
            }
            return target == entry.target ? nil : "the target is not the layout symlink's"
        default:
            return "the layout never plans \(action.kind.name)"
        }
    }

    /// In the rule's scope (strictly below it), selected by its globs, of a type it admits.
    func selection(_ action: Action, _ rule: CompiledRule, allowStructure: Bool = false) -> String? {
        guard let relative = action.path.relative(to: rule.rule.path), !relative.isRoot else { return outside(rule) }
        if !allowStructure && isStructural(action.path) { return "\(action.path.escaped) is structure: never changed" }
        if let type = action.type, !rule.admits(type) { return "rule '\(rule.name)' does not act on a \(type.rawValue)" }
        let (directory, name) = components(action.path, rule)
        guard rule.selects(directory, name) else { return "it does not match the globs of rule '\(rule.name)'" }
        // The recorded size is the entry's own (apply keeps an entry whose size differs): a size filter is
        // checked here. Owner and group are not recorded; apply checks them on the entry (StepVerifier).
        if let identity = action.identity, let type = action.type,
           let why = rule.rule.filters.sizeRejection(type: type, size: identity.size) {
            return "rule '\(rule.name)' does not select it: \(why)"
        }
        return nil
    }

    package func components(_ path: RelativePath, _ rule: CompiledRule) -> (ArraySlice<ArraySlice<UInt8>>, ArraySlice<UInt8>) {
        let parts = (path.relative(to: rule.rule.path) ?? path).components.map { $0.bytes[...] }
        return (parts.dropLast(), parts.last ?? [])
    }

    private func isStructural(_ path: RelativePath) -> Bool {
        structural.contains { $0.hasPrefix(path) }
    }

    package func outside(_ rule: CompiledRule) -> String { "it is outside the scope \(scopeText(rule)) of rule '\(rule.name)'" }

    func scopeText(_ rule: CompiledRule) -> String { rule.rule.path.isRoot ? "(the root)" : rule.rule.path.escaped }
}
