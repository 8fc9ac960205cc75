// What the quarantine holds, from the journal and the folders together: each committed transaction's `quarantine`
// intents, kept only where the entry is still in its window's subfolder (an undo took some back, a purge removed
// whole windows). Read-only; every folder through the trust checks, the transaction's folder the one its commit
// named. What `policyctl quarantine` lists, `status` counts, and a purge picks from.

@_spi(Layers) import StoragePolicyFileSystem

/// One entry the quarantine holds.
public struct QuarantinedEntry: Sendable, Hashable, Codable {
    /// Where it was deleted from, relative to the root (escaped when not UTF-8).
    public var path: String
    /// Its exact bytes, when it is not valid UTF-8.
    public var pathBase64: String?
    /// `file`, `directory`, `symlink`...
    public var type: String
    /// Bytes (allocated, as du counts; a folder with everything in it) as planned.
    public var bytes: Int64
}

/// One window of one transaction's quarantine: entries held until the same instant.
public struct QuarantineWindow: Sendable, Hashable, Codable {
    /// The transaction that quarantined them (what `policyctl undo` takes).
    public var transaction: String
    /// When that transaction ran (RFC 3339 UTC).
    public var time: String
    /// When the window ends and the next apply purges it (RFC 3339 UTC).
    public var until: String
    public var entries: [QuarantinedEntry]
    /// The entries' bytes together.
    public var bytes: Int64

    package var timeNs: Int64 = 0
    package var untilNs: Int64 = 0
    package var untilName = ""
    package var folder = FolderIdentity(device: 0, inode: 0)

    enum CodingKeys: String, CodingKey { case transaction, time, until, entries, bytes }
}

/// What the quarantine of a root holds, and what was found there but left alone.
public struct QuarantineContents: Sendable, Codable {
    /// Oldest transaction first, then earliest window end.
    public var windows: [QuarantineWindow]
    /// Folders left alone, and why (a rolled-back transaction's kept entries, a folder failing the checks).
    public var notes: [String]

    public var entries: Int { windows.reduce(0) { $0 + $1.entries.count } }
    public var bytes: Int64 { windows.reduce(0) { $0 + $1.bytes } }

    public init(windows: [QuarantineWindow], notes: [String]) { self.windows = windows; self.notes = notes }

    enum CodingKeys: String, CodingKey { case windows, notes, entries, bytes }

    /// `{"bytes": N, "entries": N, "notes": [...], "windows": [...]}`: the totals with the windows.
    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(windows, forKey: .windows)
        try c.encode(notes, forKey: .notes)
        try c.encode(entries, forKey: .entries)
        try c.encode(bytes, forKey: .bytes)
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        windows = try c.decode([QuarantineWindow].self, forKey: .windows)
        notes = try c.decode([String].self, forKey: .notes)
    }
}

package enum QuarantineStore {
    /// The transactions with a quarantine folder (by name): what journal rotation keeps whole.
    package static func transactionsHolding(_ state: StateDirectory) throws -> Set<String> {
        Set(try state.quarantinedTransactions())
    }

    /// Everything held, read from the journal (live, or a transaction's history file) and the folders.
    package static func contents(_ state: StateDirectory) throws -> QuarantineContents {
        let ids = try state.quarantinedTransactions()
        guard !ids.isEmpty else { return QuarantineContents(windows: [], notes: []) }
        let live = try JournalFiles.live(state)
        var out = QuarantineContents(windows: [], notes: [])
        for id in ids {
            var time = "", timeNs: Int64 = 0, outcome: String?, folder: FolderIdentity?
            var skipped = Set<Int>()
            var held: [Intent] = []
            var sizes: [Int: Int64] = [:]
            let found = try JournalFiles.withTransaction(id, in: state, live: live) { record in
                let b = record.body
                switch record.kind {
                case .begin: time = b.time ?? ""; timeNs = b.timeNs ?? 0
                case .skip: if let a = b.action { skipped.insert(a) }
                case .commit: if let d = b.quarantineDev, let i = b.quarantineIno { folder = FolderIdentity(device: d, inode: i) }
                case .end: outcome = b.outcome
                case .intent:
                    if let intent = Intent(b), case .quarantine = intent.change, intent.refusal == nil {
                        held.append(intent)
                        sizes[intent.op] = b.bytes ?? b.size ?? 0
                    }
                default: break
                }
            }
            guard found != nil else {
                out.notes.append("\(state.quarantinePath(for: id)): the journal has no transaction \(id); left alone")
                continue
            }
            guard outcome == TransactionSummary.Outcome.committed.rawValue, let folder else {
                if outcome != nil {
                    out.notes.append("\(state.quarantinePath(for: id)): transaction \(id) did not commit (\(outcome!)); what a rollback kept there is left alone (move it back by hand)")
                }
                continue
            }
            let quarantine: QuarantineFolders
            do {
                guard let opened = try state.openQuarantine(for: id, identity: folder) else { continue }
                quarantine = opened
            } catch {
                out.notes.append("\(error); left alone")
                continue
            }
            var byWindow: [String: [Intent]] = [:]
            for intent in held where !skipped.contains(intent.action) {
                if case .quarantine(_, let slot, _, _, _) = intent.change { byWindow[slot.until, default: []].append(intent) }
            }
            for until in try quarantine.untils() {
                guard let window = try quarantine.window(until, state: state) else { continue }
                let present = Set(try window.entries().map(\.name))
                var entries: [QuarantinedEntry] = []
                var bytes: Int64 = 0
                for intent in byWindow[until] ?? [] {
                    guard case .quarantine(let path, let slot, let type, _, _) = intent.change, present.contains(slot.name) else { continue }
                    let size = sizes[intent.op] ?? 0
                    bytes += size
                    entries.append(QuarantinedEntry(path: path.isValidUTF8 ? path.string : path.escaped,
                                                    pathBase64: path.isValidUTF8 ? nil : path.base64, type: type.rawValue, bytes: size))
                }
                let untilNs = QuarantineSlot.instant(until) ?? 0
                var w = QuarantineWindow(transaction: id, time: time, until: WallClock.rfc3339(ns: untilNs), entries: entries, bytes: bytes)
                w.timeNs = timeNs
                w.untilNs = untilNs
                w.untilName = until
                w.folder = folder
                out.windows.append(w)
            }
        }
        out.windows.sort { ($0.timeNs, $0.transaction, $0.untilNs) < ($1.timeNs, $1.transaction, $1.untilNs) }
        return out
    }
}

