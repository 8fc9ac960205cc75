// The append-only journal file ROOT/.policyctl/journal.jsonl: buffered appends made durable by one fsync per
// group, and reading back with torn or corrupt lines detected. Never rewrites a record in place. On ENOSPC the
// space reserve beside it is given back and the write tried once more, so a full disk can still be cleaned.
import Foundation
@_spi(Layers) import StoragePolicyFileSystem

package final class Journal {
    package static let fileName = FileName(unchecked: Array("journal.jsonl".utf8))
    static let compactedName = FileName(unchecked: Array("journal.jsonl.compact".utf8))

    package let file: FileDescriptor
    private let directory: DirectoryHandle
    /// `journal.reserve`: released on the first ENOSPC, so the records that free space can still be written.
    let reserve: JournalReserve
    // Appended to by the run's thread alone, record after record, never overlapping: no dynamic exclusivity check.
    // The pending group's framed records, written straight into one writer's buffer (JournalRecord.appendFrame).
    @exclusivity(unchecked) private var buffer = JSONWriter(capacity: 64 << 10)
    @exclusivity(unchecked) private var buffered = 0
    /// Records this process has made durable; what POLICYCTL_CRASH_AFTER_RECORDS counts.
    private(set) var durableRecords = 0

    package init(in directory: DirectoryHandle) throws(FileSystemError) {
        self.directory = directory
        file = try directory.openFile(Journal.fileName, options: [.readWrite, .create, .append], permissions: 0o600)
        reserve = JournalReserve(in: directory)
        // Made (or topped up after a full disk released it) whenever there is room: every apply, trash and
        // recover opens the journal first, so the reserve exists before the disk fills up.
        reserve.replenish()
    }

    // MARK: Appending

    /// Room for a group of `records` intent records in the pending buffer at once (about 256 bytes each): grown
    /// by doubling from 64 KiB, a run's largest group wrote each record twice more and touched every new page
    /// of each size on the way (the container's apply: 500 page faults on the run's thread).
    func reserveRoom(records: Int) {
        buffer.reserve(max(0, records) * 256)
    }

    /// Adds a record to the pending group; nothing reaches the disk until `flush`.
    package func append(_ body: borrowing JSONWriter) {
        JournalRecord.appendFrame(to: &buffer) { $0.append(finished: body) }
        buffered += 1
    }

    /// Adds a record whose fields `fields` writes straight into the pending group: no writer of its own to
    /// allocate, fill, copy and free (a file delete's intent record, once per delete).
    func appendRecord(_ fields: (inout JSONWriter) -> Void) {
        JournalRecord.appendFrame(to: &buffer) { w in
            w.beginObject()
            fields(&w)
            w.byte(0x7D)
        }
        buffered += 1
    }

    /// Writes the pending group and fsyncs: afterwards every appended record is durable. On failure the
    /// partial group is cut off again so the file never keeps half a line in the middle.
    func flush() throws(FileSystemError) {
        guard buffered > 0 else { return }
        let before = try file.status().size
        do {
            try writeBuffer(cutBackTo: before)
        } catch {
            try? file.truncate(to: before)
            buffer.removeAll()
            buffered = 0
            throw error
        }
        let previous = durableRecords
        durableRecords += buffered
        buffer.removeAll()
        buffered = 0
        CrashPoint.recordsDurable(before: previous, total: durableRecords)
    }

    private func writeBuffer(cutBackTo before: Int64) throws(FileSystemError) {
        do {
            try buffer.withUnsafeMutableBytes { bytes throws(FileSystemError) in try file.write(UnsafeRawBufferPointer(bytes)) }
            try file.sync()
        } catch where error.errno == .noSpace {
            // The disk is full: give the reserve back and try once more. A second ENOSPC is a failure.
            try? file.truncate(to: before)
            guard reserve.release() else { throw error }
            try buffer.withUnsafeMutableBytes { bytes throws(FileSystemError) in try file.write(UnsafeRawBufferPointer(bytes)) }
            try file.sync()
        }
    }

    // MARK: Reading

    /// What reading the whole file found besides the records themselves.
    package struct Scan {
        /// 1-based line numbers of complete lines whose checksum or JSON is wrong (before the last valid line),
        /// or whose numbers are out of range.
        var corruptLines: [Int] = []
        /// The same lines, each with why it is damaged.
        package var damaged: [(line: Int, reason: String)] = []
        /// True when the file ends in a torn or corrupt line (an append cut short by a crash): ignored.
        var tornTail = false
        /// The line number where the torn tail starts (0 when there is none).
        var tornTailLine = 0
        /// The byte length up to the end of the last valid record.
        var validLength: Int64 = 0
    }

    /// Reads and verifies every line, handing each valid record (and its framed line) to `visit` in order.
    func scan(_ visit: (JournalRecord, ArraySlice<UInt8>) throws -> Void) throws -> Scan {
        let bytes = try readRange(from: 0, count: Int(try file.status().size))
        return try Journal.scan(bytes, visit)
    }

    /// What recovery reads: every line verified, every record parsed, except the per-change records (`intent`,
    /// `undone`) of transactions whose `end` record is in the journal (parsed first): recovery drops those
    /// anyway, and a journal past 30 MB is mostly them.
    func scanForRecovery(_ visit: (JournalRecord) throws -> Void) throws -> Scan {
        let bytes = try readRange(from: 0, count: Int(try file.status().size))
        var ended = Set<[UInt8]>()
        let end = Array("end".utf8), intent = Array("intent".utf8), undone = Array("undone".utf8)
        Journal.records(in: bytes, where: { $0.isType(end) }) { record in
            if record.kind == .end { ended.insert(Array(record.transaction.utf8)) }
        }
        return try bytes.withUnsafeBytes { raw in
            try Journal.scanLines(raw, checkingOnly: { head in
                (head.isType(intent) || head.isType(undone)) && ended.contains(Array(head.transaction))
            }) { reading, _ in
                if case .record(let record) = reading { try visit(record) }
            }
        }
    }

    static func scan(_ bytes: [UInt8], _ visit: (JournalRecord, ArraySlice<UInt8>) throws -> Void) rethrows -> Scan {
        try bytes.withUnsafeBytes { raw in
            try scanLines(raw) { reading, range in
                if case .record(let record) = reading { try visit(record, bytes[range]) }
            }
        }
    }

    /// `scan`, but the per-change records (`intent`, `undone`) are only checksum-verified, never parsed or handed
    /// over: what `policyctl journal`'s summaries need, at a small part of the cost.
    static func scanSummaries(_ bytes: [UInt8], _ visit: (JournalRecord) throws -> Void) rethrows -> Scan {
        let intent = Array("intent".utf8), undone = Array("undone".utf8)
        return try bytes.withUnsafeBytes { raw in
            try scanLines(raw, checkingOnly: { $0.isType(intent) || $0.isType(undone) }) { reading, _ in
                if case .record(let record) = reading { try visit(record) }
            }
        }
    }

    /// Every line's head (JournalLineHead), handed to `visit`; nothing verified or parsed. Lines without the
    /// engine's head are passed over.
    static func heads(in bytes: [UInt8], _ visit: (JournalLineHead) -> Void) {
        withoutActuallyEscaping(visit) { visit in
            bytes.withUnsafeBytes { raw in
                _ = scanLines(raw, skipping: { head in visit(head); return true }, onlyHeads: true) { _, _ in }
            }
        }
    }

    /// The records of `bytes` that `wanted` keeps, by their transaction and type as the line's head spells them
    /// (JournalLineHead): the other lines are not verified or parsed at all. For readers that need one
    /// transaction, or only the begin records, of a journal of a million lines; never for recovery, which must
    /// see every line. A line whose head is not in the engine's shape is read in full, as `scan` reads it.
    static func records(in bytes: [UInt8], where wanted: (JournalLineHead) -> Bool,
                        _ visit: (JournalRecord) throws -> Void) rethrows {
        try withoutActuallyEscaping(wanted) { wanted in
            try bytes.withUnsafeBytes { raw in
                _ = try scanLines(raw, skipping: { head in !wanted(head) }) { reading, _ in
                    if case .record(let record) = reading { try visit(record) }
                }
            }
        }
    }

    /// Every line of `raw` read (`JournalRecord.read`), handed to `visit` with its range (newline included), and
    /// what was damaged or torn. The one loop every reader of a journal or a history file goes through.
    static func scanLines(_ raw: UnsafeRawBufferPointer, skipping skip: ((JournalLineHead) -> Bool)? = nil,
                          onlyHeads: Bool = false, checkingOnly checkOnly: ((JournalLineHead) -> Bool)? = nil,
                          _ visit: (JournalRecord.Reading, Range<Int>) throws -> Void) rethrows -> Scan {
        var result = Scan()
        var lineStart = 0
        var lineNumber = 0
        var pendingCorrupt: [(line: Int, reason: String)] = []
        let count = raw.count
        while lineStart < count {
            lineNumber += 1
            // memchr: the line's end found a word at a time, not byte by byte through an index.
            guard let offset = system_memchrOffset(raw.baseAddress! + lineStart, 0x0A, count - lineStart) else {
                result.tornTail = true
                result.tornTailLine = pendingCorrupt.first?.line ?? lineNumber
                break
            }
            let newline = lineStart + offset
            let line = UnsafeRawBufferPointer(rebasing: raw[lineStart..<newline])
            if let skip, let head = JournalLineHead(line), skip(head) {
                lineStart = newline + 1
                continue
            }
            if onlyHeads {
                lineStart = newline + 1
                continue
            }
            if let checkOnly, let head = JournalLineHead(line), checkOnly(head) {
                // Verified (a torn or corrupt line is still found and named), not parsed.
                if JournalRecord.verifiedBodyRange(of: line) != nil {
                    result.validLength = Int64(newline + 1)
                    result.corruptLines += pendingCorrupt.map(\.line)
                    result.damaged += pendingCorrupt
                    pendingCorrupt = []
                } else {
                    pendingCorrupt.append((lineNumber, "checksum or framing mismatch"))
                }
                lineStart = newline + 1
                continue
            }
            let reading = JournalRecord.read(line: line)
            switch reading {
            case .record(var record):
                record.line = lineNumber
                try visit(.record(record), lineStart..<(newline + 1))
                result.validLength = Int64(newline + 1)
                result.corruptLines += pendingCorrupt.map(\.line)
                result.damaged += pendingCorrupt
                pendingCorrupt = []
            case .damaged(let reason):
                // A good checksum: a complete write whose content cannot be trusted, never a torn tail.
                result.validLength = Int64(newline + 1)
                result.corruptLines += pendingCorrupt.map(\.line) + [lineNumber]
                result.damaged += pendingCorrupt + [(lineNumber, reason)]
                pendingCorrupt = []
            case .unreadable(let reason):
                pendingCorrupt.append((lineNumber, reason))
            }
            lineStart = newline + 1
        }
        // Bad lines after the last good one are the tail a crash tore, not damage in the middle.
        if !pendingCorrupt.isEmpty {
            result.tornTail = true
            result.tornTailLine = pendingCorrupt[0].line
        }
        return result
    }

    /// What the last line says, read from at most the last 64 KiB.
    package enum Tail {
        case empty
        case record(JournalRecord)
        /// Torn, corrupt or longer than the window: only a full read can tell.
        case unclear
    }

    func tail() throws(FileSystemError) -> Tail {
        let size = Int(try file.status().size)
        if size == 0 { return .empty }
        let window = min(size, 64 * 1024)
        let bytes = try readRange(from: size - window, count: window)
        guard bytes.last == 0x0A else { return .unclear }
        let end = bytes.count - 1
        let start = bytes[..<end].lastIndex(of: 0x0A).map { $0 + 1 } ?? 0
        if start == 0 && window < size { return .unclear }
        guard let record = JournalRecord.decode(line: bytes[start..<end]) else { return .unclear }
        return .record(record)
    }

    /// Cuts the file back to `length` bytes: drops a torn last line before anything is appended after it.
    func truncate(to length: Int64) throws(FileSystemError) {
        try file.truncate(to: length)
        try file.sync()
    }

    /// Replaces the journal with `lines` (already framed), atomically: a temporary file, fsync, rename over
    /// the journal, fsync the directory. The caller must reopen the journal afterwards.
    static func replace(in directory: DirectoryHandle, with lines: [UInt8]) throws(FileSystemError) {
        try? directory.removeFile(compactedName)
        let temporary = try directory.openFile(compactedName, options: [.writeOnly, .create, .exclusive], permissions: 0o600)
        try temporary.write(lines)
        try temporary.sync()
        try directory.rename(compactedName, to: fileName, noReplace: false)
        try directory.sync()
    }

    private func readRange(from offset: Int, count: Int) throws(FileSystemError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let r = systemCall(.read) {
                out.withUnsafeMutableBytes { system_pread(file.rawValue, $0.baseAddress! + done, count - done, CInterop.Offset(offset + done)) }
            }
            switch r {
            case .success(0): return Array(out[..<done])
            case .success(let n): done += n
            case .failure(let e): throw FileSystemError(.pread, path: file.path, errno: e)
            }
        }
        return out
    }
}

