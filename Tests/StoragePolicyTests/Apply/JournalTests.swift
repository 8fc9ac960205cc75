// The journal's format: checksums, framing, torn and corrupt lines, JSON escaping, intents read back exactly.
// Pure byte-level tests; nothing here touches the disk.
import Foundation
import Testing
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyApply

@Suite("Journal format")
struct JournalTests {
    @Test("the record checksum is zlib's CRC-32, as 8 hex digits (what python3's zlib.crc32 prints)",
          arguments: [(0, "00000000"), (1, "4c667a2e"), (3, "3f66f9ac"), (7, "3e483922"), (8, "a7560428"), (9, "ca12fefe"),
                      (15, "8f77fabb"), (16, "0636a895"), (17, "71b8d951"), (63, "794b269d"), (64, "84c86088"),
                      (65, "34e57bec"), (1000, "8902161e")])
    func checksum(length: Int, expected: String) {
        let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        #expect(JournalChecksum.crc(bytes) == expected)
        // The same from a slice that does not start at index 0 (how appendFrame and the reader see a body).
        let padded = [0xAA, 0xBB, 0xCC] + bytes
        #expect(JournalChecksum.crc(padded[3...]) == expected)
    }

    @Test("the checksum of '123456789' is CRC-32's check value")
    func checksumVector() {
        #expect(JournalChecksum.crc(Array("123456789".utf8)) == "cbf43926")
        #expect(JournalChecksum.crc(Array("abc".utf8)) == "352441c2")
        // The older frame's checksum: the FIPS 180 vector's prefix.
        #expect(JournalChecksum.prefix(Array("abc".utf8)) == "ba7816bf8f01cfea")
    }

