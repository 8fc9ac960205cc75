// `policyctl apply`: plan (or read a saved plan), confirm, and carry it out as one journaled transaction.
// Never prompts without a TTY, never applies a stale plan, never changes anything past a refused check.
import Foundation
import StoragePolicy

struct ApplyCommand: Command {
    static let summary = CommandSummary(
        name: "apply",
        abstract: "Carry out a plan as one journaled transaction: a failure rolls all of it back.",
        discussion: """
            Plans the policy against the root (or reads a plan saved with 'policyctl plan --out') and applies it \
            under ROOT/.policyctl: every change is journaled before it is made, targets that changed since the plan \
            are skipped and reported. An error on one entry (EACCES, EPERM, ENAMETOOLONG, EBUSY, ELOOP, EROFS, \
            ENOTEMPTY, EXDEV) skips that entry and what depends on it, named with its errno, and the rest commits; \
            an error about the run (I/O, ENOSPC, the journal) rolls everything back except the file deletes already \
            made (they roll forward), and any error with --all-or-nothing rolls everything back (every delete is then \
            staged). An interrupted apply is finished or \
            rolled back by 'policyctl recover', which also runs at the start of every apply. \
            Without a TTY apply never prompts: timers, cron jobs and scripts must pass --yes. \
            Exit codes: 0 applied (items that changed or vanished since the plan are reported, not failures), or \
            nothing to do, or skipped because another run holds the lock (--no-wait); 1 applied, but some items were \
            skipped for an error (each named with its errno); 3 nothing was changed or everything was rolled back: refused by \
            --max-delete, a stale plan, --max-runtime, or a failure midway; 64 usage (including no --yes without a \
            TTY); 65 invalid policy or plan file; 74 an I/O error, or a rollback that could not finish \
            (run 'policyctl recover').
            """,
        usage: [
            "--policy <file> --root <dir> [--yes] [--max-delete <N|N%|none>] [--no-wait] [<options>]",
            "<planfile> [--policy <file> --root <dir>] [--yes] [--max-delete <N|N%|none>] [--no-wait] [<options>]",
        ]
    )

    struct Options: ParsableOptions, ScriptPolicyOptions {
        var planfile: String?
        var policy: String?
        var cacheDir: String?
        var root: String?
        var yes = false
        var maxDelete: String?
        var noWait = false
        var maxRuntime: String?
        var allOrNothing = false
        var verbose = false
        var logFormat: String?
        var forceRoot = false
        var stateDir: String?
        var quiet = false
        var metricsFile: String?
        var user = false

        var savedPlan: String? { planfile }

        static var arguments: [ArgumentField<Self>] { [
            .argument(\.planfile, "planfile", help: "A plan saved with 'policyctl plan --out', judged by --policy and --root (or, for a plan you saved yourself, by the policy and root its record in your state notes); refused when it names another policy or root (65), or when they changed since (3)."),
        ] }

        static var options: [OptionField<Self>] { [
            .option(\.policy, "policy", short: "p", value: "file", help: "The policy to plan and apply (with a plan file: the policy that judges it).", completion: .file),
            .shared(\.cacheDir, ScriptLauncher.cacheDirOption),
            .option(\.root, "root", short: "r", value: "dir", help: "The directory the policy governs.", completion: .directory),
            .flag(\.yes, "yes", short: "y", help: "Apply without asking. Required without a TTY: timers, cron jobs and scripts must pass it."),
            .option(\.maxDelete, "max-delete", value: "N|N%|none", help: "Refuse a plan deleting more than N entries (or N% of those scanned) before anything changes; exit 3. Overrides the policy's max-delete; 'none' lifts every cap. With --yes and neither this nor the policy's max-delete, the cap is 50% of the entries scanned (at least 100)."),
            .flag(\.noWait, "no-wait", help: "When another run holds the lock, print 'skipped: another run in progress' and exit 0 instead of waiting (timers don't pile up)."),
            .option(\.maxRuntime, "max-runtime", value: "duration", help: "Past this budget (e.g. 30m, 1h; counted from the start, waiting for the lock included) stop, roll back what was done (file deletes already made stay made) and exit 3."),
            .flag(\.allOrNothing, "all-or-nothing", help: "An error on any one entry rolls everything back (exit 3) instead of skipping that entry (exit 1)."),
            .flag(\.verbose, "verbose", short: "v", help: "One line per action."),
            .option(\.logFormat, "log-format", value: "format", help: "Log lines for journald and syslog: one line per action and a summary, no colour, no progress.",
                    values: ["plain", "json"]),
            .flag(\.forceRoot, "force-root", help: "Allow '/', the home directory itself or a system directory as the root."),
            .shared(\.stateDir, RootSession.stateDirOption),
            .shared(\.quiet, QuietOutput.option),
            .shared(\.user, RootsRun.userOption),
            .option(\.metricsFile, "metrics-file", value: "file", help: "After the run, write its metrics (exit code, time, bytes freed and actions per rule) to this file in the Prometheus text format, atomically: for node_exporter's textfile collector.", completion: .file),
        ] }
    }

