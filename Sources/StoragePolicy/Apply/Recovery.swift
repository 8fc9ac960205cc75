// Brings a root back to a closed state after a crash: an uncommitted transaction is rolled back, a committed
// one has its purge finished. Idempotent and crash-safe; never deletes anything a rolled-back run staged.

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
        /// Items that could not be put back, with where they are kept.
        public var kept: [String]
    }

    /// Each transaction recovery settled.
    public var entries: [Entry] = []
    /// The journal ended in a torn or corrupt line (a write cut short); it was cut off.
    public var tornTail = false
    /// Line numbers of damaged records in the middle of the journal (ignored).
    public var corruptLines: [Int] = []
    /// Problems that did not stop recovery.
    public var warnings: [String] = []

    /// True when the journal showed nothing to finish or undo.
    public var nothingToDo: Bool { entries.isEmpty && !tornTail }
}

/// Recovery could not bring the root to a closed state; running it again retries.
public struct RecoveryError: Error, Sendable, CustomStringConvertible {
    /// The transaction that could not be settled.
    public var transaction: String
    /// What went wrong, step by step.
    public var failures: [String]
    /// One line for people.
    public var description: String {
        "recovery of transaction \(transaction) is incomplete: \(failures.joined(separator: "; ")); nothing was deleted, run 'policyctl recover' again"
    }
}

/// Finishes or rolls back interrupted applies from the journal; idempotent.
public enum Recovery {
    /// Journals larger than this are compacted before a new transaction begins.
    public static let compactionThreshold: Int64 = 16 << 20

    /// What recovery needs to know about one transaction, gathered while streaming the journal.
    private struct Open {
        var sequence = 0
        var committed = false
        var ended = false
        var resuming = false
        var intents: [Intent] = []
        var skipped: Set<Int> = []
        var undone: Set<Int> = []
    }

    /// Finishes or rolls back whatever the journal shows as open. Run under the lock, before any new transaction.
    public static func run(holding lock: ApplyLock) throws -> RecoveryReport {
        var report = RecoveryReport()
        let journal = try lock.state.openJournal()
        switch try journal.tail() {
        case .empty: return report
        case .record(let last) where last.kind == .end: return report
        default: break
        }

        var order: [String] = []
        var transactions: [String: Open] = [:]
        let scan = try journal.scan { record, _ in
            let id = record.transaction
            if transactions[id] == nil { order.append(id); transactions[id] = Open() }
            var t = transactions[id]!
            transactions[id] = nil  // keep the value uniquely referenced while it is changed
            t.sequence = max(t.sequence, record.body.seq)
            switch record.kind {
            case .intent:
                // Closed transactions need no intents: dropping them keeps memory to the open one.
                if !t.ended, let intent = Intent(record.body) { t.intents.append(intent) }
            case .skip: if let a = record.body.action { t.skipped.insert(a) }
            case .undone: t.undone.formUnion(record.body.ops ?? [])
            case .commit: t.committed = true
            case .rollback: t.resuming = true
            case .end: t.ended = true; t.intents = []
            case .begin, .kept: break
            }
            transactions[id] = t
        }
        report.corruptLines = scan.corruptLines
        if scan.tornTail {
            report.tornTail = true
            try journal.truncate(to: scan.validLength)
        }
        for id in order {
            guard let t = transactions[id], !t.ended else { continue }
            report.entries.append(try resolve(id, t, journal: journal, lock: lock))
        }
        return report
    }

    private static func resolve(_ id: String, _ t: Open, journal: Journal, lock: ApplyLock) throws -> RecoveryReport.Entry {
        if t.committed {
            try finishPurge(of: id, lock: lock)
            var w = Transaction.header(id: id, sequence: t.sequence + 1, type: .end)
            w.string("outcome", "committed")
            w.string("time", WallClock.rfc3339(ns: WallClock.nowNs()))
            w.string("reason", "purge finished by recovery")
            journal.append(w)
            try journal.flush()
            return RecoveryReport.Entry(transaction: id, resolution: .purgeFinished, undone: 0, kept: [])
        }
        var rollback = Rollback(transaction: id, lock: lock, journal: journal, sequence: t.sequence,
                                intents: t.intents.filter { !t.skipped.contains($0.action) }, undone: t.undone)
        let result = rollback.run(reason: t.resuming ? "resuming an interrupted rollback" : "interrupted before its commit (found by recovery)")
        guard result.complete else {
            throw RecoveryError(transaction: id, failures: result.failures)
        }
        return RecoveryReport.Entry(transaction: id, resolution: .rolledBack, undone: result.undone,
                                    kept: result.kept.map { "\($0.path.escaped): \($0.reason)" })
    }

    /// Removes what a committed transaction left in staging (nothing, when it was already purged).
    private static func finishPurge(of id: String, lock: ApplyLock) throws(FileSystemError) {
        guard let parent = try lock.state.stagingParent(create: false) else { return }
        let name = FileName(unchecked: Array(id.utf8))
        let staging: DirectoryHandle
        do { staging = try parent.openDirectory(name) } catch where error.errno == .noSuchFile { return }
        try Transaction.purge(staging: staging, named: name, in: parent)
    }

    /// Rewrites a large journal keeping what `policyctl journal` shows (begin, skip, commit, rollback, kept,
    /// end) and dropping the per-change intents of closed transactions. Atomic: a crash keeps the old file.
    public static func compactIfLarge(holding lock: ApplyLock, threshold: Int64 = compactionThreshold) throws {
        let journal = try lock.state.openJournal()
        guard try journal.file.status().size > threshold else { return }
        var lines: [UInt8] = []
        var begun = Set<String>()
        var ended = Set<String>()
        _ = try journal.scan { record, line in
            begun.insert(record.transaction)
            if record.kind == .end { ended.insert(record.transaction) }
            if record.kind != .intent && record.kind != .undone { lines += line }
        }
        // Only closed transactions lose their intents; an open one (never expected here) keeps the file as is.
        guard begun == ended else { return }
        try Journal.replace(in: lock.state.directory, with: lines)
    }
}