    @Test("a record in the older SHA-256 frame still reads back; a wrong digit in it is a bad checksum")
    func legacyFrame() {
        let body = #"{"tx":"t1","seq":1,"type":"begin"}"#
        let good = Array((#"{"sum":""# + JournalChecksum.prefix(Array(body.utf8)) + #"","rec":"# + body + "}\n").utf8)
        var seen: [JournalRecord] = []
        let scan = Journal.scan(good) { r, _ in seen.append(r) }
        #expect(seen.map(\.kind) == [.begin])
        #expect(!scan.tornTail)
        var bad = good
        bad[9] = bad[9] == 0x30 ? 0x31 : 0x30
        seen = []
        let badScan = Journal.scan(bad) { r, _ in seen.append(r) }
        #expect(seen.isEmpty)
        #expect(badScan.tornTail)
    }

    @Test("the journal's in-place framing writes the same bytes as frame()")
    func appendFrameMatches() {
        var w = JSONWriter()
        w.string("tx", "t1")
        w.int("seq", 7)
        w.string("type", "intent")
        w.path("path", RelativePath(Array("a/\u{e9}t\u{e9}".utf8))!)
        var out = JSONWriter(capacity: 16)
        out.literal("junk before\n")
        JournalRecord.appendFrame(to: &out) { $0.append(finished: w) }
        #expect(Array(out.bytes.dropFirst(12)) == JournalRecord.frame(w.finished))
        // A record written field by field into the buffer frames the same bytes.
        out.removeAll()
        JournalRecord.appendFrame(to: &out) { f in
            f.beginObject()
            f.string("tx", "t1")
            f.int("seq", 7)
            f.string("type", "intent")
            f.path("path", RelativePath(Array("a/\u{e9}t\u{e9}".utf8))!)
            f.byte(0x7D)
        }
        #expect(out.bytes == JournalRecord.frame(w.finished))
    }

    private func line(_ type: String, tx: String = "t1", seq: Int, extra: (inout JSONWriter) -> Void = { _ in }) -> [UInt8] {
        var w = JSONWriter()
        w.string("tx", tx)
        w.int("seq", seq)
        w.string("type", type)
        extra(&w)
        return JournalRecord.frame(w.finished)
    }

    @Test("a framed line reads back; the checksum covers exactly the record body")
    func frame() throws {
        let framed = line("begin", seq: 1)
        let text = String(decoding: framed, as: UTF8.self)
        #expect(text.hasPrefix(#"{"crc":""#))
        #expect(text.hasSuffix("}}\n"))
        let body = #"{"tx":"t1","seq":1,"type":"begin"}"#
        #expect(text == #"{"crc":""# + JournalChecksum.crc(Array(body.utf8)) + #"","rec":"# + body + "}\n")
        var seen: [JournalRecord] = []
        let scan = Journal.scan(framed) { r, _ in seen.append(r) }
        #expect(seen.count == 1)
        #expect(seen.first?.kind == .begin)
        #expect(!scan.tornTail)
        #expect(scan.validLength == Int64(framed.count))
    }

    @Test("a torn last line (no newline) is ignored and reported; the valid length stops before it")
    func tornTail() {
        let good = line("begin", seq: 1) + line("intent", seq: 2)
        let torn = Array(line("intent", seq: 3).dropLast(9))
        var count = 0
        let scan = Journal.scan(good + torn) { _, _ in count += 1 }
        #expect(count == 2)
        #expect(scan.tornTail)
        #expect(scan.validLength == Int64(good.count))
        #expect(scan.corruptLines.isEmpty)
    }

    @Test("a complete last line with a wrong checksum is a torn tail too")
    func corruptLastLine() {
        let good = line("begin", seq: 1)
        var bad = line("end", seq: 2)
        bad[40] ^= 0x01
        var count = 0
        let scan = Journal.scan(good + bad) { _, _ in count += 1 }
        #expect(count == 1)
        #expect(scan.tornTail)
        #expect(scan.validLength == Int64(good.count))
    }

    @Test("a damaged line in the middle is skipped and reported by number; later records still count")
    func corruptMiddleLine() {
        var bad = line("intent", seq: 2)
        bad[bad.count - 5] = 0x20
        let all = line("begin", seq: 1) + bad + line("end", seq: 3)
        var seqs: [Int] = []
        let scan = Journal.scan(all) { r, _ in seqs.append(r.body.seq) }
        #expect(seqs == [1, 3])
        #expect(scan.corruptLines == [2])
        #expect(!scan.tornTail)
    }

    @Test("an unknown record type is treated as damage, never guessed at")
    func unknownType() {
        var seen = 0
        let scan = Journal.scan(line("begin", seq: 1) + line("frobnicate", seq: 2) + line("end", seq: 3)) { _, _ in seen += 1 }
        #expect(seen == 2)
        #expect(scan.corruptLines == [2])
    }

    @Test("JSON strings escape quotes, backslashes and control characters and decode back exactly")
    func escaping() throws {
        let tricky = "a\"b\\c\nd\te\u{01}f\u{7F}g é ✓"
        var w = JSONWriter()
        w.string("s", tricky)
        let decoded = try JSONDecoder().decode([String: String].self, from: Data(w.finished))
        #expect(decoded["s"] == tricky)
    }

    @Test("integers are written digit by digit exactly as String(value) spells them, the extremes included")
    func integers() {
        let values: [Int64] = [0, 1, -1, 9, 10, -10, 1_000_000_007, Int64.max, Int64.min]
        for value in values {
            var w = JSONWriter()
            w.int("n", value)
            #expect(String(decoding: w.finished, as: UTF8.self) == "{\"n\":\(value)}")
        }
        var w = JSONWriter()
        w.int("u", UInt64.max)
        w.integers("list", [3, -20, 0])
        #expect(String(decoding: w.finished, as: UTF8.self) == "{\"u\":18446744073709551615,\"list\":[3,-20,0]}")
    }

    @Test("paths that are not UTF-8 also go out as base64 and come back byte for byte")
    func nonUTF8Path() throws {
        let path = RelativePath([0x74, 0x6D, 0x70, 0x2F, 0xFF, 0x0A, 0x41])!
        var w = JSONWriter()
        w.string("tx", "t")
        w.int("seq", 1)
        w.string("type", "skip")
        w.path("path", path)
        let body = try JSONDecoder().decode(RecordBody.self, from: Data(w.finished))
        #expect(body.pathBase64 != nil)
        #expect(RecordBody.path(body.path, body.pathBase64) == path)
    }

    @Test("every kind of intent survives the journal exactly", arguments: [
        Change.stage(path: RelativePath("tmp/a b")!, name: FileName("17")!),
        Change.rename(from: RelativePath("docs/UP.TXT")!, to: RelativePath([0x64, 0x2F, 0xC3, 0x28])!),
        Change.mkdir(path: RelativePath("Library/Caches")!),
        Change.setxattr(path: RelativePath("lib")!, attribute: "user.x", value: [0xFF, 0x00, 0x01], previous: nil),
        Change.setxattr(path: .root, attribute: "user.y", value: nil, previous: Array("old".utf8)),
        Change.create(path: RelativePath("c/CACHEDIR.TAG")!, temp: FileName(".t.tmp")!, contents: Array("Signature: x\n".utf8)),
    ])
    func intentRoundTrip(change: Change) throws {
        let identity = EntryIdentity(device: 66305, inode: 1 << 40, size: 12, modificationTimeNs: 1_795_960_114_366_655_189)
        let intent = Intent(op: 7, action: 3, change: change, identity: identity)
        var w = Transaction.header(id: "tx", sequence: 9, type: .intent)
        intent.encode(into: &w)
        var decoded: Intent?
        _ = Journal.scan(JournalRecord.frame(w.finished)) { r, _ in decoded = Intent(r.body) }
        #expect(decoded == intent)
    }
}
