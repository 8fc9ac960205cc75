// Brings a root back to a closed state after a crash: an uncommitted transaction is rolled back, a committed
// one has its purge finished. Idempotent and crash-safe; never deletes anything a rolled-back run staged.

@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyEvaluation

/// What recovery did with each transaction the journal showed as open.
public struct RecoveryReport: Sendable {
    /// How an open transaction was settled.
    public enum Resolution: Sendable, Hashable {
        /// Uncommitted: every change it made was undone.
        case rolledBack
        /// Committed before the crash: the staged entries were purged.
        case purgeFinished
    }

    /// One settled transaction.
    public struct Entry: Sendable {
        /// The transaction's id in the journal.
        public var transaction: String
        /// Rolled back, or its purge finished.
        public var resolution: Resolution
        /// Changes undone by this recovery (a resumed rollback counts only what was left).
        public var undone: Int
        /// Roll-forward deletes this recovery finished (their intents were durable; the entry was unchanged).
        public var finished = 0
        /// Items that could not be put back, with where they are kept.
        public var kept: [String]
    }

    /// Each transaction recovery settled.
    public var entries: [Entry] = []
    /// The journal ended in a torn or corrupt line (a write cut short); it was cut off.
    public var tornTail = false
    /// Line numbers of damaged records in the middle of the journal (ignored).
    public var corruptLines: [Int] = []
    /// Every damaged or refused record, named `.policyctl/journal.jsonl:LINE`, with what was done about it.
    public var damaged: [DamagedRecord] = []
    /// Problems that did not stop recovery.
    public var warnings: [String] = []

    /// Nothing settled (no journal, or nothing open in it).
    package init() {}

    /// True when the journal showed nothing to finish or undo.
    public var nothingToDo: Bool { entries.isEmpty && !tornTail }
}

/// A journal line recovery or `policyctl journal` could not use, and what was done about it.
public struct DamagedRecord: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The journal file, as messages name it: `.policyctl/journal.jsonl`, or under the --state-dir.
    public var file: String
    /// 1-based line number.
    public var line: Int
    /// Why it cannot be used.
    public var reason: String
    /// What was done about it: `ignored`, `not replayed`, ...
    public var outcome: String

    /// `.policyctl/journal.jsonl:7: seq 9223372036854775807 out of range; ignored`.
    public var description: String { "\(file):\(line): \(reason); \(outcome)" }
}

/// Recovery could not bring the root to a closed state; running it again retries.
public struct RecoveryError: Error, Sendable, CustomStringConvertible {
    /// The transaction that could not be settled.
    public var transaction: String
    /// What went wrong, step by step.
    public var failures: [String]
    /// What to do, when running recovery again would not help.
    public var fix: String?
    /// One line for people.
    public var description: String {
        "recovery of transaction \(transaction) is incomplete: \(failures.joined(separator: "; ")); "
            + (fix ?? "nothing was deleted, run 'policyctl recover' again")
    }
}