    let planFile: String?
    let policyPath: String?
    let rootArgument: String?
    let yes: Bool
    let maxDelete: DeleteLimit?
    let maxDeleteText: String?
    /// `--max-delete none`.
    let unlimitedDeletes: Bool
    let noWait: Bool
    let maxRuntime: PolicyDuration?
    let log: ApplyLog
    let forceRoot: Bool
    let allOrNothing: Bool
    let stateDir: String?
    let metricsFile: String?
    let user: Bool
    let started = ContinuousClock.now

    init(_ options: Options) throws {
        planFile = options.planfile
        // A plan file without --policy is judged by its record, never by the drop-ins; a NAME is still a drop-in.
        policyPath = try PolicyArgument.resolve(options.policy, useSet: options.planfile == nil)
        rootArgument = options.root
        yes = options.yes
        noWait = options.noWait
        forceRoot = options.forceRoot
        allOrNothing = options.allOrNothing
        stateDir = options.stateDir
        metricsFile = options.metricsFile
        user = options.user
        log = ApplyLog(logFormat: options.logFormat, perAction: options.verbose || options.logFormat != nil, quiet: options.quiet)
        if planFile == nil && policyPath == nil {
            throw UsageError(message: "Missing --policy <file> and --root <dir> (or a plan file)", command: "policyctl apply")
        }
        maxDeleteText = options.maxDelete
        unlimitedDeletes = maxDeleteText == "none"
        maxDelete = unlimitedDeletes ? nil : try options.parsed(\.maxDelete, accepted: "a whole number, a percentage such as 5%, or none",
                                                                command: "policyctl apply") { DeleteLimit(parsing: $0) }
        maxRuntime = try options.parsed(\.maxRuntime, accepted: PolicyDuration.acceptedForms,
                                        command: "policyctl apply") { PolicyDuration(parsing: $0) }
    }

    func run() throws -> ExitCode {
        // Decided before anything else, so a timer without --yes fails the same way every time.
        if !yes && !Terminal.stdinIsTTY {
            throw CommandFailure(code: .usage, message: "apply needs confirmation and there is no terminal to ask on; pass --yes (timers, cron jobs and scripts must)")
        }
        var request: ApplyRequest
        if let planFile {
            let (plan, sha256) = try ApplyCommand.readPlan(planFile)
            // A plan file carries no authority: the policy and root that judge it are the caller's, or those
            // this user's own record of `plan --out` notes for exactly these bytes (Docs/safety.md, "Inputs").
            var record: PlanRecord? = nil
            if policyPath == nil {
                do { record = try PlanRecords.lookup(sha256: sha256) } catch {
                    throw CommandFailure(code: .ioError, message: "\(planFile): cannot read this user's record of it: \(error); nothing was changed")
                }
            }
            guard let policy = policyPath ?? record?.policyPath, let root = rootArgument ?? record?.root else {
                throw CommandFailure(code: .invalidPolicy, message: "\(planFile): refused: a plan file carries no authority of its own, "
                    + "and uid \(system_geteuid()) has no record of saving this one with 'policyctl plan --out'; name the policy and root "
                    + "that judge it: policyctl apply \(planFile) --policy FILE --root DIR")
            }
            request = ApplyRequest(root: root, source: .savedPlan(plan, path: planFile, policyFile: policy))
            let listed = try ApplyCommand.rootsPolicy(policy, root: root, stateDir: stateDir)
            request.compiledPolicy = try ApplyCommand.loadingScript { () throws(PolicyLoadError) in
                try PolicySource.compiledPolicy(for: PathNormalization.absolute(policy))
            } ?? listed?.policy
            if let listed { return try executeListed(request, stateDirectory: listed.stateDirectory) }
        } else {
            try RootsRun.requireRoot(policyPath!, root: rootArgument, command: "policyctl apply")
            let inMemory = PolicySource.isScript(policyPath!) || policyPath == PolicyArgument.dropInSet
            // Read (quietly for YAML, which is read again under the lock) to see whether it lists its roots.
            let policy = try QuietOutput.load(policyPath!, quiet: inMemory ? log.quiet : true).policy
            switch try RootsRun.select(policy, root: rootArgument, stateDir: stateDir, user: user, command: "policyctl apply") {
            case .several(let targets):
                return try applySeveral(targets)
            case .single(let one, let root, let state) where policy.hasRoots:
                return try executeListed(ApplyRequest(root: root, source: .policy(one)), stateDirectory: state)
            case .single(_, let root, _):
                request = ApplyRequest(root: root, source: inMemory ? .policy(policy) : .policyFile(policyPath!))
            }
        }
        return try execute(request, stateDirectory: stateDir)
    }

