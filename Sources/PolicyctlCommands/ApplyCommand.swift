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
                return Terminal.confirm("Apply these \(plan.actions.count) changes to \(rootPath)?")
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

/// How apply, recover and trash talk: human lines (colour on a TTY), or plain/JSON log lines for journald.
struct ApplyLog {
    enum Format: String { case human, plain, json }
    let format: Format
    /// One line per action (--verbose, or any --log-format); skipped items are always listed.
    let perAction: Bool
    /// `--quiet`: nothing printed when there is nothing to do (see QuietOutput).
    var quiet = false

    init(format: Format, perAction: Bool, quiet: Bool = false) {
        self.format = format
        self.perAction = perAction
        self.quiet = quiet
    }

    /// The log a `--log-format` value asks for: human lines when there is none.
    init(logFormat: String?, perAction: Bool, quiet: Bool = false) {
        self.init(format: logFormat.flatMap(Format.init(rawValue:)) ?? .human, perAction: perAction, quiet: quiet)
    }

    private func emit(_ line: JSONLogLine) {
        Terminal.out(bytes: line.bytes + [0x0A])
    }

    private func emit(_ fields: [(String, JSONLogLine.Value)]) { emit(JSONLogLine(fields)) }

    private func style(_ text: String, _ s: Terminal.Style) -> String {
        format == .human ? Terminal.styled(text, s) : text
    }

    func skippedRun(root: String, pid: Int32?) {
        if format == .json {
            emit([("event", .string("skipped")), ("reason", .string("another run in progress")), ("root", .string(root)),
                  ("pid", pid.map { .integer(Int64($0)) } ?? .null)])
        } else {
            Terminal.out("skipped: another run in progress on \(root)\(pid.map { " (pid \($0))" } ?? "")")
        }
    }

    func nothingToDo(root: String) {
        if quiet { return }
        if format == .json {
            emit([("event", .string("summary")), ("outcome", .string("nothing-to-do")), ("root", .string(root))])
        } else {
            Terminal.out("Nothing to do: \(root) already matches the policy.")
        }
    }

    func recovery(_ report: RecoveryReport) {
        if report.tornTail {
            line("recover", "the journal ended in a torn line (an interrupted write); it was cut off")
        }
        for damaged in report.damaged { line("recover", damaged.description) }
        for entry in report.entries {
            switch entry.resolution {
            case .rolledBack:
                let finished = entry.finished > 0 ? ", \(entry.finished) roll-forward delete\(entry.finished == 1 ? "" : "s") finished" : ""
                line("recover", "rolled back interrupted transaction \(entry.transaction) (\(entry.undone) change\(entry.undone == 1 ? "" : "s") undone\(finished))")
            case .purgeFinished:
                line("recover", "finished the purge of committed transaction \(entry.transaction)")
            }
            for kept in entry.kept { line("recover", "kept \(kept)") }
        }
    }

    private func line(_ event: String, _ message: String) {
        if format == .json { emit([("event", .string(event)), ("message", .string(message))]) } else { Terminal.out("\(event): \(message)") }
    }

    /// The summary and a sample of actions shown before asking on a TTY (on stderr, stdout stays clean).
    func preview(_ plan: Plan, root: String) {
        var counts = ActionCounts()
        for a in plan.actions { counts[StepVerb(a.kind)] += 1 }
        Terminal.err("Plan for \(root) (policy \(plan.policy)): " + ApplyLog.describe(counts)
                     + (plan.summary.bytesFreed > 0 ? "; \(ByteSize.human(plan.summary.bytesFreed)) to free" : ""))
        for a in plan.actions.prefix(20) {
            Terminal.err("  " + ApplyLog.describe(a) + "  (\(a.rule): \(a.reason))")
        }
        if plan.actions.count > 20 { Terminal.err("  ... and \(plan.actions.count - 20) more") }
    }

    func report(_ report: ApplyReport, seconds: Double) {
        for item in report.lazyItems { self.item(item) }
        for w in report.warnings { warning(w) }
        summary(report, seconds: seconds)
    }

    /// One step's line: done and unchanged with --verbose or a log format, skipped always.
    func item(_ item: ApplyReport.Item) {
        switch item.outcome {
        case .done where perAction:
            if format == .json {
                var line = actionFields(item)
                line.append("outcome", "done")
                emit(line)
            } else {
                Terminal.out(style(item.verb.rawValue, .green) + " " + ApplyLog.describe(item.action, destination: item.destination) + " (\(item.action.rule))")
            }
        case .unchanged(let why) where perAction:
            if format == .json {
                var line = actionFields(item)
                line.append("outcome", "unchanged")
                line.append("reason", why)
                emit(line)
            } else {
                Terminal.out(style("unchanged", .dim) + " \(item.action.path.escaped): \(why) (\(item.action.rule))")
            }
        case .skipped(let why):
            if format == .json {
                var line = actionFields(item)
                line.append("outcome", "skipped")
                line.append("reason", why)
                if let error = item.error {
                    line.append("errno", error.errno.name)
                    line.append("call", error.operation.name)
                    if error.path != item.action.path { line.append("errorPath", error.path.string) }
                }
                emit(line)
            } else {
                Terminal.out(style("skipped", .yellow) + " \(item.verb) \(item.action.path.escaped): \(why)")
            }
            // An entry skipped for an error is a failure to look at: named on stderr too, path and errno.
            if let error = item.error {
                Terminal.err("\(item.action.path.escaped): skipped: " + (error.path == item.action.path ? "\(error.errno) [\(error.operation.name)]" : error.description))
            }
        default: break
        }
    }

