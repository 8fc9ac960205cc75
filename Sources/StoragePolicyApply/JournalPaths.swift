// `policyctl journal show TX`: one transaction path by path, read back from its journal records: every change
// it made (or rolled back, or has not finished), every step it skipped and every entry a rollback kept, each
// with why. Read-only, like JournalHistory: never repairs, truncates or locks the journal.

@_spi(Layers) import StoragePolicyFileSystem

/// One transaction, path by path.
public struct TransactionPaths: Sendable, Hashable, Codable {
    /// One path the transaction touched, or meant to.
    public struct Entry: Sendable, Hashable, Codable {
        /// What became of it.
        public enum Status: String, Sendable, Hashable, Codable {
            /// Made, and it stays made (a committed transaction; a rolled-forward delete of a rolled-back one).
            case changed
            /// Made, then undone by the rollback.
            case rolledBack = "rolled-back"
            /// Journaled by a transaction that rolled back, and never made: the run stopped before it (or the
            /// rollback found nothing of it to undo).
            case notMade = "not-made"
            /// Journaled in a transaction that is still open: `recover` decides.
            case pending
            /// Not carried out: `reason` says why (nothing of its step stayed changed).
            case skipped
            /// A rollback could not put it back: `reason` says where it is.
            case kept
        }

        public var status: Status
        /// What was done, in the journal's words: `delete`, `rename`, `mkdir`, `setxattr`, `removexattr`,
        /// `create`; for a skipped entry the step's verb (`delete`, `trash`, `rename`...). Nil for a kept entry.
        public var change: String?
        /// The entry, relative to the root (escaped when not UTF-8); for a rename its source.
        public var path: String
        /// The entry's exact bytes, when it is not valid UTF-8.
        public var pathBase64: String?
        /// A rename's destination.
        public var to: String?
        public var toBase64: String?
        /// The attribute of a `setxattr` / `removexattr`.
        public var attribute: String?
        /// A delete's size as planned, in bytes.
        public var size: Int64?
        /// Why it was skipped or kept.
        public var reason: String?
        /// For a step skipped because a call on it failed: the errno's name and the call.
        public var errno: String?
        public var call: String?
        /// The step it belongs to (0-based, in execution order; -1 for a trash folder made on the way).
        public var step: Int?
        /// A quarantined delete (`delete` with this set): when its window ends (RFC 3339); a restore from the
        /// quarantine or a purge: the transaction whose quarantine it acted on.
        public var quarantineUntil: String? = nil
        public var quarantineOf: String? = nil
    }

    /// The transaction, as `policyctl journal` summarises it.
    public var transaction: TransactionSummary
    /// Every path, in the order the journal recorded them.
    public var paths: [Entry]
    /// True when the journal no longer lists its changes (its history file was removed past `journal: { history }`,
    /// or an older policyctl compacted the journal): only its skipped and kept entries and its counts are left.
    public var compacted: Bool
    /// The history file its records were read from, when the live journal keeps only its summary (rotated).
    public var historyFile: String? = nil
}

