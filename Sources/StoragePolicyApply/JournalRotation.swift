// Keeps the live journal small without forgetting anything: when it grows past 16 MiB, an apply (and nothing
// else: never undo, journal, recover, a dry run or a read) moves every record of its older closed transactions,
// byte for byte, into a gzip history file beside it, and rewrites the live journal with only their summaries
// (begin, skip, commit, rollback, kept, end). The newest `keep` transactions, every open one and every one whose
// quarantine is not purged yet stay whole. `journal show` and `undo` read a moved transaction from its history
// file. History past the policy's `journal: { history: SIZE }` is removed oldest file first, and said so.
// Crash-safe in either order: the history file is durable (temporary, fsync, rename, fsync of the folder) before
// the live journal is replaced the same way; a crash between them leaves the records in both, and readers take
// the live journal's.

@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyModel

public enum JournalRotation {
    /// The live journal's size past which an apply rotates it.
    public static let threshold: Int64 = 16 << 20
    static let temporaryName = FileName(unchecked: Array("journal.history.tmp".utf8))

    /// What a rotation did, for the apply's output.
    public struct Report: Sendable, Equatable {
        /// Transactions whose records moved into `file`.
        public var moved: Int = 0
        public var file: String?
        /// History files removed past the `history` limit, each with the transactions it held.
        public var removed: [String] = []
        /// The size of the live journal before and after.
        public var before: Int64 = 0
        public var after: Int64 = 0
    }

    /// Rotates the live journal when it is past `threshold`; nil when nothing moved or was removed.
    /// `protected`: transactions whose quarantine still holds entries (they stay whole in the live journal).
    package static func rotateIfLarge(holding lock: ApplyLock, retention: Policy.JournalRetention,
                                      protected: Set<String>, threshold: Int64 = threshold) throws -> Report? {
        let state = lock.state
        // The size first (one fstatat): the journal is read only when it is past the threshold. History is trimmed
        // only after a rotation added to it (an apply lists no folder it need not).
        guard let size = try state.directory.statusIfPresent(of: Journal.fileName)?.size, size > threshold else { return nil }
        let live = try JournalFiles.live(state)
        guard Int64(live.count) > threshold else { return nil }
        var report = Report()
        report.before = Int64(live.count)

        // Which transactions stay whole: the newest `keep`, the open ones, the protected ones.
        var order: [String] = []
        var ended = Set<String>()
        var hasChanges = Set<String>()
        _ = Journal.scan(live) { record, _ in
            switch record.kind {
            case .begin: order.append(record.transaction)
            case .end: ended.insert(record.transaction)
            case .intent, .undone: hasChanges.insert(record.transaction)
            default: break
            }
        }
        let newest = Set(order.suffix(max(0, retention.keep)))
        let moving = Set(order.filter { ended.contains($0) && !newest.contains($0) && !protected.contains($0) && hasChanges.contains($0) })
        if !moving.isEmpty {
            var history: [UInt8] = []
            var kept: [UInt8] = []
            history.reserveCapacity(live.count / 2)
            kept.reserveCapacity(live.count / 2)
            _ = Journal.scan(live) { record, line in
                if moving.contains(record.transaction) {
                    history += line
                    // Only the summary stays: what `policyctl journal` lists.
                    if record.kind != .intent && record.kind != .undone { kept += line }
                } else {
                    kept += line
                }
            }
            // Damaged lines are kept where they are (only whole, readable records move).
            let ids = order.filter(moving.contains)
            let name = JournalFiles.HistoryFile.name(first: ids.first!, last: ids.last!)
            try writeHistory(history, named: name, in: state.directory)
            try Journal.replace(in: state.directory, with: kept)
            report.moved = ids.count
            report.file = state.describe(name)
            report.after = Int64(kept.count)
        }
        if report.moved > 0, let limit = retention.history?.bytes {
            report.removed = try trimHistory(state, limit: limit)
        }
        return report.moved > 0 || !report.removed.isEmpty ? report : nil
    }

    /// Writes a history file atomically: compressed into a temporary (O_EXCL, 0600), fsynced, renamed into
    /// place, the folder fsynced.
    static func writeHistory(_ bytes: [UInt8], named name: FileName, in directory: DirectoryHandle) throws {
        guard let compressed = Gzip.compress(bytes) else {
            throw FileSystemError(.write, path: RelativePath([name]), errno: .ioError)
        }
        try? directory.removeFile(temporaryName)
        let file = try directory.openFile(temporaryName, options: [.writeOnly, .create, .exclusive], permissions: 0o600)
        try file.write(compressed)
        try file.sync()
        // A crash after a rotation wrote this file and before it replaced the live journal moves the same
        // transactions again next time: the same name, the same records (plus none), so it is replaced.
        try directory.rename(temporaryName, to: name, noReplace: false)
        try directory.sync()
    }

    /// Removes the oldest history files until the rest fit `limit` bytes; what each removed file held.
    static func trimHistory(_ state: StateDirectory, limit: Int64) throws -> [String] {
        let files = try JournalFiles.history(state)
        var sizes: [(JournalFiles.HistoryFile, Int64)] = []
        for file in files {
            guard let status = try state.directory.statusIfPresent(of: file.name) else { continue }
            sizes.append((file, status.size))
        }
        var total = sizes.reduce(Int64(0)) { $0 + $1.1 }
        var removed: [String] = []
        for (file, size) in sizes where total > limit {
            try state.directory.removeFile(file.name)
            total -= size
            removed.append("\(state.describe(file.name)) (transactions \(file.first) to \(file.last))")
        }
        if !removed.isEmpty { try state.directory.sync() }
        return removed
    }
}
