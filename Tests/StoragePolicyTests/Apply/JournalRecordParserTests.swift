// The journal's own record reader (JournalRecordParser) against JSONDecoder, which it replaced: every record
// the engine writes reads the same through both; mutations of them are either refused or read as JSONDecoder
// reads them; the quarantine's records (journal format 2) round-trip; hostile bodies never trap.
import Foundation
import Testing
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyApply

@Suite("Journal record parser") struct JournalRecordParserTests {
    /// Bodies as the engine writes them: a header and every kind of intent, with odd paths and values.
    static func samples() -> [[UInt8]] {
        let paths = ["tmp/a.dat", "docs/Réadme \"quoted\"\\back", "a\nb\tc", "x/\u{7F}/\u{1F600}"].map { RelativePath($0)! }
            + [RelativePath([0x66, 0xFF, 0x2F, 0x67])!]
        let id = EntryIdentity(device: UInt64.max - 3, inode: 1 << 62, size: 4096, modificationTimeNs: -1_234_567_890_123)
        let slot = QuarantineSlot(transaction: "20261207T112822Z-f11fc1d4", until: "20261214T112822Z", name: FileName("17")!)
        let folder = FolderIdentity(device: 2049, inode: 131_073)
        var changes: [(Change, EntryIdentity?)] = []
        for p in paths {
            changes += [
                (.unlink(path: p, type: .regular), id),
                (.stage(path: p, name: FileName("3")!), id),
                (.rename(from: p, to: p.appending(FileName("z")!)), id),
                (.mkdir(path: p), nil),
                (.setxattr(path: p, attribute: "user.xdg.robots.backup", value: [0, 1, 0xFF], previous: nil), id),
                (.create(path: p, temp: FileName(".policyctl-tx-1.tmp")!, contents: Array("[Trash Info]\nPath=\(p.string)\n".utf8)), nil),
                (.times(path: p, accessNs: 1, modificationNs: -2, previousAccessNs: Int64.max, previousModificationNs: Int64.min), id),
                (.permissions(path: p, set: Permissions(mode: 0o750, owner: 0, group: 12345), previous: Permissions(mode: 0o755, owner: 1, group: 2)), id),
                (.symlink(path: p, target: [0x2E, 0x2E, 0xFE]), nil),
                (.quarantine(path: p, slot: slot, type: .directory,
                             parent: FolderRecord(identity: folder, mode: 0o1777, owner: 12345, group: 0), bytes: 1 << 40), id),
                (.quarantine(path: p, slot: slot, type: .regular, parent: nil, bytes: 0), id),
                (.unquarantine(slot: slot, folder: folder, to: p), id),
            ]
        }
        changes.append((.purge(transaction: slot.transaction, until: slot.until, folder: folder), nil))
        var out: [[UInt8]] = []
        for (n, (change, identity)) in changes.enumerated() {
            var w = Transaction.header(id: "20261207T112822Z-f11fc1d4", sequence: n + 1, type: .intent)
            Intent(op: n + 1, action: n % 7 - 1, change: change, identity: identity).encode(into: &w)
            out.append(w.finished)
        }
        var begin = Transaction.header(id: "20261207T112822Z-f11fc1d4", sequence: 1, type: .begin)
        begin.string("time", "2026-12-07T11:28:22Z")
        begin.int("format", 2)
        begin.string("quarantine", ".policyctl/quarantine/20261207T112822Z-f11fc1d4")
        out.append(begin.finished)
        var commit = Transaction.header(id: "20261207T112822Z-f11fc1d4", sequence: 9, type: .commit)
        var counts = JSONWriter()
        counts.int(named: "delete", 3)
        counts.int(named: "purge", 0)
        commit.object("counts", counts)
        commit.int("quarantineDev", UInt64.max)
        commit.int("quarantined", 3)
        out.append(commit.finished)
        var undone = Transaction.header(id: "tx", sequence: 4, type: .undone)
        undone.integers("ops", [1, 2, 3])
        out.append(undone.finished)
        return out
    }

    @Test("every record the engine writes reads the same as JSONDecoder reads it")
    func sameAsDecoder() throws {
        for body in Self.samples() {
            let decoded = try JSONDecoder().decode(RecordBody.self, from: Data(body))
            let parsed = RecordBody.parse(body[...])
            #expect(parsed == decoded, "\(String(decoding: body, as: UTF8.self))")
        }
    }

    @Test("a quarantine's intents round-trip through the record (journal format 2)")
    func quarantineIntents() throws {
        for body in Self.samples() {
            let b = try #require(RecordBody.parse(body[...]))
            guard b.type == "intent", let change = b.change, ["quarantine", "unquarantine", "purge"].contains(change) else { continue }
            let intent = try #require(Intent(b))
            var w = Transaction.header(id: b.tx, sequence: b.seq, type: .intent)
            intent.encode(into: &w)
            #expect(w.finished == body)
            #expect(intent.refusal == nil, "\(change)")
        }
    }

