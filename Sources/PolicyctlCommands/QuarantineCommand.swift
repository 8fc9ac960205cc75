// `policyctl quarantine`: what a `quarantine:` window holds (transaction, path, size, until), and with --purge
// emptying it for good as a journaled run. Listing reads only (no lock), through the state folder's trust checks.
import StoragePolicy

struct QuarantineCommand: Command {
    static let summary = CommandSummary(
        name: "quarantine",
        abstract: "List the deletes the quarantine holds, or purge them for good.",
        discussion: """
            With a policy's quarantine: 7d, the deletes of expire, quota, trash and custom rules are renames into \
            the quarantine on the root's volume (ROOT/.policyctl/quarantine/TX, or ROOT/.policyctl-quarantine-TX \
            with --state-dir), which 'policyctl undo TX' puts back until the window ends; the first apply after \
            that purges them. This lists what is held: each transaction, each path with its size, and until when. \
            --purge empties it now (with --older-than D, only what transactions older than D quarantined) as one \
            journaled transaction of kind purge, which recovery finishes if it is interrupted; what it purges can \
            no longer be undone. Exit codes: 0 shown or purged (also when nothing is held), 64 usage (including \
            --purge without --yes and no terminal), 74 I/O error or refused state.
            """,
        usage: ["--root <dir> [--format text|json]", "--root <dir> --purge [--older-than <duration>] [--yes]"]
    )

    struct Options: ParsableOptions {
        var root: String?
        var format = "text"
        var purge = false
        var olderThan: String?
        var yes = false
        var noWait = false
        var stateDir: String?
        var forceRoot = false

        static var options: [OptionField<Self>] { [
            .option(\.root, "root", short: "r", value: "dir", help: "(required) The root whose quarantine to show or purge.", completion: .directory),
            .option(\.format, "format", value: "format", help: "Output format.", default: "text", values: ["text", "json"]),
            .flag(\.purge, "purge", help: "Remove what the quarantine holds for good, as one journaled transaction."),
            .option(\.olderThan, "older-than", value: "duration", help: "With --purge: only what transactions older than this quarantined (e.g. 3d)."),
            .flag(\.yes, "yes", short: "y", help: "Purge without asking. Required without a TTY."),
            .flag(\.noWait, "no-wait", help: "When another run holds the lock, print 'skipped: another run in progress' and exit 0."),
            .shared(\.stateDir, RootSession.stateDirOption),
            .flag(\.forceRoot, "force-root", help: "Allow '/', the home directory itself or a system directory as the root."),
        ] }
    }

    let root: String
    let json: Bool
    let purge: Bool
    let olderThan: PolicyDuration?
    let yes: Bool
    let noWait: Bool
    let stateDir: String?

    init(_ options: Options) throws {
        let command = "policyctl quarantine"
        root = try options.required(\.root, command: command)
        try RootSafety.check(root, force: options.forceRoot, command: command)
        json = options.format == "json"
        purge = options.purge
        olderThan = try options.parsed(\.olderThan, accepted: PolicyDuration.acceptedForms, command: command) { PolicyDuration(parsing: $0) }
        if olderThan != nil && !purge {
            throw UsageError(message: "--older-than picks what --purge removes; add --purge (or drop --older-than to list everything)", command: command)
        }
        yes = options.yes
        noWait = options.noWait
        stateDir = options.stateDir
    }

    func run() throws -> ExitCode {
        let contents = try JournalCommand.readState(root: root) { events throws(EngineError) in
            try StorageEngine.quarantine(root: root, stateDirectory: stateDir, events: events)
        } ?? QuarantineContents(windows: [], notes: [])
        for note in contents.notes { Terminal.err("note: \(note)") }
        guard purge else {
            if json {
                Terminal.out(bytes: try PrettyJSON.encode(contents) + [0x0A])
            } else {
                Terminal.out(Self.render(contents, root: RootSession.canonical(root)), terminator: "")
            }
            return .success
        }
        if !yes && !Terminal.stdinIsTTY {
            throw CommandFailure(code: .usage, message: "quarantine --purge needs confirmation and there is no terminal to ask on; pass --yes")
        }
        if !yes {
            let what = olderThan.map { "what transactions older than \($0) quarantined" } ?? "everything the quarantine holds (\(contents.entries) entries, \(ByteSize.human(contents.bytes)))"
            guard Terminal.confirm("Purge \(what) for good? It can no longer be undone.") else {
                Terminal.err("Purge cancelled; nothing was changed.")
                return .usage
            }
        }
        let printer = ApplyEventPrinter(log: ApplyLog(format: json ? .json : .human, perAction: false))
        let session = StorageEngine.Session(root: root, stateDirectory: stateDir, waitForLock: !noWait)
        let report: QuarantinePurgeReport?
        do {
            report = try StorageEngine.purgeQuarantine(olderThan: olderThan, session: session, events: printer.render)
        } catch .lockHeld {
            return .success
        } catch {
            throw try printer.failure(error, root: root)
        }
        if (report?.transaction == nil) && !json {
            Terminal.out("Nothing to purge: the quarantine of \(printer.rootPath ?? RootSession.canonical(root)) holds nothing\(olderThan.map { " older than \($0)" } ?? "").")
        }
        return .success
    }

    /// One block per transaction and window: the header, then each path with its size.
    static func render(_ contents: QuarantineContents, root: String) -> String {
        guard !contents.windows.isEmpty else { return "The quarantine of \(root) holds nothing.\n" }
        var out = "The quarantine of \(root) holds \(contents.entries) entr\(contents.entries == 1 ? "y" : "ies") (\(ByteSize.human(contents.bytes))):\n"
        for w in contents.windows {
            out += "\n\(Terminal.styled(w.transaction, .bold))  deleted \(w.time)  until \(w.until)  \(w.entries.count) entr\(w.entries.count == 1 ? "y" : "ies"), \(ByteSize.human(w.bytes))\n"
            for e in w.entries {
                let path = e.pathBase64 == nil ? PathEscaping.escape(Array(e.path.utf8)) : e.path
                out += "  \(ByteSize.human(e.bytes).padding(toLength: max(10, ByteSize.human(e.bytes).count), withPad: " ", startingAt: 0))  \(e.type == "directory" ? path + "/" : path)\n"
            }
        }
        out += "\n'policyctl undo TX' puts a transaction's entries back; 'policyctl quarantine --purge' removes them for good.\n"
        return out
    }
}
