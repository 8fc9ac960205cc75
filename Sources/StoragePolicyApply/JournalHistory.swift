// Reads the journal back for people: one summary per transaction (when, which policy, what was done, what
// was skipped and why, how it ended). Read-only: never repairs, truncates or locks the journal.

/// One transaction as the journal records it, for people and `policyctl journal --format json`.
public struct TransactionSummary: Sendable, Hashable, Codable {
    /// How the transaction ended.
    public enum Outcome: String, Sendable, Hashable, Codable {
        case committed
        case rolledBack = "rolled-back"
        /// Rolled back, except the file deletes that stayed done (made by the run or finished by recovery):
        /// `counts` and `bytesFreed` say how many and how much.
        case partiallyRolledBack = "partially rolled back"
        /// No end record: running now, or interrupted and not yet recovered.
        case open
    }

    /// An action skipped because its target changed since the plan.
    public struct SkippedItem: Sendable, Hashable, Codable {
        /// The action name.
        public var action: String
        /// The target, relative to the root (escaped when not UTF-8).
        public var path: String
        /// The target's exact bytes, when it is not valid UTF-8.
        public var pathBase64: String?
        /// Why it was skipped.
        public var reason: String
        /// For an entry skipped because a call on it failed: the errno's name (`EACCES`).
        public var errno: String? = nil
        /// ... and the call that failed (`renameat2`).
        public var call: String? = nil
    }

    /// The transaction id.
    public var id: String
    /// `apply`, `trash`, `restore` or `undo`.
    public var kind: TransactionKind
    /// RFC 3339, UTC.
    public var time: String
    /// When it ended (RFC 3339, UTC), if it did.
    public var endTime: String?
    /// The policy's name.
    public var policy: String
    /// The policy file, when there was one.
    public var policyPath: String?
    /// The plan file applied, when there was one.
    public var plan: String?
    /// The root, absolute.
    public var root: String
    /// The process that ran it.
    public var pid: Int?
    /// Actions in the plan.
    public var actions: Int
    /// Committed, rolled back, or still open.
    public var outcome: Outcome
    /// Actions carried out, per verb (from the commit record).
    public var counts: ActionCounts
    /// Bytes freed by its deletions.
    public var bytesFreed: Int64
    /// Actions skipped because their targets changed.
    public var skipped: [SkippedItem]
    /// Why it was rolled back.
    public var reason: String?
    /// Items a rollback could not put back (kept in staging), with where.
    public var kept: [String]
    /// True when recovery, not the run itself, closed it.
    public var recovered: Bool
    /// For an undo (`kind` `undo`): the transaction it reversed.
    public var reverses: String? = nil
    /// Where it held its deletes back (`.policyctl/quarantine/TX`), how many and how many bytes: nil without
    /// a quarantine (journal format 2).
    public var quarantine: String? = nil
    public var quarantined: Int? = nil
    public var bytesQuarantined: Int64? = nil
}

/// Reads a root's journal back as transactions.
public enum JournalHistory {
    /// The journal, read.
    public struct Reading: Sendable {
        /// Every transaction, oldest first.
        public var transactions: [TransactionSummary]
        /// Line numbers of damaged records (skipped).
        public var corruptLines: [Int]
        /// True when the last line was cut short (ignored).
        public var tornTail: Bool
        /// Every damaged line, named `.policyctl/journal.jsonl:LINE`, and what was done about it (ignored).
        public var damaged: [DamagedRecord] = []
    }

    /// Every transaction in the journal under `state`, oldest first.
    package static func read(_ state: StateDirectory) throws -> Reading {
        guard try state.directory.statusIfPresent(of: Journal.fileName) != nil else {
            return Reading(transactions: [], corruptLines: [], tornTail: false)
        }
        return read(state, bytes: try JournalFiles.live(state))
    }

