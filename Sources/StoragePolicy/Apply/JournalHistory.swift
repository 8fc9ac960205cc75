// Reads the journal back for people: one summary per transaction (when, which policy, what was done, what
// was skipped and why, how it ended). Read-only: never repairs, truncates or locks the journal.

public struct TransactionSummary: Sendable, Hashable, Codable {
    public enum Outcome: String, Sendable, Hashable, Codable {
        case committed
        case rolledBack = "rolled-back"
        /// No end record: running now, or interrupted and not yet recovered.
        case open
    }

    public struct SkippedItem: Sendable, Hashable, Codable {
        public var action: String
        public var path: String
        public var pathBase64: String?
        public var reason: String
    }

    public var id: String
    /// `apply`, `trash` or `restore`.
    public var kind: String
    /// RFC 3339, UTC.
    public var time: String
    public var endTime: String?
    public var policy: String
    public var policyPath: String?
    public var plan: String?
    public var root: String
    public var pid: Int?
    /// Actions in the plan.
    public var actions: Int
    public var outcome: Outcome
    /// Actions carried out, per action name (from the commit record).
    public var counts: [String: Int]
    public var bytesFreed: Int64
    public var skipped: [SkippedItem]
    /// Why it was rolled back.
    public var reason: String?
    /// Items a rollback could not put back (kept in staging), with where.
    public var kept: [String]
    /// True when recovery, not the run itself, closed it.
    public var recovered: Bool
}

public enum JournalHistory {
    public struct Reading: Sendable {
        public var transactions: [TransactionSummary]
        public var corruptLines: [Int]
        public var tornTail: Bool
    }

    /// Every transaction in the journal under `state`, oldest first.
    public static func read(_ state: StateDirectory) throws -> Reading {
        guard try state.directory.statusIfPresent(of: Journal.fileName) != nil else {
            return Reading(transactions: [], corruptLines: [], tornTail: false)
        }
        let file = try state.directory.openFile(Journal.fileName, options: [.readOnly])
        let bytes = try file.readAll(limit: 1 << 31)
        var order: [String] = []
        var byID: [String: TransactionSummary] = [:]
        let scan = Journal.scan(bytes) { record, _ in
            let b = record.body
            if byID[b.tx] == nil {
                order.append(b.tx)
                byID[b.tx] = TransactionSummary(id: b.tx, kind: "apply", time: "", endTime: nil, policy: "", policyPath: nil,
                                                plan: nil, root: "", pid: nil, actions: 0, outcome: .open, counts: [:],
                                                bytesFreed: 0, skipped: [], reason: nil, kept: [], recovered: false)
            }
            var t = byID[b.tx]!
            byID[b.tx] = nil
            switch record.kind {
            case .begin:
                t.kind = b.kind ?? "apply"
                t.time = b.time ?? ""
                t.policy = b.policy ?? ""
                t.policyPath = b.policyPath
                t.plan = b.plan
                t.root = b.root ?? ""
                t.pid = b.pid
                t.actions = b.actions ?? 0
            case .skip:
                let path = RecordBody.path(b.path, b.pathBase64) ?? .root
                t.skipped.append(TransactionSummary.SkippedItem(action: b.verb ?? "", path: path.string,
                                                                pathBase64: path.isValidUTF8 ? nil : path.base64,
                                                                reason: b.reason ?? ""))
            case .commit:
                t.counts = b.counts ?? [:]
                t.bytesFreed = b.bytesFreed ?? 0
            case .rollback:
                if t.reason == nil || b.reason?.hasPrefix("resuming") == false { t.reason = b.reason }
                if b.reason?.contains("recovery") == true { t.recovered = true }
            case .kept:
                let path = RecordBody.path(b.path, b.pathBase64) ?? .root
                // A kept item is reported again by each recovery that looks at it: list it once.
                let line = "\(path.escaped): \(b.reason ?? "")"
                if !t.kept.contains(line) { t.kept.append(line) }
            case .end:
                t.outcome = b.outcome == "committed" ? .committed : .rolledBack
                t.endTime = b.time
                if b.reason != nil { t.recovered = true }
            case .intent, .undone:
                break
            }
            byID[b.tx] = t
        }
        return Reading(transactions: order.compactMap { byID[$0] }, corruptLines: scan.corruptLines, tornTail: scan.tornTail)
    }
}
