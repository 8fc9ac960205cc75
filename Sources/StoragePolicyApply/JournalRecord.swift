// One journal line: the framing `{"crc":"<8 hex>","rec":{...}}` with a CRC-32 of the record body (or, in a
// journal an older version wrote, `{"sum":"<16 hex>","rec":{...}}` with a SHA-256 prefix), and the body's
// fields. Never trusts a line whose checksum does not match its bytes.
import Foundation
@_spi(Layers) import StoragePolicyFileSystem

package struct JournalRecord: Sendable {
    package enum Kind: String, Sendable {
        case begin, intent, skip, commit, rollback, undone, kept, end

        /// The name as a literal: written into every record without making a String of it.
        var literal: StaticString {
            switch self {
            case .begin: "begin"
            case .intent: "intent"
            case .skip: "skip"
            case .commit: "commit"
            case .rollback: "rollback"
            case .undone: "undone"
            case .kept: "kept"
            case .end: "end"
            }
        }
    }

    package var kind: Kind
    package var body: RecordBody
    /// The 1-based line of the journal it was read from (0 when not read from a file).
    package var line = 0

    package var transaction: String { body.tx }

    /// Appends the framed line of the record `body` writes (its whole object, `{...}`; newline included) to
    /// `out`, with no copy of the body on the way: the checksum is taken over the body where it lands in `out`
    /// and written into its place in the frame.
    static func appendFrame(to out: inout JSONWriter, body: (inout JSONWriter) -> Void) {
        // Literals through the writer's pointer: three static arrays appended to an Array were a lazy global's
        // check, a retain and a uniqueness check each, per record.
        out.literal(#"{"crc":""#)
        let sumStart = out.count
        out.literal(#"00000000","rec":"#)
        let bodyStart = out.count
        body(&out)
        out.withUnsafeMutableBytes { line in
            let crc = CRC32.checksum(UnsafeRawBufferPointer(rebasing: line[bodyStart...]))
            CRC32.writeHex(crc, to: UnsafeMutableRawBufferPointer(rebasing: line[sumStart..<(sumStart + 8)]))
        }
        out.literal("}\n")
    }

    /// The framed line, newline included.
    static func frame(_ body: [UInt8]) -> [UInt8] {
        var line = prefix
        line.append(contentsOf: JournalChecksum.crc(body).utf8)
        line.append(contentsOf: middle)
        line.append(contentsOf: body)
        line.append(contentsOf: [0x7D, 0x0A])
        return line
    }

    private static let prefix = Array(#"{"crc":""#.utf8)
    private static let middle = Array(#"","rec":"#.utf8)
    /// The older frame: the first 16 hex digits of the body's SHA-256.
    private static let legacyPrefix = Array(#"{"sum":""#.utf8)

    /// The body of a framed line (without its newline) when the checksum matches; nil otherwise.
    static func verifiedBody(of line: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        line.withUnsafeBytes { raw in verifiedBodyRange(of: raw) }.map { line[(line.startIndex + $0.lowerBound)..<(line.startIndex + $0.upperBound)] }
    }

    /// Where the body of a framed line lies in `line` when its checksum matches. The CRC frame is checked in
    /// place: no array per line for the expected digits (130,000 of them in a 32 MB journal).
    static func verifiedBodyRange(of line: UnsafeRawBufferPointer) -> Range<Int>? {
        if line.starts(with: prefix) {
            let header = prefix.count + 8 + middle.count
            guard line.count > header + 2, line[line.count - 1] == 0x7D,
                  line[(prefix.count + 8)..<header].elementsEqual(middle) else { return nil }
            let body = header..<(line.count - 1)
            let crc = CRC32.checksum(UnsafeRawBufferPointer(rebasing: line[body]))
            for k in 0..<8 {
                let nibble = UInt8((crc >> UInt32(28 - 4 * k)) & 0xF)
                let digit = nibble < 10 ? 0x30 + nibble : 0x61 + nibble - 10
                guard line[prefix.count + k] == digit else { return nil }
            }
            return body
        }
        let header = legacyPrefix.count + 16 + middle.count
        guard line.count > header + 2, line[line.count - 1] == 0x7D, line.starts(with: legacyPrefix),
              line[(legacyPrefix.count + 16)..<header].elementsEqual(middle) else { return nil }
        let body = header..<(line.count - 1)
        var expected: [UInt8] = []
        SHA256.appendHexPrefix(of: Array(line[body]), digits: 16, to: &expected)
        return expected.elementsEqual(line[legacyPrefix.count..<(legacyPrefix.count + 16)]) ? body : nil
    }

    /// Decodes a framed line; nil when it is torn, corrupt, out of range or not a record this version knows.
    package static func decode(line: ArraySlice<UInt8>) -> JournalRecord? {
        if case .record(let record) = line.withUnsafeBytes({ read(line: $0) }) { return record }
        return nil
    }

    /// What one line holds.
    package enum Reading {
        case record(JournalRecord)
        /// The framing or checksum is wrong: a torn or overwritten write.
        case unreadable(String)
        /// The checksum matches but the record is not one this version can trust: its reason.
        case damaged(String)
    }

    /// Reads a framed line, telling a bad checksum from a well-framed record that is still unusable.
    package static func read(line: UnsafeRawBufferPointer) -> Reading {
        guard let body = verifiedBodyRange(of: line) else { return .unreadable("checksum or framing mismatch") }
        guard let decoded = RecordBody.parse(UnsafeRawBufferPointer(rebasing: line[body])) else {
            return .damaged("not a journal record (bad JSON, a missing field or a number out of range)")
        }
        guard let kind = Kind(rawValue: decoded.type) else { return .damaged("unknown record type '\(decoded.type.prefix(40))'") }
        if let problem = decoded.rangeProblem { return .damaged(problem) }
        return .record(JournalRecord(kind: kind, body: decoded))
    }

    /// Bounds for every count and sequence number a record may carry: far above anything a real journal holds,
    /// far below where adding one could overflow.
    static let numberLimit = 1 << 40

    /// A transaction id becomes a file name (its staging folder): letters, digits, '-' and '_' only.
    static func isValidTransaction(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= 64 && id.utf8.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x2D || c == 0x5F
        }
    }
}

/// Every field any record may carry; which ones are present depends on `type` (see Docs/journal.md).
package struct RecordBody: Decodable, Sendable, Equatable {
    var tx: String
    var seq: Int
    package var type: String

    /// A body with only its header set: what the parser (JournalRecordParser) fills in.
    init(tx: String, seq: Int, type: String) { self.tx = tx; self.seq = seq; self.type = type }
    // begin
    package var time: String?
    var timeNs: Int64?
    package var kind: String?
    package var policy: String?
    package var policySHA256: String?
    package var policyPath: String?
    package var plan: String?
    package var root: String?
    var rootDev: UInt64?
    var rootIno: UInt64?
    package var actions: Int?
    package var tool: String?
    package var pid: Int?
    var reverses: String?
    // intent, skip, kept
    var op: Int?
    package var action: Int?
    package var change: String?
    package var path: String?
    package var pathBase64: String?
    package var to: String?
    package var toBase64: String?
    var stage: String?
    /// `unlink`: the type of the entry it deletes (`file`, `symlink`...).
    var entryType: String?
    var dev: UInt64?
    var ino: UInt64?
    var size: Int64?
    var mtimeNs: Int64?
    /// `times`: the atime and mtime set on a directory, and the ones it had (DirectoryTimes).
    var atimeNs: Int64?
    var setMtimeNs: Int64?
    var previousAtimeNs: Int64?
    var previousMtimeNs: Int64?
    /// `permissions`: the mode, uid and gid set on a layout directory, and the ones it had.
    var setMode: UInt32?
    var setUid: UInt32?
    var setGid: UInt32?
    var previousMode: UInt32?
    var previousUid: UInt32?
    var previousGid: UInt32?
    /// `symlink`: what a layout symlink points to.
    var target: String?
    var targetBase64: String?
    package var attr: String?
    package var value: String?
    var valueBase64: String?
    package var previous: String?
    var previousBase64: String?
    var temp: String?
    package var contents: String?
    var contentsBase64: String?
    package var verb: String?
    package var bytes: Int64?
    package var rule: String?
    package var reason: String?
    // skip, for an error on the entry: its errno name and the call
    package var errno: String?
    package var call: String?
    // commit
    package var counts: [String: Int]?
    var bytesFreed: Int64?
    package var skipped: Int?
    // undone
    var ops: [Int]?
    // end
    package var outcome: String?
    package var kept: Int?
    // Journal format 2 (Docs/journal.md, "Format versions"): `begin` says `format: 2` and, for a transaction
    // that quarantines, where (`quarantine`); a `quarantine` intent names the window's end (`until`) and the
    // folder it was taken from (`parent`: dev, ino, mode, uid, gid); `unquarantine` and `purge` name the
    // transaction whose quarantine they act on (`quarantine`); `commit` records the quarantine folder's identity.
    package var format: Int?
    package var quarantine: String?
    var until: String?
    var parent: [UInt64]?
    var quarantineDev: UInt64?
    var quarantineIno: UInt64?
    /// `commit` of a transaction that quarantined: how many deletes it holds there, and their bytes.
    package var quarantined: Int?
    package var bytesQuarantined: Int64?

    /// Why a number or id in this record is out of range (so the record is damaged); nil when all are fine.
    var rangeProblem: String? {
        let limit = JournalRecord.numberLimit
        guard JournalRecord.isValidTransaction(tx) else { return "transaction id is not a plain name" }
        if !(1...limit).contains(seq) { return "seq \(seq) out of range" }
        if let op, !(1...limit).contains(op) { return "op \(op) out of range" }
        if let action, !(-1...limit).contains(action) { return "action \(action) out of range" }
        if let actions, !(0...limit).contains(actions) { return "actions \(actions) out of range" }
        if let pid, !(0...Int(Int32.max)).contains(pid) { return "pid \(pid) out of range" }
        // Byte counts are summed and shown: at most 2^60 (an exbibyte) each.
        if let size, !(0...(1 << 60)).contains(size) { return "size \(size) out of range" }
        if let bytes, !(0...(1 << 60)).contains(bytes) { return "bytes \(bytes) out of range" }
        if let bytesFreed, !(0...(1 << 60)).contains(bytesFreed) { return "bytesFreed \(bytesFreed) out of range" }
        if let bytesQuarantined, !(0...(1 << 60)).contains(bytesQuarantined) { return "bytesQuarantined \(bytesQuarantined) out of range" }
        if let quarantined, !(0...limit).contains(quarantined) { return "quarantined \(quarantined) out of range" }
        if let format, !(1...limit).contains(format) { return "format \(format) out of range" }
        if let skipped, !(0...limit).contains(skipped) { return "skipped \(skipped) out of range" }
        if let kept, !(0...limit).contains(kept) { return "kept \(kept) out of range" }
        if let counts, let bad = counts.first(where: { !(0...limit).contains($0.value) }) { return "count \(bad.key) \(bad.value) out of range" }
        if let ops, let bad = ops.first(where: { !(1...limit).contains($0) }) { return "op \(bad) out of range" }
        return nil
    }

    /// A path written with `JSONWriter.path`: base64 wins when present, so the bytes are exact.
    package static func path(_ text: String?, _ base64: String?) -> RelativePath? {
        if let base64, let bytes = Base64.decode(base64) { return RelativePath(bytes) }
        if let text { return RelativePath(text) }
        return nil
    }

    /// Bytes written with `JSONWriter.blob`.
    static func blob(_ text: String?, _ base64: String?) -> [UInt8]? {
        if let base64 { return Base64.decode(base64) }
        if let text { return Array(text.utf8) }
        return nil
    }
}
