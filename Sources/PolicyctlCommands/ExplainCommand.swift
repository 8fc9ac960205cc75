// `policyctl explain`: which rules' scopes and globs hold a path, the verdict each gives and why, and what
// the plan does to it. Changes nothing; exit 0, 65 invalid policy, 74 I/O, 64 usage.
import StoragePolicy

struct ExplainCommand: Command {
    static let summary = CommandSummary(
        name: "explain",
        abstract: "Show which rules match a path, and why.",
        discussion: "For every rule: whether its scope holds the path, what its match and exclude globs say, and its verdict with the reason (\"mtime 3d ago > 1d: delete\"). For a layout entry's path: what the entry wants (type, mode, owner, group, target or content) and what apply would do (create it, fix it, or report its drift). Then the actions the full plan takes on the path or on a directory holding it."
    )

    struct Options: ParsableOptions, ScriptPolicyOptions {
        var path = ""
        var policy: String?
        var cacheDir: String?
        var root: String?
        var forceRoot = false
        var at: String?
        var format = "text"

        static var arguments: [ArgumentField<Self>] { [
            .argument(\.path, "path", help: "The path to explain, relative to the root (or absolute, inside it)."),
        ] }

        static var options: [OptionField<Self>] { [
            .option(\.policy, "policy", short: "p", value: "file", help: "The policy to evaluate: a file, or NAME for the drop-in NAME.yaml; without it, the drop-ins of /etc/policyctl.d (see cat-config).", completion: .file),
            .shared(\.cacheDir, ScriptLauncher.cacheDirOption),
            .option(\.root, "root", short: "r", value: "dir", help: "(required) The directory the policy's paths are relative to.",
                    completion: .directory),
            .flag(\.forceRoot, "force-root", help: "Allow '/', the home directory itself or a system directory as the root."),
            .shared(\.at, AsOfOption.option),
            .option(\.format, "format", value: "format", help: "Output format.", default: "text", values: ["text", "json"]),
        ] }
    }

    var policyPath: String
    var root: String
    var path: RelativePath
    /// `--at`: the instant ages are measured against (now without it).
    var planOptions: PlanOptions
    /// `--format json`: the explanation as one JSON object (ExplainJSON).
    var json = false

    init(_ options: Options) throws {
        let command = "policyctl explain"
        let policy = try PolicyArgument.resolve(options.policy) ?? options.required(\.policy, command: command)
        let root = try options.required(\.root, command: command)
        try RootSafety.check(root, force: options.forceRoot, command: command)
        var text = options.path
        if text.hasPrefix("/") {
            // An absolute path must lie inside the root (compared after resolving both).
            let resolvedRoot = RootSafety.realPath(root) ?? root
            let absoluteRoot = resolvedRoot.hasSuffix("/") ? resolvedRoot : resolvedRoot + "/"
            if text.hasPrefix(absoluteRoot) {
                text = String(text.dropFirst(absoluteRoot.count))
            } else if text.hasPrefix(root.hasSuffix("/") ? root : root + "/") {
                text = String(text.dropFirst(root.hasSuffix("/") ? root.count : root.count + 1))
            } else {
                throw UsageError(message: "'\(text)' is not inside the root '\(root)'", command: command)
            }
        }
        guard let relative = RelativePath(text) else {
            throw UsageError(message: "'\(text)' leaves the root ('..'); give a path inside it", command: command)
        }
        policyPath = policy
        self.root = root
        path = relative
        planOptions = try AsOfOption.planOptions(options.at, command: command)
        json = options.format == "json"
    }