    func warning(_ w: String) {
        if format == .json { emit([("event", .string("warning")), ("message", .string(w))]) } else { Terminal.err("warning: \(w)") }
    }

    /// The committed transaction's summary line.
    /// `volume`: the plan's (its device, and its free space when pressure rules measured it), when known.
    func summary(_ report: ApplyReport, seconds: Double, volume: Plan.Summary.Volume? = nil) {
        let skipped = report.skipped.count
        let failed = report.failed.count
        let byRule = report.bytesFreedByRule
        if format == .json {
            var fields: [(String, JSONLogLine.Value)] = [("event", .string("summary")), ("outcome", .string("committed")),
                  ("transaction", report.transaction.map { .string($0) } ?? .null), ("counts", .counts(report.counts.byName)),
                  ("skipped", .integer(Int64(skipped))), ("failed", .integer(Int64(failed))),
                  ("bytesFreed", .integer(report.bytesFreed)), ("seconds", .seconds(seconds)),
                  ("bytesFreedByRule", .counts(byRule.mapValues { Int($0) }))]
            if let volume {
                var v: [String: Int64] = ["device": Int64(bitPattern: volume.device), "bytesFreed": report.bytesFreed]
                if let before = volume.freeBefore { v["freeBefore"] = before }
                if let size = volume.size { v["size"] = size }
                fields.append(("volumes", .integerObjects([v])))
            }
            emit(fields)
            return
        }
        var text = "applied: " + (report.counts.isEmpty ? "nothing" : ApplyLog.describe(report.counts))
        if skipped > 0 { text += ", \(skipped) skipped" + (failed > 0 ? " (\(failed) for an error)" : "") }
        if report.bytesFreed > 0 { text += "; \(ByteSize.human(report.bytesFreed)) freed" }
        if let tx = report.transaction { text += "; transaction \(tx)" }
        text += String(format: " in %.2fs", seconds)
        // Per rule and per volume, on a line of its own beside the summary line, which stays where readers look
        // for it: the first line of human output, the last of a plain log.
        guard report.bytesFreed > 0 else { Terminal.out(text); return }
        if format == .human { Terminal.out(text) }
        var freed = "freed per rule: " + PlanRenderer.perRule(byRule)
        if let volume {
            freed += "; on the root's volume (device \(PlanRenderer.device(volume.device))): \(ByteSize.human(report.bytesFreed))"
            if let before = volume.freeBefore, let size = volume.size {
                freed += " (\(ByteSize.human(before)) free of \(ByteSize.human(size)) before the plan)"
            }
        }
        Terminal.out(freed)
        if format != .human { Terminal.out(text) }
    }

    /// Prints the outcome and returns the exit code: 0 applied, 1 applied with items skipped for an error,
    /// 3 refused or rolled back, 74 rollback incomplete.
    func finish(_ result: Result<ApplyReport, ApplyError>, seconds: Double) -> ExitCode {
        switch result {
        case .success(let r):
            report(r, seconds: seconds)
            return r.failed.isEmpty ? .success : .findings
        case .failure(let error):
            failure(error, seconds: seconds)
            switch error {
            case .refused, .rolledBack: return .rolledBack
            case .failed, .rollbackIncomplete: return .ioError
            }
        }
    }

    func failure(_ error: ApplyError, seconds: Double) {
        let outcome: String
        switch error {
        case .refused: outcome = "refused"
        case .failed: outcome = "failed"
        case .rolledBack: outcome = "rolled-back"
        case .rollbackIncomplete: outcome = "rollback-incomplete"
        }
        if format == .json {
            var line = JSONLogLine([("event", .string("summary")), ("outcome", .string(outcome)), ("reason", .string(error.description))])
            if case .rolledBack(let tx, _, _, _) = error { line.append("transaction", tx) }
            if case .rollbackIncomplete(let tx, _, _) = error { line.append("transaction", tx) }
            emit(line)
        }
        Terminal.err("Error: \(error)")
    }

    private func actionFields(_ item: ApplyReport.Item) -> JSONLogLine {
        var line = JSONLogLine()
        line.append("event", "action")
        line.append("action", item.verb.rawValue)
        line.append("path", item.action.path.string)
        line.append("rule", item.action.rule)
        if !item.action.path.isValidUTF8 { line.append("pathBase64", item.action.path.base64) }
        switch item.action.kind {
        case .rename(let to), .trash(let to): line.append("to", to.string)
        case .setxattr(let name, _): line.append("attribute", name)
        default: break
        }
        if item.action.isDelete { line.append("bytes", item.action.bytes) }
        if let destination = item.destination { line.append("destination", destination.string) }
        return line
    }

    /// `3 delete, 1 rename, 2 mkdir`, in the verbs' order.
    static func describe(_ counts: ActionCounts) -> String {
        counts.map { "\($0.count) \($0.verb)" }.joined(separator: ", ")
    }

    static func describe(_ a: Action, destination: RelativePath? = nil) -> String {
        switch a.kind {
        case .rename(let to), .trash(let to): return "\(a.path.escaped) -> \((destination ?? to).escaped)"
        case .setxattr(let name, _): return "\(a.path.escaped) \(name)"
        case .setPermissions(let mode, let owner, let group):
            return "\(a.path.escaped) \(PlanRenderer.permissions(mode: mode, owner: owner, group: group))"
        case .delete where a.bytes > 0: return "\(a.path.escaped) [\(ByteSize.human(a.bytes))]"
        default: return a.path.escaped
        }
    }
}