/// Finishes or rolls back interrupted applies from the journal; idempotent.
package enum Recovery {
    /// What recovery needs to know about one transaction, gathered while streaming the journal.
    private struct Open {
        var sequence = 0
        /// The begin record's root identity, and its line.
        var rootDevice: UInt64?
        var rootInode: UInt64?
        var beginLine = 0
        var committed = false
        var ended = false
        var resuming = false
        var intents: [Intent] = []
        var skipped: Set<Int> = []
        var undone: Set<Int> = []
    }

    /// Finishes or rolls back whatever the journal shows as open. Run under the lock, before any new transaction.
    package static func run(holding lock: ApplyLock) throws -> RecoveryReport {
        var report = RecoveryReport()
        let journal = try lock.state.openJournal()
        switch try journal.tail() {
        case .empty: return report
        case .record(let last) where last.kind == .end: return report
        default: break
        }

        let file = lock.state.describe(Journal.fileName)
        var order: [String] = []
        var transactions: [String: Open] = [:]
        var refused: [DamagedRecord] = []
        let scan = try journal.scanForRecovery { record in
            let id = record.transaction
            if transactions[id] == nil { order.append(id); transactions[id] = Open() }
            var t = transactions[id]!
            transactions[id] = nil  // keep the value uniquely referenced while it is changed
            t.sequence = max(t.sequence, record.body.seq)
            switch record.kind {
            case .intent:
                // Closed transactions need no intents: dropping them keeps memory to the open one.
                if !t.ended {
                    if let intent = Intent(record.body) {
                        // An undo that could restore more than the engine writes is never replayed.
                        if let why = intent.refusal {
                            refused.append(DamagedRecord(file: file, line: record.line, reason: "refused intent: \(why)",
                                                         outcome: "not replayed"))
                        } else {
                            t.intents.append(intent)
                        }
                    } else {
                        refused.append(DamagedRecord(file: file, line: record.line, reason: "intent with a missing or invalid field",
                                                     outcome: "not replayed"))
                    }
                }
            case .skip: if let a = record.body.action { t.skipped.insert(a) }
            case .undone: t.undone.formUnion(record.body.ops ?? [])
            case .commit: t.committed = true
            case .rollback: t.resuming = true
            case .end: t.ended = true; t.intents = []
            case .begin:
                t.rootDevice = record.body.rootDev
                t.rootInode = record.body.rootIno
                t.beginLine = record.line
            case .kept: break
            }
            transactions[id] = t
        }
        report.corruptLines = scan.corruptLines
        report.damaged = scan.damaged.map { DamagedRecord(file: file, line: $0.line, reason: $0.reason, outcome: "ignored") }
        report.damaged += refused
        report.damaged.sort { $0.line < $1.line }
        // Bound to the root: a journal copied along with a tree (or moved under another root) is not replayed there.
        let root = lock.state.rootStatus
        for id in order {
            guard let t = transactions[id], !t.ended, let device = t.rootDevice, let inode = t.rootInode else { continue }
            if device != root.device || inode != root.inode {
                throw RecoveryError(
                    transaction: id,
                    failures: ["\(file):\(t.beginLine): it began on another directory (device \(device), inode \(inode)); this root is device \(root.device), inode \(root.inode): the journal was copied or moved here with the tree, and is not replayed"],
                    fix: "nothing was changed; move \(lock.state.displayPath) aside (or pass another --state-dir) once you have checked it")
            }
        }
        if scan.tornTail {
            report.tornTail = true
            report.damaged.append(DamagedRecord(file: file, line: scan.tornTailLine, reason: "torn or corrupt last line (an interrupted write)",
                                                outcome: "cut off"))
            try journal.truncate(to: scan.validLength)
        }
        for id in order {
            guard let t = transactions[id], !t.ended else { continue }
            report.entries.append(try resolve(id, t, journal: journal, lock: lock, damaged: !report.damaged.isEmpty))
        }
        return report
    }

    private static func resolve(_ id: String, _ t: Open, journal: Journal, lock: ApplyLock, damaged: Bool) throws -> RecoveryReport.Entry {
        if !t.intents.isEmpty, t.intents.allSatisfy({ if case .purge = $0.change { true } else { false } }) {
            return try finishPurges(id, t, journal: journal, lock: lock)
        }
        if t.committed {
            try finishPurge(of: id, lock: lock)
            var w = Transaction.header(id: id, sequence: t.sequence + 1, type: .end)
            w.string("outcome", TransactionSummary.Outcome.committed.rawValue)
            w.string("time", WallClock.rfc3339(ns: WallClock.nowNs()))
            w.string("reason", "purge finished by recovery")
            journal.append(w)
            try journal.flush()
            return RecoveryReport.Entry(transaction: id, resolution: .purgeFinished, undone: 0, kept: [])
        }
        var rollback = Rollback(transaction: id, lock: lock, journal: journal, sequence: t.sequence,
                                intents: unitsRolledBack(t.intents, skipped: t.skipped), undone: t.undone)
        // With damaged or refused records, staged entries no intent accounts for are kept, not a failure that
        // would stop every later run: the transaction closes, and they wait in staging for a person.
        rollback.unaccountedAreKept = damaged
        let result = rollback.run(reason: t.resuming ? "resuming an interrupted rollback" : "interrupted before its commit (found by recovery)")
        guard result.complete else {
            throw RecoveryError(transaction: id, failures: result.failures)
        }
        var entry = RecoveryReport.Entry(transaction: id, resolution: .rolledBack, undone: result.undone,
                                         kept: result.kept.map { "\($0.path.escaped): \($0.reason)" })
        entry.finished = result.finished
        return entry
    }

    /// A purge of quarantined deletes is rolled forward: every window its intents name is removed (what was left
    /// of it), then it commits (unless it had) and ends, as the purge it was.
    private static func finishPurges(_ id: String, _ t: Open, journal: Journal, lock: ApplyLock) throws -> RecoveryReport.Entry {
        var finished = 0
        for intent in t.intents {
            guard case .purge(let tx, let until, let folder) = intent.change else { continue }
            let present = try lock.state.openQuarantine(for: tx, identity: folder)?.window(until, state: lock.state) != nil
            try Transaction.purgeWindow(tx, until: until, folder: folder, state: lock.state)
            if present { finished += 1 }
        }
        try finishPurge(of: id, lock: lock)
        var sequence = t.sequence
        if !t.committed {
            sequence += 1
            var c = Transaction.header(id: id, sequence: sequence, type: .commit)
            var counts = JSONWriter()
            counts.int(named: StepVerb.purge.rawValue, t.intents.count)
            c.object("counts", counts)
            c.int("bytesFreed", 0)
            c.int("skipped", 0)
            journal.append(c)
        }
        var w = Transaction.header(id: id, sequence: sequence + 1, type: .end)
        w.string("outcome", TransactionSummary.Outcome.committed.rawValue)
        w.string("time", WallClock.rfc3339(ns: WallClock.nowNs()))
        w.string("reason", "purge finished by recovery")
        journal.append(w)
        try journal.flush()
        var entry = RecoveryReport.Entry(transaction: id, resolution: .purgeFinished, undone: 0, kept: [])
        entry.finished = finished
        return entry
    }

    /// The intents a rollback of an uncommitted transaction acts on: none of a skipped action (it changed
    /// nothing), and no `unlink` of an action that also holds another change. An action is one unit of change,
    /// all rolled forward or all rolled back: the engine stages every member of a unit of several entries, so a
    /// file delete never rolls forward alone while its unit's other changes go back (Docs/journal.md, "Units of
    /// change"). A journal that pairs them anyway (damaged, or another writer's) has its unit rolled back: the
    /// unlink is not finished.
    static func unitsRolledBack(_ intents: [Intent], skipped: Set<Int>) -> [Intent] {
        var mixed: Set<Int> = []
        for intent in intents {
            switch intent.change {
            // A folder's times set back after removals are journaled under the step of its last removal, and
            // are not a member of that step's unit: they go back on their own.
            case .unlink, .times, .purge: continue
            default: mixed.insert(intent.action)
            }
        }
        return intents.filter { intent in
            if skipped.contains(intent.action) { return false }
            if case .unlink = intent.change, mixed.contains(intent.action) { return false }
            return true
        }
    }

    /// Removes what a committed transaction left in staging (nothing, when it was already purged).
    private static func finishPurge(of id: String, lock: ApplyLock) throws(FileSystemError) {
        let opened: (parent: DirectoryHandle, staging: DirectoryHandle)?
        do { opened = try lock.state.openStaging(for: id) } catch where error.errno == .noSuchFile { return }
        guard let opened else { return }
        try Transaction.purge(staging: opened.staging, named: lock.state.stagingName(for: id), in: opened.parent)
    }
}
