// `policyctl plan`: evaluates a policy over a root and shows what apply would change, touching nothing.
// Exit 0, or 2 with --detailed-exitcode when changes are pending; 65 invalid policy, 74 I/O, 64 usage.
import StoragePolicy

struct PlanCommand: Command {
    static let summary = CommandSummary(
        name: "plan",
        abstract: "Show what applying a policy would change, touching nothing.",
        discussion: "Walks the root once, evaluating every rule in that pass, and prints the actions apply would take (grouped by rule) and the violations found. Nothing on disk changes, not even access times where the kernel allows. --out saves the plan as JSON for `policyctl apply PLANFILE`."
    )

    struct Options: ParsableOptions, ScriptPolicyOptions {
        var policy: String?
        var cacheDir: String?
        var root: String?
        var format = "text"
        var out: String?
        var detailedExitcode = false
        var strict = false
        var forceRoot = false
        var quiet = false
        var at: String?
        var user = false

        static var options: [OptionField<Self>] { [
            .option(\.policy, "policy", short: "p", value: "file", help: "The policy to evaluate: a file, or NAME for the drop-in NAME.yaml; without it, the drop-ins of /etc/policyctl.d (see cat-config).", completion: .file),
            .shared(\.cacheDir, ScriptLauncher.cacheDirOption),
            .option(\.root, "root", short: "r", value: "dir", help: "The directory the policy's paths are relative to (required unless the policy lists its roots: then it selects one of them).",
                    completion: .directory),
            .option(\.format, "format", value: "format", help: "Output format.", default: "text", values: ["text", "json"]),
            .option(\.out, "out", short: "o", value: "file", help: "Also write the plan as JSON to this file (atomically).",
                    completion: .file),
            .flag(\.detailedExitcode, "detailed-exitcode", help: "Exit 2 when the plan has changes, 0 when it has none."),
            .shared(\.strict, ScopeWarnings.strictOption),
            .flag(\.forceRoot, "force-root", help: "Allow '/', the home directory itself or a system directory as the root."),
            .shared(\.quiet, QuietOutput.option),
            .shared(\.at, AsOfOption.option),
            .shared(\.user, RootsRun.userOption),
        ] }
    }

    var policyPath: String
    /// `--root`: the root, or (for a policy with `roots:`) the listed root it selects; nil runs them all.
    var rootArgument: String?
    var forceRoot: Bool
    var user: Bool
    var json: Bool
    var out: String?
    var detailedExitCode: Bool
    var strict: Bool
    var quiet: Bool
    /// `--at`: the instant ages are measured against (now without it).
    var planOptions: PlanOptions

    init(_ options: Options) throws {
        let command = "policyctl plan"
        // Without --policy: the drop-ins (PolicyArgument); with none, the missing-option error as before.
        let policy = try PolicyArgument.resolve(options.policy) ?? options.required(\.policy, command: command)
        policyPath = policy
        rootArgument = options.root
        forceRoot = options.forceRoot
        user = options.user
        json = options.format == "json"
        out = options.out
        detailedExitCode = options.detailedExitcode
        strict = options.strict
        quiet = options.quiet
        planOptions = try AsOfOption.planOptions(options.at, command: command)
    }

    func run() throws -> ExitCode {
        try RootsRun.requireRoot(policyPath, root: rootArgument, command: "policyctl plan")
        let loaded = try QuietOutput.load(policyPath, quiet: quiet)
        switch try RootsRun.select(loaded.policy, root: rootArgument, stateDir: nil, user: user, command: "policyctl plan") {
        case .single(let policy, let root, _):
            try RootSafety.check(root, force: forceRoot, command: "policyctl plan")
            var one = loaded
            one.policy = policy
            return try runOne(one, root: root)
        case .several(let targets):
            return try runSeveral(loaded, targets)
        }
    }

    /// The single-root form: one plan, printed as it always was.
    func runOne(_ loaded: LoadedPolicy, root: String) throws -> ExitCode {
        let plan = try markedPlan(loaded, root: root)
        if let out {
            try PlanCommand.write(plan, to: out)
            PlanCommand.noteRecord(of: plan, at: out)
        }
        // Nothing to change and nothing wrong: a quiet text plan says nothing (JSON and --out are for tools).
        if quiet && !json && out == nil && !plan.hasChanges && plan.violations.isEmpty { return .success }
        // Streamed in chunks: a plan with a million actions is never one string or one Data in memory.
        if json {
            var writer = PlanJSONWriter { Terminal.out(bytes: $0) }
            try writer.write(plan)
            // stdout is the JSON alone; the word for people goes to stderr.
            if let out { Terminal.err(PrintableText.escapingControls("Saved the plan to \(out); apply it with: policyctl apply \(out)")) }
        } else {
            PlanCommand.printText(plan, policy: loaded.policy)
            if let out { Terminal.out(PrintableText.escapingControls("Saved the plan to \(out); apply it with: policyctl apply \(out)")) }
        }
        return detailedExitCode && plan.hasChanges ? .changesPending : .success
    }