    /// The transactions of the live journal `bytes` (read from `state`, which names it in messages).
    package static func read(_ state: StateDirectory, bytes: [UInt8]) -> Reading {
        var order: [String] = []
        var byID: [String: TransactionSummary] = [:]
        // The per-change records add nothing to a summary: checksum-verified, not parsed.
        let scan = Journal.scanSummaries(bytes) { record in
            let b = record.body
            if byID[b.tx] == nil {
                order.append(b.tx)
                byID[b.tx] = empty(b.tx)
            }
            var t = byID[b.tx]!
            byID[b.tx] = nil
            add(record, to: &t)
            byID[b.tx] = t
        }
        let name = state.describe(Journal.fileName)
        var damaged = scan.damaged.map { DamagedRecord(file: name, line: $0.line, reason: $0.reason, outcome: "ignored") }
        if scan.tornTail {
            damaged.append(DamagedRecord(file: name, line: scan.tornTailLine, reason: "torn or corrupt last line (an interrupted write)",
                                         outcome: "ignored; 'policyctl recover' cuts it off"))
        }
        return Reading(transactions: order.compactMap { byID[$0] }, corruptLines: scan.corruptLines, tornTail: scan.tornTail,
                       damaged: damaged)
    }

    /// One transaction's summary from its own records (JournalFiles.transaction), as `read` makes each.
    package static func summary(of records: [JournalRecord]) -> TransactionSummary? {
        guard let first = records.first else { return nil }
        var t = empty(first.transaction)
        for record in records { add(record, to: &t) }
        return t
    }

    private static func empty(_ id: String) -> TransactionSummary {
        TransactionSummary(id: id, kind: .apply, time: "", endTime: nil, policy: "", policyPath: nil,
                           plan: nil, root: "", pid: nil, actions: 0, outcome: .open, counts: [:],
                           bytesFreed: 0, skipped: [], reason: nil, kept: [], recovered: false)
    }

    /// What one record adds to its transaction's summary.
    private static func add(_ record: JournalRecord, to t: inout TransactionSummary) {
            let b = record.body
            switch record.kind {
            case .begin:
                t.kind = b.kind.flatMap(TransactionKind.init(rawValue:)) ?? .apply
                t.time = b.time ?? ""
                t.policy = b.policy ?? ""
                t.policyPath = b.policyPath
                t.plan = b.plan
                t.root = b.root ?? ""
                t.pid = b.pid
                t.actions = b.actions ?? 0
                t.reverses = b.reverses
                t.quarantine = b.quarantine
            case .skip:
                let path = RecordBody.path(b.path, b.pathBase64) ?? .root
                t.skipped.append(TransactionSummary.SkippedItem(action: b.verb ?? "", path: path.string,
                                                                pathBase64: path.isValidUTF8 ? nil : path.base64,
                                                                reason: b.reason ?? "", errno: b.errno, call: b.call))
            case .commit:
                t.counts = ActionCounts(names: b.counts ?? [:])
                t.bytesFreed = b.bytesFreed ?? 0
                t.quarantined = b.quarantined
                t.bytesQuarantined = b.bytesQuarantined
            case .rollback:
                if t.reason == nil || b.reason?.hasPrefix("resuming") == false { t.reason = b.reason }
                if b.reason?.contains("recovery") == true { t.recovered = true }
            case .kept:
                let path = RecordBody.path(b.path, b.pathBase64) ?? .root
                // A kept item is reported again by each recovery that looks at it: list it once.
                let line = "\(path.escaped): \(b.reason ?? "")"
                if !t.kept.contains(line) { t.kept.append(line) }
            case .end:
                switch b.outcome.flatMap(TransactionSummary.Outcome.init(rawValue:)) {
                case .committed: t.outcome = .committed
                case .partiallyRolledBack:
                    t.outcome = .partiallyRolledBack
                    t.counts = ActionCounts(names: b.counts ?? [:])
                    t.bytesFreed = b.bytesFreed ?? 0
                default: t.outcome = .rolledBack
                }
                t.endTime = b.time
                if b.reason != nil { t.recovered = true }
            case .intent, .undone:
                break
            }
    }
}