    @Test("forged quarantine records are refused: a slot the engine never names, no identity, a purge of no window",
          arguments: [
              #"{"tx":"t1","seq":2,"type":"intent","op":1,"action":0,"change":"quarantine","path":"a","stage":"../x","until":"20261214T112822Z","entryType":"file","bytes":1,"dev":1,"ino":2,"size":3,"mtimeNs":4}"#,
              #"{"tx":"t1","seq":2,"type":"intent","op":1,"action":0,"change":"quarantine","path":"a","stage":"1","until":"../..","entryType":"file","bytes":1,"dev":1,"ino":2,"size":3,"mtimeNs":4}"#,
              #"{"tx":"t1","seq":2,"type":"intent","op":1,"action":0,"change":"quarantine","path":"a","stage":"1","until":"20261214T112822Z","entryType":"file","bytes":1}"#,
              #"{"tx":"t1","seq":2,"type":"intent","op":1,"action":0,"change":"quarantine","path":".policyctl/journal.jsonl","stage":"1","until":"20261214T112822Z","entryType":"file","bytes":1,"dev":1,"ino":2,"size":3,"mtimeNs":4}"#,
              #"{"tx":"t1","seq":2,"type":"intent","op":1,"action":0,"change":"unquarantine","path":"a","quarantine":"t0/../x","until":"20261214T112822Z","stage":"1","quarantineDev":1,"quarantineIno":2,"dev":1,"ino":2,"size":3,"mtimeNs":4}"#,
              #"{"tx":"t1","seq":2,"type":"intent","op":1,"action":0,"change":"unquarantine","path":"a","quarantine":"t0","until":"20261214T112822Z","stage":"1","quarantineDev":1,"quarantineIno":2}"#,
              #"{"tx":"t1","seq":2,"type":"intent","op":1,"action":0,"change":"purge","quarantine":"t0","until":"*","quarantineDev":1,"quarantineIno":2}"#,
          ])
    func forgedQuarantine(_ text: String) throws {
        let body = try #require(RecordBody.parse(Array(text.utf8)[...]))
        // Either unreadable as an intent (a missing field) or refused before it is replayed.
        if let intent = Intent(body) { #expect(intent.refusal != nil, "\(text)") }
    }

    @Test("a mutated record is refused, or read exactly as JSONDecoder reads it; nothing traps")
    func mutations() throws {
        var rng = SplitMix(seed: 0x5EED_50)
        let alphabet: [UInt8] = Array("{}[]\",:\\0123456789-+.eEtrufalsn \nu\u{7F}".utf8) + [0xC3, 0xFF, 0x00]
        var accepted = 0
        for body in Self.samples() {
            for _ in 0..<300 {
                var m = body
                for _ in 0..<(1 + Int(rng.next() % 3)) {
                    let at = Int(rng.next() % UInt64(m.count))
                    switch rng.next() % 3 {
                    case 0: m[at] = alphabet[Int(rng.next() % UInt64(alphabet.count))]
                    case 1: m.remove(at: at)
                    default: m.insert(alphabet[Int(rng.next() % UInt64(alphabet.count))], at: at)
                    }
                    if m.isEmpty { break }
                }
                guard let parsed = RecordBody.parse(m[...]) else { continue }
                accepted += 1
                let decoded = try? JSONDecoder().decode(RecordBody.self, from: Data(m))
                #expect(decoded == parsed, "\(String(decoding: m, as: UTF8.self))")
            }
        }
        #expect(accepted > 100)
    }

    @Test("strict where the writer is: fractions, exponents, lone surrogates, trailing bytes and missing headers are refused",
          arguments: [
              #"{"tx":"a","seq":1.0,"type":"end"}"#, #"{"tx":"a","seq":1e2,"type":"end"}"#, #"{"tx":"a","seq":01,"type":"end"}"#,
              #"{"tx":"a","seq":1,"type":"end"} x"#, #"{"tx":"a","type":"end"}"#, #"{"tx":"\ud800","seq":1,"type":"end"}"#,
              #"{"tx":"a","seq":99999999999999999999,"type":"end"}"#, #"{"tx":"a","seq":1,"type":"end","dev":-1}"#,
              #"{"tx":"a","seq":1,"type":"end","x":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}"#,
              "{\"tx\":\"a\u{1}\",\"seq\":1,\"type\":\"end\"}", #"[1]"#, #""#,
          ])
    func strict(_ text: String) {
        #expect(RecordBody.parse(Array(text.utf8)[...]) == nil)
    }

    @Test("whitespace, unknown keys, nulls and escapes read as JSON reads them")
    func liberal() throws {
        let text = " { \"tx\" : \"a\\u0062\" , \"seq\" : 2 , \"type\" : \"skip\" , \"unknown\" : {\"k\": [true, false, null, -1.5e3]}, \"reason\" : null , \"path\" : \"\\ud83d\\ude00\\n\" } "
        let parsed = try #require(RecordBody.parse(Array(text.utf8)[...]))
        #expect(parsed.tx == "ab" && parsed.seq == 2 && parsed.reason == nil && parsed.path == "\u{1F600}\n")
        #expect(parsed == (try JSONDecoder().decode(RecordBody.self, from: Data(text.utf8))))
    }
}

/// SplitMix64: a fixed sequence from a seed.
private struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