    /// One root's plan as `plan` shows it, in either form: scope warnings checked (errors with --strict),
    /// marked for `--at` and for the tmpfiles.d age lines that cover the root.
    func markedPlan(_ loaded: LoadedPolicy, root: String) throws -> Plan {
        try ScopeWarnings.check(loaded, root: root, strict: strict)
        var options = planOptions
        // Under pressure, what the quarantine holds is purged first (oldest first): the plan counts it so.
        if !loaded.policy.pressure.isEmpty { options.quarantineHeld = PlanCommand.quarantineHeld(root: root, stateDirectory: nil) }
        var plan = try PlanCommand.makePlan(loaded.policy, root: root, options: options)
        AsOfOption.mark(&plan, options: planOptions)
        TmpfilesNotes.mark(&plan, policy: loaded.policy, root: root)
        return plan
    }

    /// The text plan, its rules in the policy's order.
    static func printText(_ plan: Plan, policy: Policy) {
        PlanRenderer(color: Terminal.useColor, ruleOrder: policy.rules.map(\.name)).render(plan) { Terminal.out($0, terminator: "") }
    }

    /// The start of a root's member of the JSON over every root, up to the key of its plan or error.
    static func member(_ target: RootTarget, index: Int, outcome: String, code: ExitCode) -> String {
        (index == 0 ? "\n" : ",\n") + "    { \"root\": \(RootsRun.json(target.path)), \"written\": \(RootsRun.json(target.written)), "
            + "\"discovered\": \(target.discovered), \"outcome\": \"\(outcome)\", \"exitCode\": \(code.rawValue), "
    }

    /// A policy with `roots:`: one plan per root, a text section (or a JSON member) each; a root that fails is
    /// reported and the next one still planned (Docs/plan-format.md, "Several roots").
    func runSeveral(_ loaded: LoadedPolicy, _ targets: [RootTarget]) throws -> ExitCode {
        if out != nil {
            throw UsageError(message: "--out saves the plan of one root: with a policy that lists its roots, add --root naming one of them", command: "policyctl plan")
        }
        var codes: [ExitCode] = []
        var changes = false
        if json { Terminal.out("{\n  \"policy\": \(RootsRun.json(loaded.policy.name)),\n  \"roots\": [", terminator: "") }
        for (i, target) in targets.enumerated() {
            var one = loaded
            one.policy = target.policy
            let plan: Plan
            do {
                try RootSafety.check(target.path, force: forceRoot, command: "policyctl plan")
                plan = try markedPlan(one, root: target.path)
            } catch {
                if let failure = error as? CommandFailure, failure.message == SignalCancellation.failure.message { throw error }
                let (code, message) = RootsRun.message(error)
                codes.append(code)
                Terminal.err("error: " + RootsRun.failed(target, message))
                if json {
                    Terminal.out(PlanCommand.member(target, index: i, outcome: "failed", code: code) + "\"error\": \(RootsRun.json(message)) }", terminator: "")
                } else {
                    Terminal.out(RootsRun.header(target, index: i, count: targets.count))
                    Terminal.out(RootsRun.failed(target, message) + "\n")
                }
                continue
            }
            changes = changes || plan.hasChanges
            codes.append(.success)
            if json {
                Terminal.out(PlanCommand.member(target, index: i, outcome: "planned", code: .success) + "\"plan\":\n", terminator: "")
                var writer = PlanJSONWriter { Terminal.out(bytes: $0) }
                try writer.write(plan)
                Terminal.out("    }", terminator: "")
            } else {
                if quiet && !plan.hasChanges && plan.violations.isEmpty { continue }
                Terminal.out(RootsRun.header(target, index: i, count: targets.count))
                PlanCommand.printText(plan, policy: target.policy)
                Terminal.out("")
            }
        }
        if json { Terminal.out(targets.isEmpty ? "]\n}" : "\n  ]\n}") }
        else if targets.isEmpty && !quiet { Terminal.out("No roots to plan: the policy lists none and discovery found no trash folder.") }
        let failed = codes.filter { $0 != .success }.count
        if failed > 0 && !json { Terminal.err("\(failed) of \(targets.count) roots failed; the others were planned") }
        let worst = RootsRun.worst(codes)
        if worst != .success { return worst }
        return detailedExitCode && changes ? .changesPending : .success
    }

