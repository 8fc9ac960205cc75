// `policyctl undo TRANSACTION`: reverses a committed transaction as a new journaled one (kind `undo`).
// Renames go back, trashed items are restored, markers and cache tags return to what the journal recorded,
// directories it created go once empty; deletes are named as not undoable. --dry-run changes nothing.
import StoragePolicy

struct UndoCommand: Command {
    static let summary = CommandSummary(
        name: "undo",
        abstract: "Reverse a committed transaction, as a new journaled one.",
        discussion: """
            Reads the transaction's changes from the journal (or from the journal's history files, where an apply \
            moved older transactions) and reverses them, newest first, so a folder renamed after an entry inside it \
            comes back with it in one go: renames are renamed back, items moved to the trash are restored, markers \
            and cache tags are put back to what the journal recorded, directories it created are removed if they \
            are empty, and deletes the policy's quarantine: window held back are put back from the quarantine \
            (bytes, mode, owner, times and xattrs as they were: a rename), never over an existing entry and only \
            into the folder each was taken from (or one made again as the journal recorded it). Plain deletes, \
            and quarantined ones whose window was purged, cannot be undone: they are listed. A piece whose target \
            changed since (another entry, other contents) is skipped and reported. 'last' names the newest \
            transaction that is not a purge. The undo runs as a new transaction of kind 'undo' that 'policyctl \
            journal' shows with the transaction it reversed, and that recovery finishes or rolls back like any \
            other; --dry-run reads only (it never rotates or rewrites the journal). Exit codes: 0 undone, 1 some \
            pieces could not be undone (deletes, changed targets; each named), 3 refused or rolled back (nothing \
            changed), 64 usage (including no --yes without a terminal), 74 I/O error.
            """,
        usage: ["--root <dir> [--dry-run] [--yes] <transaction>"]
    )

    struct Options: ParsableOptions {
        var transaction = ""
        var root: String?
        var dryRun = false
        var yes = false
        var noWait = false
        var stateDir: String?
        var forceRoot = false

        static var arguments: [ArgumentField<Self>] { [
            .argument(\.transaction, "transaction", help: "The transaction id, as 'policyctl journal' shows it, or 'last' for the newest.", completion: .none),
        ] }

        static var options: [OptionField<Self>] { [
            .option(\.root, "root", short: "r", value: "dir", help: "(required) The root the transaction changed.", completion: .directory),
            .flag(\.dryRun, "dry-run", short: "n", help: "Print what undo would do and change nothing."),
            .flag(\.yes, "yes", short: "y", help: "Undo without asking. Required without a TTY."),
            .flag(\.noWait, "no-wait", help: "When another run holds the lock, print 'skipped: another run in progress' and exit 0."),
            .shared(\.stateDir, RootSession.stateDirOption),
            .flag(\.forceRoot, "force-root", help: "Allow '/', the home directory itself or a system directory as the root."),
        ] }
    }

    let root: String
    let transaction: String
    let dryRun: Bool
    let yes: Bool
    let noWait: Bool
    let stateDir: String?

    init(_ options: Options) throws {
        let root = try options.required(\.root, command: "policyctl undo")
        try RootSafety.check(root, force: options.forceRoot, command: "policyctl undo")
        self.root = root
        transaction = options.transaction
        dryRun = options.dryRun
        yes = options.yes
        noWait = options.noWait
        stateDir = options.stateDir
    }

    func run() throws -> ExitCode {
        // As apply does: decided before anything else, so a script without --yes is told what to pass.
        if !yes && !dryRun && !Terminal.stdinIsTTY {
            throw CommandFailure(code: .usage, message: "undo needs confirmation and there is no terminal to ask on; pass --yes (or --dry-run to see what it would undo)")
        }
        let printer = ApplyEventPrinter(log: ApplyLog(format: .human, perAction: true))
        let session = StorageEngine.Session(root: root, stateDirectory: stateDir, waitForLock: !noWait)
        var cancelled = false
        let outcome: (plan: UndoPlan, report: ApplyReport?)?
        do {
            outcome = try StorageEngine.undo(transaction, session: session, events: printer.render) { plan in
                for line in plan.changes { Terminal.out("\(dryRun ? "would " : "")\(line)") }
                for line in plan.notUndoable { Terminal.out("cannot undo \(line)") }
                for line in plan.skipped { Terminal.out("skipped \(line)") }
                if dryRun {
                    Terminal.out("dry run: \(plan.changes.count) change\(plan.changes.count == 1 ? "" : "s") would undo \(plan.transaction); nothing was changed")
                    return false
                }
                if plan.changes.isEmpty {
                    Terminal.out("nothing to undo in \(plan.transaction)")
                    return false
                }
                if !yes {
                    guard Terminal.confirm("Undo these \(plan.changes.count) changes of \(plan.transaction)?") else {
                        Terminal.err("Undo cancelled; nothing was changed.")
                        cancelled = true
                        return false
                    }
                }
                return true
            }
        } catch {
            if case .undoRefused(let refused) = error {
                Terminal.err("undo refused: \(refused.message)")
                return .rolledBack
            }
            if case .fileSystem(let e) = error, printer.rootPath != nil { throw CommandFailure(code: .ioError, message: "\(e)") }
            throw try printer.failure(error, root: root)
        }
        // No state folder: nothing was ever applied here.
        guard let outcome else { return .ioError }
        let partial = !outcome.plan.notUndoable.isEmpty || !outcome.plan.skipped.isEmpty
        if cancelled { return .usage }
        guard let report = outcome.report else { return partial ? .findings : .success }
        return partial || !report.skipped.isEmpty ? .findings : .success
    }
}