    func run() throws -> ExitCode {
        let loaded = try DiagnosticStyle.load(policyPath)
        // A policy with roots: explains with the rules of the listed root --root names.
        let policy = try RootsRun.onePolicy(loaded.policy, root: root, command: "policyctl explain")
        do {
            _ = try StorageEngine(policy: policy, root: root, planOptions: planOptions).explain(path) { event in
                guard case .explained(let explanation) = event else { return }
                if json {
                    Terminal.out(bytes: ((try? PrettyJSON.encode(ExplainJSON(explanation))) ?? Array("{}".utf8)) + [0x0A])
                } else {
                    Terminal.out(ExplainCommand.render(explanation, color: Terminal.useColor))
                }
            }
        } catch {
            guard case .fileSystem(let error) = error else { throw error }
            throw CommandFailure(code: .ioError, message: "cannot explain: the root '\(PrintableText.escapingControls(root))': \(error.reason)")
        }
        return .success
    }

    static func render(_ e: Explanation, color: Bool) -> String {
        func bold(_ s: String) -> String { color ? "\u{1B}[1m\(s)\u{1B}[0m" : s }
        func dim(_ s: String) -> String { color ? "\u{1B}[2m\(s)\u{1B}[0m" : s }
        var out = bold(e.path.isEmpty ? "." : e.path.escaped)
        if let s = e.status {
            out += " (\(s.type.rawValue), \(ByteSize.human(s.allocatedSize)) allocated)"
        } else if let problem = e.statusProblem {
            out += " (\(problem))"
        }
        out += "\n"
        for r in e.rules {
            let mode = r.mode == .audit ? ", audit" : ""
            out += "\n" + (r.inScope ? bold(r.rule) : dim(r.rule)) + " (\(r.kind)\(mode))\n"
            if let origin = r.origin { out += "  " + dim("defined at \(origin)") + "\n" }
            for f in r.findings { out += "  \(f)\n" }
        }
        if let layout = e.layout {
            // The layout entry at this path: what it wants and what apply would do (create, fix, report drift).
            out += "\n" + bold("layout") + " (layout \(layout.type.rawValue))\n"
            if let origin = layout.origin { out += "  " + dim("defined at \(origin)") + "\n" }
            out += "  wants " + layout.wants.joined(separator: ", ") + "\n"
            for v in layout.verdict { out += "  apply would: \(v)\n" }
        }
        let renderer = PlanRenderer(color: color)
        out += "\n" + bold("Plan:") + "\n"
        if e.actions.isEmpty && e.violations.isEmpty && e.skipped.isEmpty { out += "  nothing for this path\n" }
        for a in e.actions {
            out += "  " + renderer.line(a) + "  " + dim("(\(a.rule)\(a.path == e.path ? "" : ", covers this path"))") + "\n"
        }
        for v in e.violations { out += "  \(v.severity.rawValue): \(v.rule): \(v.message)\n" }
        for s in e.skipped { out += "  skipped \(s.path.escaped): \(s.reason)\n" }
        return out
    }
}

/// `explain --format json`: the explanation's parts under the names the text uses; paths escaped as the text prints them.
struct ExplainJSON: Encodable {
    struct RuleJSON: Encodable {
        var rule: String, kind: String, mode: String, inScope: Bool, findings: [String], origin: String?
    }
    struct LayoutJSON: Encodable {
        var path: String, type: String, wants: [String], origin: String?, applyWould: [String]
    }
    var path: String
    var type: String?
    var problem: String?
    var rules: [RuleJSON]
    var layout: LayoutJSON?
    var actions: [Action]
    var violations: [Violation]
    var skipped: [SkippedEntry]

    init(_ e: Explanation) {
        path = e.path.isEmpty ? "." : e.path.escaped
        type = e.status?.type.rawValue
        problem = e.statusProblem
        rules = e.rules.map { RuleJSON(rule: $0.rule, kind: $0.kind, mode: $0.mode.rawValue, inScope: $0.inScope, findings: $0.findings, origin: $0.origin) }
        layout = e.layout.map { LayoutJSON(path: $0.path.escaped, type: $0.type.rawValue, wants: $0.wants, origin: $0.origin, applyWould: $0.verdict) }
        actions = e.actions
        violations = e.violations
        skipped = e.skipped
    }
}