/// What a purge of the quarantine did.
public struct QuarantinePurgeReport: Sendable {
    /// The purge's transaction in the journal.
    public var transaction: String?
    /// The windows removed, with what each held.
    public var windows: [QuarantineWindow] = []
    public var entries: Int { windows.reduce(0) { $0 + $1.entries.count } }
    public var bytes: Int64 { windows.reduce(0) { $0 + $1.bytes } }
    /// Windows left for a later purge: the time budget ran out.
    public var left = 0
    /// Why: `past its window`, `older than 30d`, `free-space pressure`, `--purge`.
    public var reason: String

    package init(reason: String) { self.reason = reason }
}

/// Empties quarantine windows for good, as one journaled transaction (kind `purge`): per window one `purge` intent,
/// durable before the window is removed, rolled forward by recovery (a half-removed window is finished). Stops
/// between windows once the deadline passed (what is left waits for the next purge).
package enum QuarantinePurge {
    package typealias Report = QuarantinePurgeReport

    package static func run(_ windows: [QuarantineWindow], reason: String, holding lock: ApplyLock, policy: String,
                            rootPath: String, deadline: ContinuousClock.Instant?) throws(ApplyError) -> Report? {
        guard !windows.isEmpty else { return nil }
        var report = Report(reason: reason)
        let journal: Journal
        let t: Transaction
        do {
            journal = try lock.state.openJournal()
            let metadata = Transaction.Metadata(kind: .purge, policy: policy, policySHA256: nil, policyPath: nil, planFile: nil,
                                                rootPath: rootPath, actions: windows.count)
            t = try Transaction.begin(metadata, lock: lock, journal: journal)
        } catch {
            throw .failed(error)
        }
        report.transaction = t.id
        var purged = 0
        do {
            for (k, window) in windows.enumerated() {
                if let deadline, ContinuousClock.now >= deadline {
                    report.left = windows.count - k
                    break
                }
                let intent = t.intend(.purge(transaction: window.transaction, until: window.untilName, folder: window.folder),
                                      action: k, identity: nil)
                try t.makeDurable()
                try t.perform(intent)
                report.windows.append(window)
                purged += window.entries.count
            }
            var counts = ActionCounts()
            counts[.purge] = purged
            try t.commit(counts: counts, bytesFreed: report.bytes, skipped: 0)
            try t.purge()
            try t.end(outcome: .committed)
        } catch {
            // Every purge intent is rolled forward: a failure here leaves the transaction open for recovery,
            // which finishes the windows it names.
            throw .rollbackIncomplete(transaction: t.id, cause: "\(error)", failures: ["the purge of the quarantine stopped: \(error)"])
        }
        return report
    }

    /// The windows a purge takes: those whose end is at or before `now`.
    package static func pastWindow(_ contents: QuarantineContents, now: Int64) -> [QuarantineWindow] {
        contents.windows.filter { $0.untilNs <= now }
    }

    /// The oldest windows first until `bytes` are covered (pressure): what the quarantine gives before a live entry.
    package static func oldestFirst(_ contents: QuarantineContents, covering bytes: Int64) -> [QuarantineWindow] {
        var out: [QuarantineWindow] = []
        var total: Int64 = 0
        for w in contents.windows where total < bytes {
            out.append(w)
            total += w.bytes
        }
        return out
    }
}