extension JournalHistory {
    /// Transaction `id` of the journal under `state`, path by path; nil when the journal has no such transaction.
    package static func paths(_ state: StateDirectory, transaction id: String) throws -> TransactionPaths? {
        // One read of the journal: the transaction's own records make its summary, as `read` makes every one. Its
        // records are kept small as they stream by (an intent, not its record's body of most of a kilobyte).
        enum Item { case intent(Intent, size: Int64?), other(RecordBody) }
        var items: [Item] = []
        var summaryRecords: [JournalRecord] = []
        var skippedSteps = Set<Int>()
        var undoneOps = Set<Int>()
        guard let source = try JournalFiles.withTransaction(id, in: state, { record in
            switch record.kind {
            case .intent:
                if let intent = Intent(record.body) {
                    let b = record.body
                    items.append(.intent(intent, size: b.bytes ?? b.size))
                }
            case .undone:
                undoneOps.formUnion(record.body.ops ?? [])
            default:
                if record.kind == .skip, let action = record.body.action { skippedSteps.insert(action) }
                summaryRecords.append(record)
                items.append(.other(record.body))
            }
        }), let summary = summary(of: summaryRecords) else { return nil }
        var entries: [TransactionPaths.Entry] = []
        entries.reserveCapacity(items.count)
        var intents = 0
        var keptSeen = Set<String>()
        for item in items {
            let b: RecordBody
            switch item {
            case .intent(let intent, let size):
                intents += 1
                // The steps skipped are listed by their skip record: what they had changed was undone first.
                if skippedSteps.contains(intent.action) { continue }
                guard let entry = entry(intent, size: size, outcome: summary.outcome, undone: undoneOps.contains(intent.op)) else { continue }
                entries.append(entry)
                continue
            case .other(let body): b = body
            }
            switch b.type {
            case JournalRecord.Kind.skip.rawValue:
                let path = RecordBody.path(b.path, b.pathBase64) ?? .root
                entries.append(described(path, status: .skipped, change: b.verb, reason: b.reason, step: b.action,
                                         errno: b.errno, call: b.call))
            case JournalRecord.Kind.kept.rawValue:
                let path = RecordBody.path(b.path, b.pathBase64) ?? .root
                // Each recovery that looks at a kept entry records it again: listed once, as `journal` does.
                guard keptSeen.insert("\(path.escaped)\u{0}\(b.reason ?? "")").inserted else { continue }
                entries.append(described(path, status: .kept, change: nil, reason: b.reason, step: nil))
            default:
                break
            }
        }
        let compacted = intents == 0 && summary.outcome != .open && summary.counts.total > 0
        var paths = TransactionPaths(transaction: summary, paths: entries, compacted: compacted)
        if case .history(let file) = source { paths.historyFile = state.describe(FileName(unchecked: Array(file.utf8))) }
        return paths
    }

    /// The entry an intent stands for; nil for a folder's times set back after removals (DirectoryTimes), which
    /// is bookkeeping that leaves the folder as it was, not a change to a path.
    private static func entry(_ intent: Intent, size: Int64?, outcome: TransactionSummary.Outcome,
                              undone: Bool) -> TransactionPaths.Entry? {
        var status: TransactionPaths.Entry.Status
        switch outcome {
        case .committed: status = .changed
        case .open: status = .pending
        // The rollback's `undone` records name the changes it acted on; the rest were never made.
        case .rolledBack, .partiallyRolledBack: status = undone ? .rolledBack : .notMade
        }
        var to: RelativePath?
        var attribute: String?
        var deleteSize: Int64?
        var until: String?
        var of: String?
        let change: String
        switch intent.change {
        case .unlink:
            change = "delete"
            deleteSize = size
            // A file delete rolls forward: once its intent is durable and it was not skipped, it stays made.
            if status == .notMade { status = .changed }
        case .stage:
            change = "delete"
            deleteSize = size
        case .rename(_, let destination):
            change = "rename"
            to = destination
        case .mkdir:
            change = "mkdir"
        case .setxattr(_, let name, let value, _):
            change = value == nil ? "removexattr" : "setxattr"
            attribute = name
        case .create:
            change = "create"
        case .permissions:
            change = "set-perms"
        case .layoutFile:
            change = "mkfile"
        case .symlink:
            change = "symlink"
        case .times:
            return nil
        case .quarantine(_, let slot, _, _, _):
            change = "delete"
            deleteSize = size
            until = QuarantineSlot.instant(slot.until).map { WallClock.rfc3339(ns: $0) } ?? slot.until
        case .unquarantine(let slot, _, _):
            change = "restore"
            of = slot.transaction
        case .purge(let transaction, let window, _):
            change = "purge"
            of = transaction
            until = QuarantineSlot.instant(window).map { WallClock.rfc3339(ns: $0) } ?? window
        }
        var entry = described(intent.change.path, status: status, change: change, reason: nil, step: intent.action)
        entry.quarantineUntil = until
        entry.quarantineOf = of
        entry.to = to.map { $0.isValidUTF8 ? $0.string : $0.escaped }
        entry.toBase64 = to.flatMap { $0.isValidUTF8 ? nil : $0.base64 }
        entry.attribute = attribute
        entry.size = deleteSize
        return entry
    }

    private static func described(_ path: RelativePath, status: TransactionPaths.Entry.Status, change: String?, reason: String?,
                                  step: Int?, errno: String? = nil, call: String? = nil) -> TransactionPaths.Entry {
        TransactionPaths.Entry(status: status, change: change, path: path.isValidUTF8 ? path.string : path.escaped,
                               pathBase64: path.isValidUTF8 ? nil : path.base64, to: nil, toBase64: nil, attribute: nil,
                               size: nil, reason: reason, errno: errno, call: call, step: step)
    }
}