/// The transaction and type a journal line starts with, read without verifying or parsing it: the engine writes
/// every record as `{"crc":"XXXXXXXX","rec":{"tx":"ID","seq":N,"type":"TYPE",...`. Only for choosing which
/// lines to read; nothing is ever believed from it.
struct JournalLineHead {
    let transaction: UnsafeRawBufferPointer
    let type: UnsafeRawBufferPointer

    private static let start = Array(#"{"crc":"00000000","rec":{"tx":""#.utf8)

    init?(_ line: UnsafeRawBufferPointer) {
        let prefix = JournalLineHead.start
        guard line.count > prefix.count + 20, let base = line.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return nil }
        // `{"crc":"` 8 hex digits `","rec":{"tx":"`
        for k in 0..<8 where base[k] != prefix[k] { return nil }
        for k in 16..<prefix.count where base[k] != prefix[k] { return nil }
        var i = prefix.count
        let txStart = i
        while i < line.count, base[i] != 0x22 { i += 1 }
        guard i < line.count else { return nil }
        transaction = UnsafeRawBufferPointer(rebasing: line[txStart..<i])
        let seq = Array(#"","seq":"#.utf8)
        guard i + seq.count < line.count else { return nil }
        for k in 0..<seq.count where base[i + k] != seq[k] { return nil }
        i += seq.count
        while i < line.count, base[i] >= 0x30, base[i] <= 0x39 { i += 1 }
        let type = Array(#","type":""#.utf8)
        guard i + type.count < line.count else { return nil }
        for k in 0..<type.count where base[i + k] != type[k] { return nil }
        i += type.count
        let typeStart = i
        while i < line.count, base[i] != 0x22 { i += 1 }
        guard i < line.count else { return nil }
        self.type = UnsafeRawBufferPointer(rebasing: line[typeStart..<i])
    }

    func isTransaction(_ id: [UInt8]) -> Bool { transaction.elementsEqual(id) }
    func isType(_ name: [UInt8]) -> Bool { type.elementsEqual(name) }
}
