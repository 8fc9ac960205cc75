// `policyctl recover`: finish or roll back an interrupted apply, trash or restore under ROOT/.policyctl.
// Safe to run at any time and any number of times; never deletes what a rolled-back run staged.
import StoragePolicy

struct RecoverCommand: Command {
    static let summary = CommandSummary(
        name: "recover",
        abstract: "Finish or roll back an interrupted apply.",
        discussion: """
            Reads ROOT/.policyctl/journal.jsonl (or DIR/journal.jsonl with --state-dir): a transaction interrupted before its commit record is rolled \
            back in reverse order (staged entries renamed back, renames undone, trashed items moved back, created \
            directories removed if empty, attributes restored); one interrupted after it has its purge finished. \
            Idempotent: running it again, even after it was itself interrupted, converges. \
            State that policyctl's user did not create (another owner, group or other write, a symlink) is refused, \
            and so is a journal that began on another directory (copied with the tree). Damaged journal records \
            are named FILE:LINE with what was done about each; an undo that could restore more than the engine \
            writes is never replayed. Every apply runs it \
            first. Exit codes: 0 done (or nothing to do, or skipped with --no-wait), 74 it could not finish \
            (the error names the path; run it again once fixed).
            """
    )

    struct Options: ParsableOptions {
        var root: String?
        var noWait = false
        var logFormat: String?
        var stateDir: String?

        static var options: [OptionField<Self>] { [
            .option(\.root, "root", short: "r", value: "dir", help: "(required) The directory whose interrupted apply to recover.", completion: .directory),
            .flag(\.noWait, "no-wait", help: "When another run holds the lock, print 'skipped: another run in progress' and exit 0."),
            .option(\.logFormat, "log-format", value: "format", help: "Log lines for journald and syslog.", values: ["plain", "json"]),
            .shared(\.stateDir, RootSession.stateDirOption),
        ] }
    }

    let root: String
    let noWait: Bool
    let stateDir: String?
    let log: ApplyLog

    init(_ options: Options) throws {
        let root = try options.required(\.root, command: "policyctl recover")
        self.root = root
        noWait = options.noWait
        stateDir = options.stateDir
        log = ApplyLog(logFormat: options.logFormat, perAction: true)
    }

    func run() throws -> ExitCode {
        let printer = ApplyEventPrinter(log: log)
        let report: RecoveryReport?
        do {
            // A root that never had an apply has nothing to recover: its .policyctl is not created for that.
            report = try StorageEngine.recover(root: root, stateDirectory: stateDir, waitForLock: !noWait, events: printer.render)
        } catch .lockHeld {
            return .success
        } catch {
            throw try printer.failure(error, root: root)
        }
        if report?.nothingToDo ?? true, log.format != .json {
            Terminal.out("Nothing to recover: no interrupted transaction under \(PrintableText.escapingControls(printer.rootPath ?? RootSession.canonical(root))).")
        }
        return .success
    }
}
