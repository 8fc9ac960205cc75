// `policyctl journal`: what was applied, when, by which policy, and how it ended, read from the journal.
// Read-only: never takes the lock, never repairs or truncates the journal, never creates .policyctl.
import Foundation
import StoragePolicy

struct JournalCommand: Command {
    static let summary = CommandSummary(
        name: "journal",
        abstract: "Show past transactions: when, which policy, what was done, what was skipped.",
        discussion: "Reads ROOT/.policyctl/journal.jsonl, or DIR/journal.jsonl with --state-dir (see Docs/journal.md for its format). Newest last. Damaged lines are named FILE:LINE on stderr, with what was done about each. 'journal show TRANSACTION' lists every path that transaction changed, rolled back, skipped or kept, and why, reading the journal's gzip history files for a transaction an apply rotated out of the live journal; 'journal show last' shows the newest. Reads only: never rotates, compacts or repairs the journal. Exit codes: 0 shown, 64 usage (including a transaction the journal does not have), 74 I/O error or refused state.",
        usage: ["--root <dir> [--format text|json] [--last <N>]", "show --root <dir> [--format text|json] <transaction>"]
    )

    struct Options: ParsableOptions {
        var root: String?
        var format = "text"
        var last: String?
        var stateDir: String?
        var show: String?
        var transaction: String?

        static var arguments: [ArgumentField<Self>] { [
            .argument(\.show, "show", help: "'show': one transaction path by path, instead of the list.", completion: .none),
            .argument(\.transaction, "transaction", help: "With 'show': the transaction id, as 'policyctl journal' lists it, or 'last' for the newest.", completion: .none),
        ] }

        static var options: [OptionField<Self>] { [
            .option(\.root, "root", short: "r", value: "dir", help: "(required) The directory whose journal to read.", completion: .directory),
            .option(\.format, "format", value: "format", help: "Output format.", default: "text", values: ["text", "json"]),
            .option(\.last, "last", value: "N", help: "Only the last N transactions."),
            .shared(\.stateDir, RootSession.stateDirOption),
        ] }
    }

    let root: String
    let json: Bool
    let last: Int?
    let stateDir: String?
    /// `journal show TX`: the one transaction to show path by path.
    let shown: String?

    init(_ options: Options) throws {
        let root = try options.required(\.root, command: "policyctl journal")
        self.root = root
        switch (options.show, options.transaction) {
        case (nil, _): shown = nil
        case ("show", let id?): shown = id
        case ("show", nil):
            throw UsageError(message: "'journal show' needs the transaction id ('policyctl journal --root \(root)' lists them)", command: "policyctl journal")
        case (let word?, _):
            throw UsageError(message: "Unexpected argument '\(word)': the one word 'journal' takes is 'show' ('policyctl journal show --root DIR TRANSACTION')", command: "policyctl journal")
        }
        if shown != nil && options.last != nil {
            throw UsageError(message: "--last picks transactions from the list; 'journal show' shows the one named", command: "policyctl journal")
        }
        json = options.format == "json"
        stateDir = options.stateDir
        last = try options.parsed(\.last, accepted: "a positive whole number", command: "policyctl journal") { text in
            Int(text).flatMap { $0 > 0 ? $0 : nil }
        }
    }

    func run() throws -> ExitCode {
        if let shown { return try show(shown) }
        let reading = try Self.readState(root: root) { events throws(EngineError) in
            try StorageEngine.journal(root: root, stateDirectory: stateDir, events: events)
        }
        var transactions = reading?.transactions ?? []

        if let last { transactions = Array(transactions.suffix(last)) }
        // On stderr in both formats: stdout stays clean JSON for tools.
        for damaged in reading?.damaged ?? [] { Terminal.err("note: \(PrintableText.escapingControls("\(damaged)"))") }
        if json {
            // The one pretty writer (Base/PrettyJSON), in JSONEncoder's sorted layout: the bytes tools already parse.
            Terminal.out(bytes: try PrettyJSON.encode(transactions) + [0x0A])
            return .success
        }
        if transactions.isEmpty {
            Terminal.out("No transactions recorded under \(PrintableText.escapingControls(RootSession.canonical(root))).")
            return .success
        }
        for (i, t) in transactions.enumerated() {
            if i > 0 { Terminal.out("") }
            Terminal.out(JournalCommand.render(t))
        }
        return .success
    }

