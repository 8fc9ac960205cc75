// Explains one path: for every rule, whether its scope holds the path, what match/exclude say, and the
// verdict with its reason; then what the full plan does to it. Changes nothing on disk.

@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyModel
@_spi(Layers) import StoragePolicyPlan

/// What every rule of a policy makes of one path.
public struct Explanation: Sendable {
    public var path: RelativePath
    /// The entry's status now; nil when it does not exist (or cannot be reached without a symlink).
    public var status: FileStatus?
    /// Why there is no status, when there is none.
    public var statusProblem: String?
    public var rules: [RuleExplanation]
    /// Actions the plan takes on this path, or on a directory that holds it (a deleted directory covers
    /// its contents).
    public var actions: [Action]
    public var violations: [Violation]
    public var skipped: [SkippedEntry]
    /// The layout entry at this path, when the policy has one: what it wants and what apply would do.
    public var layout: LayoutExplanation? = nil
}

/// A layout entry explained: which entry covers the path, what it wants, what apply would do about it.
public struct LayoutExplanation: Sendable, Hashable {
    /// The entry's path (the explained path itself).
    public var path: RelativePath
    public var type: LayoutType
    /// One phrase per key the entry sets: `mode 0640`, `owner ci (uid 1001)`, `target 'releases/3'`, `fix: true`.
    public var wants: [String]
    /// Where the entry is written (`file:line:col`), when known.
    public var origin: String?
    /// What apply would do: `create it (mkfile)`, `fix it: set mode 0640`, `report drift (no fix: true): ...`, or
    /// `nothing: it is as the entry says`.
    public var verdict: [String]
}

public struct RuleExplanation: Sendable, Hashable {
    public var rule: String
    /// `expire`, `trash`, ... and `audit` when the rule only reports.
    public var kind: String
    public var mode: Rule.Mode
    public var inScope: Bool
    /// One line each: scope, selection, verdict.
    public var findings: [String]
    /// Where the rule is written (`file:line:col`; with `extends`, the file it came from), when known.
    public var origin: String? = nil
}

