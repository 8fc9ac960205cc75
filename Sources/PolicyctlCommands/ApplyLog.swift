// How apply, recover and trash report: human lines (colour on a TTY), or plain/JSON log lines for journald.
// Split from ApplyCommand.swift as it is: the commands decide, this only prints.
import Foundation
import StoragePolicy

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
            Terminal.out("skipped: another run in progress on \(PrintableText.escapingControls(root))\(pid.map { " (pid \($0))" } ?? "")")
        }
    }

    func nothingToDo(root: String) {
        if quiet { return }
        if format == .json {
            emit([("event", .string("summary")), ("outcome", .string("nothing-to-do")), ("root", .string(root))])
        } else {
            Terminal.out("Nothing to do: \(PrintableText.escapingControls(root)) already matches the policy.")
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

    /// The journal's rotation before an apply (JournalRotation): where the older records went, what was removed.
    func journalRotated(_ report: JournalRotation.Report) {
        if let file = report.file {
            line("journal", "moved the records of \(report.moved) older transaction\(report.moved == 1 ? "" : "s") to \(file) (the journal went from \(ByteSize.human(report.before)) to \(ByteSize.human(report.after)); 'journal show' and 'undo' still read them)")
        }
        for removed in report.removed {
            line("journal", "removed \(removed): past the policy's journal: { history } limit, their paths are no longer listed")
        }
    }

    /// A purge of the quarantine before an apply (or `quarantine --purge`).
    func quarantinePurged(_ report: QuarantinePurgeReport) {
        let of = Array(Set(report.windows.map(\.transaction))).sorted().joined(separator: ", ")
        if format == .json {
            emit([("event", .string("quarantine-purged")), ("transaction", report.transaction.map { .string($0) } ?? .null),
                  ("reason", .string(report.reason)), ("entries", .integer(Int64(report.entries))), ("bytesFreed", .integer(report.bytes)),
                  ("of", .string(of)), ("left", .integer(Int64(report.left)))])
            return
        }
        var text = "purged \(report.entries) quarantined entr\(report.entries == 1 ? "y" : "ies") (\(ByteSize.human(report.bytes)) freed) of \(of) (\(report.reason)); transaction \(report.transaction ?? "-")"
        if report.left > 0 { text += "; \(report.left) window\(report.left == 1 ? "" : "s") left for the next purge (time budget)" }
        Terminal.out("quarantine: " + text)
    }

    private func line(_ event: String, _ message: String) {
        if format == .json { emit([("event", .string(event)), ("message", .string(message))]) } else { Terminal.out("\(event): \(message)") }
    }

    /// The summary and a sample of actions shown before asking on a TTY (on stderr, stdout stays clean).
    func preview(_ plan: Plan, root: String) {
        var counts = ActionCounts()
        for a in plan.actions { counts[StepVerb(a.kind)] += 1 }
        Terminal.err("Plan for \(PrintableText.escapingControls(root)) (policy \(plan.policy)): " + ApplyLog.describe(counts)
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
            if report.quarantined > 0 {
                fields.append(("quarantined", .integer(Int64(report.quarantined))))
                fields.append(("bytesQuarantined", .integer(report.bytesQuarantined)))
                fields.append(("quarantineUntil", .string(report.quarantineUntil.joined(separator: ","))))
            }
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
        if report.quarantined > 0 {
            text += "; \(report.quarantined) delete\(report.quarantined == 1 ? "" : "s") (\(ByteSize.human(report.bytesQuarantined))) held in the quarantine until \(report.quarantineUntil.joined(separator: ", "))"
                + (report.transaction.map { " ('policyctl undo \($0)' puts them back)" } ?? "")
        }
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
        // An undo's restore from the quarantine goes back to its own path: named once.
        case .rename(let to) where to == a.path && destination == nil: return "\(a.path.escaped) (from the quarantine)"
        case .rename(let to), .trash(let to): return "\(a.path.escaped) -> \((destination ?? to).escaped)"
        case .setxattr(let name, _): return "\(a.path.escaped) \(name)"
        case .setPermissions(let mode, let owner, let group):
            return "\(a.path.escaped) \(PlanRenderer.permissions(mode: mode, owner: owner, group: group))"
        case .delete where a.bytes > 0: return "\(a.path.escaped) [\(ByteSize.human(a.bytes))]"
        default: return a.path.escaped
        }
    }
}
