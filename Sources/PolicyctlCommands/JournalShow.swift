// `policyctl journal show TX`: one transaction path by path, for an operator asking what a timer's run did to
// which file. Reads the journal through the same state-folder trust checks as `policyctl journal`.
import StoragePolicy

extension JournalCommand {
    func show(_ id: String) throws -> ExitCode {
        let found = try Self.readState(root: root) { events throws(EngineError) in
            try StorageEngine.journalPaths(root: root, stateDirectory: stateDir, transaction: id, events: events)
        }
        guard let found else {
            // An id is typed by hand or pasted: a wrong one is a usage error that says where to find the right one.
            throw UsageError(message: "the journal under \(RootSession.canonical(root)) has no transaction '\(PathEscaping.escape(Array(id.utf8)))'; 'policyctl journal --root \(root)' lists them",
                             command: "policyctl journal")
        }
        if json {
            Terminal.out(bytes: try PrettyJSON.encode(found) + [0x0A])
        } else {
            Terminal.out(Self.render(found))
        }
        return .success
    }

    static func render(_ shown: TransactionPaths) -> String {
        let t = shown.transaction
        // The same first line as the list, so a transaction looks the same in both.
        var lines = [render(t).split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)[0].description,
                     "  root \(PrintableText.escapingControls(t.root))"]
        var tally: [TransactionPaths.Entry.Status: Int] = [:]
        for entry in shown.paths {
            tally[entry.status, default: 0] += 1
            lines.append("  " + describe(entry))
        }
        if shown.compacted {
            let done = ApplyLog.describe(t.counts)
            lines.append("  the journal no longer lists this run's changes (its history file was removed past the policy's journal: { history } limit, or an older policyctl compacted the journal): only what it skipped and kept (\(done))")
        }
        if let file = shown.historyFile { lines.append("  read from the journal's history: \(file)") }
        let order: [TransactionPaths.Entry.Status] = [.changed, .rolledBack, .notMade, .pending, .skipped, .kept]
        let counted = order.compactMap { status in tally[status].map { "\($0) \(word(status))" } }
        lines.append("  " + (counted.isEmpty ? "no path recorded" : counted.joined(separator: ", ")))
        return lines.joined(separator: "\n")
    }

    /// `changed     delete tmp/old.log`: the status in a column wide enough for `rolled back`, then what.
    static func describe(_ entry: TransactionPaths.Entry) -> String {
        let status = word(entry.status)
        let padded = status + String(repeating: " ", count: max(1, 12 - status.count))
        let path = escaped(entry.path, entry.pathBase64)
        var what: String
        switch entry.change {
        case "rename"?: what = "rename \(path) -> \(entry.to.map { escaped($0, entry.toBase64) } ?? "?")"
        case "setxattr"?, "removexattr"?: what = "\(entry.change!) \(entry.attribute ?? "?") \(path)"
        case let change?: what = "\(change) \(path)"
        case nil: what = path
        }
        if let until = entry.quarantineUntil, entry.change == "delete" { what += " (quarantined until \(until))" }
        if let of = entry.quarantineOf { what += entry.change == "purge" ? " (the quarantine of \(of), window until \(entry.quarantineUntil ?? "?"))" : " (from the quarantine of \(of))" }
        if let reason = entry.reason { what += ": \(reason)" }
        return padded + what
    }

    private static func word(_ status: TransactionPaths.Entry.Status) -> String {
        switch status {
        case .changed: "changed"
        case .rolledBack: "rolled back"
        case .notMade: "not made"
        case .pending: "pending"
        case .skipped: "skipped"
        case .kept: "kept"
        }
    }

    /// A path for the terminal: control characters and invalid bytes escaped, so a hostile name cannot forge a line.
    private static func escaped(_ path: String, _ base64: String?) -> String {
        base64 == nil ? PathEscaping.escape(Array(path.utf8)) : path
    }
}