    /// One root's apply: the limits, the confirmation and the run, with its exit code (0, 1) or its failure thrown.
    func execute(_ given: ApplyRequest, stateDirectory: String?) throws -> ExitCode {
        var request = given
        // The same rail as plan's, for a root given or read from a plan file, before .policyctl is created.
        try RootSafety.check(request.root, force: forceRoot, command: "policyctl apply")
        request.maxDelete = maxDelete
        request.maxDeleteLabel = maxDeleteText.map { "--max-delete \($0)" }
        request.unlimitedDeletes = unlimitedDeletes
        // Unattended runs (timers, cron, scripts) get a blast radius even when the policy sets none: a policy
        // typo (a forgotten match:) stops at the first run instead of emptying a tree. A person at a terminal
        // sees the plan and confirms it.
        if yes {
            request.defaultMaxDelete = ApplyCommand.defaultMaxDelete
            request.defaultMaxDeleteLabel = "the default max-delete for --yes, \(ApplyCommand.defaultMaxDelete) (pass --max-delete N, N% or none to allow more, or set max-delete in the policy)"
        }
        if let maxRuntime {
            request.deadline = started.advanced(by: .seconds(maxRuntime.seconds))
            request.deadlineLabel = "--max-runtime \(maxRuntime)"
        }
        request.allOrNothing = allOrNothing
        request.waitForLock = !noWait
        request.stateDirectory = stateDirectory
        // Benchmarks only: the older designs, every delete staged or unlinked in place, to measure them beside
        // roll-forward deletes unlinked by workers.
        request.stagesEveryDelete = system_getenv("POLICYCTL_STAGE_DELETES") != nil
        request.unlinksInPlace = system_getenv("POLICYCTL_UNLINK_IN_PLACE") != nil
        // The log prints a done or unchanged step only per action (--verbose, --log-format).
        request.reportsEveryItem = log.perAction
        if !yes {
            let log = self.log
            request.confirm = { plan, rootPath in
                log.preview(plan, root: rootPath)
                return Terminal.confirm("Apply these \(plan.actions.count) changes to \(PrintableText.escapingControls(rootPath))?")
            }
        }

        let printer = ApplyEventPrinter(log: log, started: started)
        // From here SIGINT/SIGTERM stop the run cleanly (exit 3, "cancelled", nothing left for recover).
        let signals = SignalCancellation()
        request.cancellation = signals.flag
        defer { withExtendedLifetime(signals) {} }
        do {
            guard let result = try StorageEngine.apply(request, events: printer.render) else {
                writeMetrics(.success, nil, root: request.root)
                return .success
            }
            let code: ExitCode = result.failed.isEmpty ? .success : .findings
            writeMetrics(code, result.report, root: request.root)
            Policyctl.leftForExit = result
            return code
        } catch {
            printer.finishProgress()
            let failure = try printer.failure(error, root: request.root, planFile: planFile)
            // A run skipped for the lock (exit 0) did not apply: the last apply's metrics stay as they were.
            if failure.code != .success { writeMetrics(failure.code, nil, root: request.root) }
            throw failure
        }
    }

    /// `--metrics-file`: this run's metrics, labelled by the policy file (or plan file) and the root as given.
    func writeMetrics(_ code: ExitCode, _ report: ApplyReport?, root: String) {
        guard let metricsFile else { return }
        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let text = MetricsFile.text(policy: MetricsFile.policyLabel(policyPath, planFile: planFile), root: PathNormalization.absolute(root),
                                    exit: code, finishedNs: WallClock.nowNs(), seconds: seconds, report: report,
                                    bytesFreedTotal: MetricsFile.bytesFreedTotal(root: root, stateDirectory: stateDir))
        MetricsFile.write(text, to: metricsFile)
    }

    /// The cap `apply --yes` gets when neither --max-delete nor the policy sets one.
    static let defaultMaxDelete = DeleteLimit.percent(50, atLeast: 100)

    /// A compiled Swift policy resolved with its diagnostics printed: exit 65, or 74 when it cannot be read.
    static func loadingScript(_ load: () throws(PolicyLoadError) -> Policy?) throws -> Policy? {
        do { return try load() } catch {
            throw CommandFailure(code: DiagnosticStyle.report(error), message: "")
        }
    }

    /// A plan file read (a regular file, capped, under the trust rule) and decoded as it is read, with the
    /// SHA-256 of its bytes; exit 65 for what is no plan or is refused by the trust rule, 74 for I/O.
    static func readPlan(_ planFile: String) throws -> (Plan, sha256: String) {
        do {
            return try PlanFile.load(planFile)
        } catch {
            switch error {
            // A device, FIFO or oversized file is not a plan (65); a file that cannot be read is I/O (74).
            case .read(.io(let e)):
                throw CommandFailure(code: .ioError, message: "\(planFile): cannot read the plan file: \(e.errno)")
            case .read(.notRegular(_, let type)):
                throw CommandFailure(code: .invalidPolicy, message: "\(planFile): not a regular file (\(type.rawValue)); only regular files are read as plans; nothing was changed")
            case .read(let other):
                throw CommandFailure(code: .invalidPolicy, message: "\(other); nothing was changed")
            case .decode(let e):
                throw CommandFailure(code: .invalidPolicy, message: "\(planFile): not a plan file policyctl can read (\(e))")
            }
        }
    }
}
