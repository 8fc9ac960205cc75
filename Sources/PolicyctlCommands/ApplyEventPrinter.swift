// Renders the engine's ApplyEvents as apply and recover have always printed them (human lines, or plain/JSON
// log lines) and turns an EngineError into the command's message and exit code. Decides nothing itself.
import StoragePolicy

final class ApplyEventPrinter: @unchecked Sendable {
    let log: ApplyLog
    let started: ContinuousClock.Instant
    /// The canonical root once the engine opened it; nil while it could not be opened.
    private(set) var rootPath: String?
    private var planning: ProgressLine?
    private var applying: ProgressLine?
    /// The plan's volume (device, and free space when pressure rules measured it), for the summary's freed line.
    private var volume: Plan.Summary.Volume?

    init(log: ApplyLog, started: ContinuousClock.Instant = .now) {
        self.log = log; self.started = started
    }

    private var showsProgress: Bool { Terminal.stderrIsTTY && log.format == .human }

    func render(_ event: ApplyEvent) {
        switch event {
        case .planning(let progress):
            if planning == nil { planning = ProgressLine(enabled: showsProgress) }
            planning!.update("planning: \(progress.entriesScanned) entries, \(progress.directory.escaped)")
            return
        case .applying(let done, let total):
            if applying == nil { applying = ProgressLine(enabled: showsProgress) }
            applying!.update("applying: \(done)/\(total)")
            return
        default:
            finishProgress()
        }
        switch event {
        case .opened(let root): rootPath = root
        case .stateNotice(let notice): Terminal.err("warning: \(PrintableText.escapingControls(notice))")
        case .waitingForLock(let pid):
            Terminal.err("waiting for another run on \(PrintableText.escapingControls(rootPath ?? ""))\(pid.map { " (pid \($0))" } ?? "") to finish...")
        case .lockHeld(let pid): log.skippedRun(root: rootPath ?? "", pid: pid)
        case .recovered(let report): log.recovery(report)
        case .nothingToDo: log.nothingToDo(root: rootPath ?? "")
        case .cancelled: Terminal.err("Apply cancelled; nothing was changed.")
        case .done(let item), .unchanged(let item, _), .skipped(let item, _): log.item(item)
        case .warning(let message): log.warning(message)
        case .journalRotated(let report): log.journalRotated(report)
        case .quarantinePurged(let report): log.quarantinePurged(report)
        case .committed(let report): log.summary(report, seconds: elapsed, volume: volume)
        case .refused(let error), .failed(let error): log.failure(error, seconds: elapsed)
        // Said by the error the call throws.
        case .planned(let plan): volume = plan.summary.volumes?.first
        case .stalePlan, .planRefused, .planMismatch, .planning, .applying: break
        }
    }

    func finishProgress() {
        planning?.finish(); planning = nil
        applying?.finish(); applying = nil
    }

    /// The command's failure for `error`: its message (printed by Policyctl.run) and exit code. A held lock
    /// (--no-wait) was already reported as skipped: exit 0.
    func failure(_ error: EngineError, root: String, planFile: String? = nil) throws -> CommandFailure {
        switch error {
        case .lockHeld: return CommandFailure(code: .success, message: "")
        case .fileSystem(let e) where rootPath == nil:
            return CommandFailure(code: .ioError, message: "\(PrintableText.escapingControls(root)): cannot open the root: \(e.reason)")
        case .fileSystem(let e): return CommandFailure(code: .ioError, message: "planning failed: \(e)")
        case .stateFolder(let e):
            return CommandFailure(code: .ioError, message: "\(rootPath ?? root): cannot set up the state folder: \(e); nothing was changed")
        case .untrustedState(let untrusted):
            return CommandFailure(code: .ioError, message: "\(ApplyEventPrinter.located(untrusted, root: rootPath ?? root)); nothing was changed")
        case .stalePlan(let problem): return CommandFailure(code: .rolledBack, message: "\(problem); nothing was changed")
        case .planRefused(let invalid):
            return CommandFailure(code: .invalidPolicy, message: "\(planFile ?? "plan"): plan refused: \(invalid); nothing was changed")
        case .planMismatch(let why):
            return CommandFailure(code: .invalidPolicy, message: "\(planFile ?? "plan"): plan refused: \(why); nothing was changed")
        case .planPolicyUnreadable: return CommandFailure(code: .ioError, message: error.description)
        case .invalidPolicy(let e):
            for d in e.diagnostics { Terminal.err(d.description) }
            return CommandFailure(code: .invalidPolicy, message: planFile == nil ? "" : "the plan's policy is not valid; nothing was changed")
        case .recovery(let e): return CommandFailure(code: .ioError, message: e.description)
        case .apply(let e):
            // Said by the refused/failed event.
            switch e {
            case .refused, .rolledBack: return CommandFailure(code: .rolledBack, message: "")
            case .failed, .rollbackIncomplete: return CommandFailure(code: .ioError, message: "")
            }
        case .undoRefused(let e): return CommandFailure(code: .rolledBack, message: "undo refused: \(e.message)")
        // SIGINT/SIGTERM: stopped between groups and rolled back (said by the failed event), or before anything.
        case .cancelled(nil): return CommandFailure(code: .rolledBack, message: "cancelled; nothing was changed")
        case .cancelled: return CommandFailure(code: .rolledBack, message: "")
        }
    }

    /// An untrusted state path named absolutely: relative ones are under the root.
    static func located(_ error: UntrustedState, root: String) -> String {
        let where_ = error.path.hasPrefix("/") ? "" : (root.hasSuffix("/") ? root : root + "/")
        return "\(where_)\(error)"
    }

    private var elapsed: Double {
        let d = ContinuousClock.now - started
        return Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }
}