    /// The failure for an error reading the journal: the root that cannot be opened, or refused state (74).
    /// Runs `read` on `root`'s state (the journal, or one transaction of it) as every journal reader does: the
    /// state's notices to stderr, and an error mapped as `policyctl journal` maps it, naming the root it opened.
    static func readState<T>(root: String, _ read: ((ApplyEvent) -> Void) throws(EngineError) -> T) throws -> T {
        var rootPath: String? = nil
        do {
            return try read { event in
                switch event {
                case .opened(let path): rootPath = path
                case .stateNotice(let notice): Terminal.err("warning: \(notice)")
                default: break
                }
            }
        } catch {
            throw failure(error, root: root, rootPath: rootPath)
        }
    }

    static func failure(_ error: EngineError, root: String, rootPath: String?) -> CommandFailure {
        switch error {
        case .fileSystem(let e) where rootPath == nil:
            CommandFailure(code: .ioError, message: "\(PrintableText.escapingControls(root)): cannot open the root: \(e.reason)")
        case .untrustedState(let untrusted):
            CommandFailure(code: .ioError, message: ApplyEventPrinter.located(untrusted, root: rootPath ?? RootSession.canonical(root)))
        case .fileSystem(let e), .stateFolder(let e):
            CommandFailure(code: .ioError, message: "\(e)")
        default:
            CommandFailure(code: .ioError, message: "\(error)")
        }
    }

    static func render(_ t: TransactionSummary) -> String {
        let outcome: String
        switch t.outcome {
        case .committed: outcome = Terminal.styled("committed", .green)
        case .rolledBack: outcome = Terminal.styled("rolled back", .yellow)
        case .partiallyRolledBack: outcome = Terminal.styled("partially rolled back", .yellow)
        case .open: outcome = Terminal.styled("open (running, or interrupted: run 'policyctl recover')", .red)
        }
        var lines = ["\(Terminal.styled(t.id, .bold))  \(t.time)  \(t.kind)  policy \(t.policy.isEmpty ? "-" : t.policy)  \(outcome)"]
        if let reversed = t.reverses { lines.append("  undo of \(reversed)") }
        if let plan = t.plan { lines.append("  plan file \(PrintableText.escapingControls(plan))") }
        if let path = t.policyPath { lines.append("  policy file \(PrintableText.escapingControls(path))") }
        lines.append("  root \(PrintableText.escapingControls(t.root))")
        if t.outcome == .committed {
            let done = t.counts.isEmpty ? "nothing done" : ApplyLog.describe(t.counts)
            lines.append("  \(done) of \(t.actions) planned; \(ByteSize.human(t.bytesFreed)) freed" + (t.recovered ? " (purge finished by recovery)" : ""))
            if let held = t.quarantined, held > 0 {
                lines.append("  \(PlanRenderer.grouped(held)) delete\(held == 1 ? "" : "s") (\(ByteSize.human(t.bytesQuarantined ?? 0))) held in the quarantine\(t.quarantine.map { " (\($0))" } ?? ""): 'policyctl undo \(t.id)' puts them back until it is purged")
            }
        } else if t.outcome == .rolledBack {
            lines.append("  rolled back" + (t.reason.map { ": \($0)" } ?? "") + (t.recovered ? " (by recovery)" : ""))
        } else if t.outcome == .partiallyRolledBack {
            // File deletes roll forward: what stayed done is said, not hidden behind "rolled back".
            let deletes = t.counts[.delete]
            let finished = "\(PlanRenderer.grouped(deletes)) file delete\(deletes == 1 ? " was" : "s were") finished (\(ByteSize.human(t.bytesFreed)) freed)"
            lines.append("  rolled back " + (t.recovered ? "after an interruption" : "when the run stopped") + "; \(finished)"
                         + (t.reason.map { ": \($0)" } ?? ""))
        }
        for s in t.skipped {
            lines.append("  skipped \(s.action) \(s.path): \(s.reason)")
        }
        for k in t.kept {
            lines.append("  kept \(k)")
        }
        return lines.joined(separator: "\n")
    }
}
