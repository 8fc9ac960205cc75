// One journal line: the framing `{"sum":"<16 hex>","rec":{...}}` with a SHA-256 checksum of the record
// body, and the body's fields. Never trusts a line whose checksum does not match its bytes.
import Foundation

struct JournalRecord: Sendable {
    enum Kind: String, Sendable {
        case begin, intent, skip, commit, rollback, undone, kept, end
    }

    var kind: Kind
    var body: RecordBody

    var transaction: String { body.tx }

    /// The checksum of a record body: the first 16 hex digits of its SHA-256.
    static func checksum(_ body: some Collection<UInt8>) -> String {
        JournalChecksum.prefix(body)
    }

    /// The framed line, newline included.
    static func frame(_ body: [UInt8]) -> [UInt8] {
        var line = Array(#"{"sum":""#.utf8)
        line.append(contentsOf: checksum(body).utf8)
        line.append(contentsOf: #"","rec":"#.utf8)
        line.append(contentsOf: body)
        line.append(contentsOf: [0x7D, 0x0A])
        return line
    }

    private static let prefix = Array(#"{"sum":""#.utf8)
    private static let middle = Array(#"","rec":"#.utf8)
    private static let headerLength = prefix.count + 16 + middle.count

    /// The body of a framed line (without its newline) when the checksum matches; nil otherwise.
    static func verifiedBody(of line: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        guard line.count > headerLength + 2, line.starts(with: prefix), line.last == 0x7D else { return nil }
        let sumStart = line.startIndex + prefix.count
        let sum = line[sumStart..<(sumStart + 16)]
        guard line[(sumStart + 16)..<(line.startIndex + headerLength)].elementsEqual(middle) else { return nil }
        let body = line[(line.startIndex + headerLength)..<(line.endIndex - 1)]
        guard checksum(body).utf8.elementsEqual(sum) else { return nil }
        return body
    }

    /// Decodes a framed line; nil when it is torn, corrupt or not a record this version knows.
    static func decode(line: ArraySlice<UInt8>, using decoder: JSONDecoder) -> JournalRecord? {
        guard let body = verifiedBody(of: line),
              let decoded = try? decoder.decode(RecordBody.self, from: Data(body)),
              let kind = Kind(rawValue: decoded.type) else { return nil }
        return JournalRecord(kind: kind, body: decoded)
    }
}

/// Every field any record may carry; which ones are present depends on `type` (see Docs/journal.md).
struct RecordBody: Decodable, Sendable {
    var tx: String
    var seq: Int
    var type: String
    // begin
    var time: String?
    var timeNs: Int64?
    var kind: String?
    var policy: String?
    var policySHA256: String?
    var policyPath: String?
    var plan: String?
    var root: String?
    var rootDev: UInt64?
    var rootIno: UInt64?
    var actions: Int?
    var tool: String?
    var pid: Int?
    // intent, skip, kept
    var op: Int?
    var action: Int?
    var change: String?
    var path: String?
    var pathBase64: String?
    var to: String?
    var toBase64: String?
    var stage: String?
    var dev: UInt64?
    var ino: UInt64?
    var size: Int64?
    var mtimeNs: Int64?
    var attr: String?
    var value: String?
    var valueBase64: String?
    var previous: String?
    var previousBase64: String?
    var temp: String?
    var contents: String?
    var contentsBase64: String?
    var verb: String?
    var bytes: Int64?
    var rule: String?
    var reason: String?
    // skip, for an error on the entry: its errno name and the call
    var errno: String?
    var call: String?
    // commit
    var counts: [String: Int]?
    var bytesFreed: Int64?
    var skipped: Int?
    // undone
    var ops: [Int]?
    // end
    var outcome: String?
    var kept: Int?

    /// A path written with `JSONWriter.path`: base64 wins when present, so the bytes are exact.
    static func path(_ text: String?, _ base64: String?) -> RelativePath? {
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
