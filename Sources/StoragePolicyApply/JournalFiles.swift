// The journal as files: the live `journal.jsonl` and the rotated history beside it (`journal.<first>.<last>.jsonl.gz`,
// gzip, written once by JournalRotation). Every reader of a transaction's records comes here: the live journal
// first, then a history file whose name covers the transaction. Read-only: never repairs, truncates or locks,
// and every file is opened through the state folder's trust checks (owner, mode, O_NOFOLLOW).

@_spi(Layers) import StoragePolicyFileSystem

package enum JournalFiles {
    /// The most any journal or history file may hold once read (2 GiB): past that it is refused, not read.
    static let readLimit = 1 << 31

    /// The live journal's bytes (empty when there is none), read through the trust checks.
    static func live(_ state: StateDirectory) throws -> [UInt8] {
        guard try state.directory.statusIfPresent(of: Journal.fileName) != nil else { return [] }
        let file = try state.openStateFile(Journal.fileName, options: [.readOnly])
        return try readWhole(file)
    }

    /// A file read whole with one buffer of its size (fstat), grown only if it grew meanwhile.
    static func readWhole(_ file: FileDescriptor) throws -> [UInt8] {
        let size = Int(try file.status().size)
        guard size <= readLimit else { throw FileSystemError(.read, path: file.path, errno: Errno(rawValue: _EFBIG)) }
        var out = [UInt8](repeating: 0, count: size)
        var done = 0
        while done < size {
            let n = try out.withUnsafeMutableBytes { raw throws(FileSystemError) in
                try file.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[done...]), at: Int64(done))
            }
            if n == 0 { break }
            done += n
        }
        if done < size { out.removeLast(size - done) }
        return out
    }

    /// One rotated history file: its name and the first and last transaction ids it holds.
    package struct HistoryFile: Sendable, Hashable {
        package var name: FileName
        package var first: String
        package var last: String

        /// `journal.<first>.<last>.jsonl.gz`.
        static func name(first: String, last: String) -> FileName {
            FileName(unchecked: Array("journal.\(first).\(last).jsonl.gz".utf8))
        }

        /// The ids a history file's name holds; nil for any other name.
        static func parse(_ name: FileName) -> HistoryFile? {
            let text = String(decoding: name.bytes, as: UTF8.self)
            guard text.hasPrefix("journal."), text.hasSuffix(".jsonl.gz") else { return nil }
            let middle = text.dropFirst("journal.".count).dropLast(".jsonl.gz".count).split(separator: ".", omittingEmptySubsequences: false)
            guard middle.count == 2, JournalRecord.isValidTransaction(String(middle[0])),
                  JournalRecord.isValidTransaction(String(middle[1])) else { return nil }
            return HistoryFile(name: name, first: String(middle[0]), last: String(middle[1]))
        }

        /// True when `id` may be in this file (ids sort by time).
        func mayHold(_ id: String) -> Bool { first <= id && id <= last }
    }

    /// The history files in the state folder, oldest first.
    package static func history(_ state: StateDirectory) throws -> [HistoryFile] {
        try state.directory.entries().compactMap { HistoryFile.parse($0.name) }.sorted { ($0.first, $0.last) < ($1.first, $1.last) }
    }

    /// A history file's records, decompressed (through the trust checks); nil when it cannot be read (damaged).
    static func read(_ file: HistoryFile, in state: StateDirectory) throws -> [UInt8]? {
        let descriptor = try state.openStateFile(file.name, options: [.readOnly])
        return Gzip.decompress(try readWhole(descriptor), limit: readLimit)
    }

    /// Where a transaction's own records were found.
    package enum Source: Sendable, Equatable {
        /// In the live journal, every record.
        case live
        /// In the live journal only its summary; every record in this history file.
        case history(String)
        /// Only its summary is left: its history file was removed (or the journal was compacted by an older
        /// policyctl, which dropped the per-change records).
        case summaryOnly
    }

    /// Every record of transaction `id`, in order: from the live journal when it holds the transaction's changes,
    /// else from the history file that does. Nil when the live journal has no such transaction.
    package static func transaction(_ id: String, in state: StateDirectory,
                                    live bytes: [UInt8]? = nil) throws -> (records: [JournalRecord], source: Source)? {
        var records: [JournalRecord] = []
        guard let source = try withTransaction(id, in: state, live: bytes, { records.append($0) }) else { return nil }
        return (records, source)
    }

    /// Hands every record of transaction `id` to `visit`, in order, from where `transaction` would take them, and
    /// says where that was; nil (nothing visited) when the live journal has no such transaction. Streams: a
    /// transaction of a million records is never an array of them (a record's body is most of a kilobyte).
    package static func withTransaction(_ id: String, in state: StateDirectory, live bytes: [UInt8]? = nil,
                                        _ visit: (JournalRecord) throws -> Void) throws -> Source? {
        let liveBytes = try bytes ?? live(state)
        let wanted = Array(id.utf8)
        let intent = Array("intent".utf8), begin = Array("begin".utf8)
        // Which file holds its changes, from the lines' heads alone (nothing parsed).
        var begun = false, changes = false
        Journal.heads(in: liveBytes) { head in
            guard head.isTransaction(wanted) else { return }
            if head.isType(begin) { begun = true }
            if head.isType(intent) { changes = true }
        }
        guard begun else { return nil }
        if !changes {
            for file in try history(state) where file.mayHold(id) {
                guard let bytes = try read(file, in: state) else { continue }
                var held = false
                Journal.heads(in: bytes) { head in if head.isTransaction(wanted) && head.isType(intent) { held = true } }
                guard held else { continue }
                try Journal.records(in: bytes, where: { $0.isTransaction(wanted) }) { record in
                    if record.body.tx == id { try visit(record) }
                }
                return .history(String(decoding: file.name.bytes, as: UTF8.self))
            }
        }
        var actions = 0
        try Journal.records(in: liveBytes, where: { $0.isTransaction(wanted) }) { record in
            guard record.body.tx == id else { return }
            if record.kind == .begin { actions = record.body.actions ?? 0 }
            try visit(record)
        }
        // A transaction that made no change has no intent to look for elsewhere.
        return changes || actions == 0 ? .live : .summaryOnly
    }

    /// The newest transaction the live journal records (by its begin record), optionally only among those
    /// `include` accepts: what `last` names.
    package static func newest(in state: StateDirectory, where include: (RecordBody) -> Bool = { _ in true }) throws -> String? {
        var newest: String?
        let begin = Array("begin".utf8)
        Journal.records(in: try live(state), where: { $0.isType(begin) }) { record in
            if record.kind == .begin, include(record.body) { newest = record.body.tx }
        }
        return newest
    }
}