package struct Explainer: Sendable {
    package let policy: Policy
    package let root: String
    package let options: PlanOptions

    package init(policy: Policy, root: String, options: PlanOptions = PlanOptions()) {
        self.policy = policy; self.root = root; self.options = options
    }

    /// Explains `path` (root-relative). Runs the whole plan to say what actually happens to it.
    package func explain(_ path: RelativePath) throws -> Explanation {
        let now = options.now ?? Planner.currentTimeNs()
        var planOptions = options
        planOptions.now = now
        let plan = try Planner(policy: policy, root: root, options: planOptions).plan()
        let deletedBy = Set(plan.actions.filter { $0.path == path && $0.isDelete }.map(\.rule))
        let rootHandle = try DirectoryHandle.open(root: root)
        let preflight = Preflight(root: rootHandle, policy: policy, backupMarker: Markers.backupAttribute)

        var status: FileStatus? = nil
        var problem: String? = nil
        if path.isEmpty {
            status = try? rootHandle.status()
        } else {
            switch preflight.presence(of: path.parent) {
            case .directory(let handle, _):
                do {
                    status = try handle.statusIfPresent(of: path.lastComponent!)
                    if status == nil { problem = "does not exist" }
                } catch { problem = "cannot stat: \(error.errno)" }
            case .missing: problem = "does not exist"
            case .blocked(let at, let type): problem = "\(at.escaped) is a \(type.rawValue), not a directory: never followed"
            case .unreadable(let e): problem = "cannot reach: \(e.errno)"
            }
        }

        var rules: [RuleExplanation] = []
        for (index, rule) in policy.rules.enumerated() {
            let compiled = CompiledRule(index: index, rule: rule, trashLayout: preflight.trashLayout(of: rule))
            var explained = explain(compiled, path: path, status: status, now: now)
            // With extends, say which file each rule came from.
            if !policy.inherited.isEmpty { explained.origin = rule.location?.description }
            explained.findings += RetentionExplanation.why(rule, path: path, status: status, now: now,
                                                           deleted: deletedBy.contains(rule.name))
            // A scope the walk cannot enter: whatever the globs say, the rule judged nothing there.
            if path.hasPrefix(rule.path), !rule.path.isRoot, let (at, why) = preflight.oddity(of: rule.path) {
                explained.findings.append("but \(at.escaped) is \(why): the rule judges nothing in its scope")
            }
            rules.append(explained)
        }

        let covering = plan.actions.filter { a in
            a.path == path || (path.hasPrefix(a.path) && a.type == .directory && (a.isDelete || { if case .trash = a.kind { true } else { false } }()))
                || { if case .rename(let to) = a.kind { to == path } else { false } }()
        }
        var explanation = Explanation(path: path, status: status, statusProblem: problem, rules: rules, actions: covering,
                                      // Its own, and those of a directory holding it (a scope the walk could not enter).
                                      violations: plan.violations.filter { path.hasPrefix($0.path) && ($0.path == path || !$0.path.isRoot) },
                                      skipped: plan.skipped.filter { path.hasPrefix($0.path) })
        if let entry = policy.layout.last(where: { $0.path == path }) {
            explanation.layout = Self.explain(entry, actions: plan.actions.filter { $0.path == path && $0.rule == "layout" },
                                              violations: plan.violations.filter { $0.path == path && $0.rule == "layout" })
        }
        return explanation
    }

    /// What `entry` wants, and what the plan's layout actions and violations at its path say apply would do.
    static func explain(_ entry: LayoutEntry, actions: [Action], violations: [Violation]) -> LayoutExplanation {
        var wants: [String] = ["type \(entry.type.rawValue)"]
        if let mode = entry.mode { wants.append("mode \(LayoutEntry.octal(mode))") }
        if let owner = entry.owner { wants.append("owner \(owner.text("uid"))") }
        if let group = entry.group { wants.append("group \(group.text("gid"))") }
        if let target = entry.target { wants.append("target '\(PathEscaping.escape(target))'") }
        if entry.type == .file { wants.append(entry.content.isEmpty ? "empty content" : "content of \(entry.content.count) bytes") }
        if entry.excludeFromBackup { wants.append("backup: exclude") }
        if entry.includeInBackup { wants.append("backup: include") }
        if entry.cacheDirectoryTag { wants.append("cacheTag") }
        if entry.fix { wants.append("fix: true") }
        var verdict: [String] = []
        for action in actions {
            switch action.kind {
            case .mkdir: verdict.append("create it (mkdir)")
            case .mkfile(let content, _, _, _): verdict.append("create it (mkfile, \(content.count) bytes)")
            case .symlink(let target): verdict.append("create it (symlink -> \(PathEscaping.escape(target)))")
            case .setPermissions(let mode, let owner, let group):
                let set = [mode.map { "mode \(LayoutEntry.octal($0))" }, owner.map { "owner \($0)" }, group.map { "group \($0)" }]
                    .compactMap { $0 }.joined(separator: " ")
                verdict.append(action.identity == nil ? "set \(set) on what it creates" : "fix it: set \(set) (\(action.reason))")
            default: verdict.append("\(action.kind.name) (\(action.reason))")
            }
        }
        for v in violations { verdict.append("report drift: \(v.message)") }
        if verdict.isEmpty { verdict.append("nothing: it is as the entry says") }
        return LayoutExplanation(path: entry.path, type: entry.type, wants: wants, origin: entry.location?.description, verdict: verdict)
    }

    package func explain(_ rule: CompiledRule, path: RelativePath, status: FileStatus?, now: Int64) -> RuleExplanation {
        let r = rule.rule
        let scope = r.path.isEmpty ? "the root" : "'\(r.path.escaped)'"
        var out = RuleExplanation(rule: r.name, kind: r.kind.keyword, mode: r.mode, inScope: false, findings: [])
        let behavior = r.kind.behavior
        if path == r.path, let line = behavior.explainScope(rule) {
            out.inScope = true
            out.findings.append(line)
            return out
        }
        guard let relative = path.relative(to: r.path), !relative.isEmpty else {
            out.findings.append(path == r.path ? "this is the rule's scope itself: rules judge what is inside it" : "outside the scope \(scope)")
            return out
        }
        out.inScope = true
        out.findings.append("inside the scope \(scope) as '\(relative.escaped)'")
        let components = relative.bytes.split(separator: 0x2F, omittingEmptySubsequences: false)
        let directory = components.dropLast()
        let name = components.last!
        if let excluded = rule.exclude.first(where: { $0.matches(directory, name) }) {
            out.findings.append("excluded by '\(excluded.glob.pattern)'")
            return out
        }
        if rule.match.isEmpty {
            out.findings.append("selected (no match globs: every entry in the scope)")
        } else if let matched = rule.match.first(where: { $0.matches(directory, name) }) {
            out.findings.append("selected by match '\(matched.glob.pattern)'\(r.filters.caseInsensitive ? " (case: insensitive)" : "")")
        } else {
            out.findings.append("not selected: matches none of \(rule.match.map { "'\($0.glob.pattern)'" }.joined(separator: ", "))")
            // A glob with no '/' and no '**' is matched against the whole scope-relative path, so it only ever
            // selects entries at the top of the scope; the usual mistake, worth the fix when it is the reason.
            if !directory.isEmpty, let entry = RelativePath(name),
               let shallow = rule.match.first(where: { !$0.glob.pattern.contains("/") && !$0.glob.pattern.contains("**") && $0.glob.matches(entry) }) {
                let pattern = shallow.glob.pattern
                out.findings.append("'\(pattern)' matches only at the top of the scope; use '**/\(pattern)' for any depth")
            }
            return out
        }
        guard let status else {
            out.findings.append("no verdict: the entry is not there")
            return out
        }
        guard rule.admits(status.type) else {
            out.findings.append("not judged: a \(status.type.rawValue) is not a type this rule acts on")
            return out
        }
        if let why = rule.filterRejection(status) {
            out.findings.append("not selected: \(why)")
            return out
        }
        if let passing = r.filters.passing(userID: status.userID, groupID: status.groupID, size: status.size) {
            out.findings.append(passing)
        }
        out.findings += behavior.explain(ExplainedEntry(rule: rule, directory: directory, name: name, status: status, now: now,
                                                        hasTrashFolder: policy.trashFolder != nil))
        return out
    }
}