    /// Plans with a progress line on stderr when it is a terminal; an unreadable root is exit 74.
    /// The bytes the root's quarantine holds (0 when there is none, or it cannot be read: then the plan counts
    /// on nothing from it).
    static func quarantineHeld(root: String, stateDirectory: String?) -> Int64 {
        ((try? StorageEngine.quarantine(root: root, stateDirectory: stateDirectory)) ?? nil)?.bytes ?? 0
    }

    static func makePlan(_ policy: Policy, root: String, options: PlanOptions = PlanOptions()) throws -> Plan {
        let printer = PlanEventPrinter(.plan)
        defer { printer.finish() }
        // SIGINT/SIGTERM stop the walk before its next directory: exit 3, and no plan (nor --out file) is written.
        let signals = SignalCancellation()
        defer { withExtendedLifetime(signals) {} }
        var engine = StorageEngine(policy: policy, root: root, planOptions: options)
        engine.planOptions.cancellation = signals.flag
        do {
            return try engine.plan(only: nil, events: printer.render)
        } catch {
            if case .cancelled = error { throw SignalCancellation.failure }
            guard case .fileSystem(let error) = error else { throw error }
            let shown = PrintableText.escapingControls(root)
            let what = error.path.isEmpty ? "the root '\(shown)'" : "'\(error.path.escaped)' under '\(shown)'"
            throw CommandFailure(code: .ioError, message: "cannot plan: \(what): \(error.reason)")
        }
    }

    /// Notes in this user's own state that the plan just written at `path` was made with its policy for its
    /// root, so `policyctl apply PATH` may take them from there (a plan file carries no authority of its own).
    /// A record that cannot be made is a warning: apply then asks for --policy and --root.
    static func noteRecord(of plan: Plan, at path: String) {
        guard let policyPath = plan.fingerprint?.policyPath else { return }
        do {
            let bytes = try TrustedFile.read(path, limit: PlanFile.sizeLimit, what: "plan file")
            try PlanRecords.note(bytes, PlanRecord(policyPath: policyPath, root: plan.root))
        } catch TrustedFile.ReadError.notRegular {
            // Written to a device or FIFO (--out /dev/stdout): there is no file to apply later.
        } catch {
            Terminal.err(PrintableText.escapingControls("warning: no record of this plan was kept (\(error)); apply it with: policyctl apply \(path) --policy \(policyPath) --root \(plan.root)"))
        }
    }

    /// Writes the plan JSON next to `path` under a temporary name, syncs it, then renames it into place,
    /// so a reader never sees half a plan.
    static func write(_ plan: Plan, to path: String) throws {
        // Only a regular file (or nothing yet) is replaced by rename. A device, FIFO or socket is written in
        // place: renaming over /dev/null would replace the device itself with a file.
        if let existing = system_lstat(path), existing.kind != .regular, existing.kind != .symbolicLink {
            guard existing.kind != .directory else {
                throw CommandFailure(code: .ioError, message: "cannot write \(path): it is a directory")
            }
            let fd = system_open(path, [.writeOnly, .closeOnExec, .noControllingTerminal])
            guard fd >= 0 else { throw CommandFailure(code: .ioError, message: "cannot write \(path): \(system_errno)") }
            defer { system_close(fd) }
            var writer = PlanJSONWriter { try writeAll(fd, $0) }
            do { try writer.write(plan) } catch let e as Errno {
                throw CommandFailure(code: .ioError, message: "cannot write \(path): \(e)")
            }
            return
        }
        // The folder chased as a root's path is (PathChase), then everything on its descriptor: the temporary
        // made O_CREAT|O_EXCL|O_NOFOLLOW, written, fsynced, renamed over the name (a symlink there is replaced).
        let shown = PrintableText.escapingControls(path)
        do throws(FileSystemError) {
            let (folder, name) = try PathChase.folder(holding: path)
            let temporary = FileName(unchecked: name.bytes + Array(".tmp-\(system_getpid())".utf8))
            do throws(FileSystemError) {
                let file = try folder.handle.openFile(temporary, options: [.writeOnly, .create, .exclusive], permissions: 0o644)
                var failure: FileSystemError? = nil
                var writer = PlanJSONWriter { bytes in
                    do throws(FileSystemError) { try file.write(bytes) } catch { failure = error; throw error }
                }
                do { try writer.write(plan) } catch {
                    throw failure ?? FileSystemError.unexplained(.write)
                }
                try file.sync()
                try folder.handle.rename(temporary, to: name, noReplace: false)
            } catch {
                try? folder.handle.removeFileIfPresent(temporary)
                throw error
            }
        } catch {
            throw CommandFailure(code: .ioError, message: "cannot write \(shown): \(error.reason)")
        }
    }

    private static func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws {
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { system_write(fd, $0.baseAddress! + written, bytes.count - written) }
            if n < 0 {
                if system_errno == .interrupted { continue }
                throw system_errno
            }
            written += n
        }
    }
}
