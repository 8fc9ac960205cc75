// The journal writes a change's and a file type's name as literals (JSONWriter.literalString) instead of through a
// String: the bytes must stay exactly what `string` wrote, or older journals and their readers would disagree.
@_spi(Layers) @testable import StoragePolicyFileSystem
@_spi(Layers) @testable import StoragePolicyApply
import Testing
import TreeFixture

@Suite("journal: names written as literals are the bytes a String wrote")
struct JournalLiteralNameTests {
    static let types: [FileType] = [.regular, .directory, .symlink, .fifo, .socket, .characterDevice, .blockDevice, .unknown]

    @Test("every file type's literal name is its raw value, and writes the same record bytes")
    func fileTypes() {
        for type in Self.types {
            #expect(type.literalName.description == type.rawValue)
            var a = JSONWriter(), b = JSONWriter()
            a.literalString("entryType", type.literalName)
            b.string("entryType", type.rawValue)
            #expect(a.finished == b.finished, "\(type)")
        }
    }

    @Test("an unlink intent's record: change and entry type as a String-written record has them")
    func unlinkRecord() {
        let change = Change.unlink(path: RelativePath("tmp/a b/c.dat")!, type: .regular)
        #expect(change.name == "unlink")
        let intent = Intent(op: 7, action: 3, change: change,
                            identity: EntryIdentity(device: 2049, inode: 12, size: 0, modificationTimeNs: 1_700_000_000_123_456_789))
        var w = JSONWriter()
        intent.encode(into: &w)
        let text = String(decoding: w.finished, as: UTF8.self)
        #expect(text == #"{"op":7,"action":3,"change":"unlink","path":"tmp/a b/c.dat","entryType":"file","dev":2049,"ino":12,"size":0,"mtimeNs":1700000000123456789}"#)
    }

    /// The record as the general path writes it, field by field (what the joined literals must reproduce).
    static func fieldByField(_ intent: Intent) -> [UInt8] {
        guard case .unlink(let path, let type) = intent.change, let identity = intent.identity else { return [] }
        var w = Transaction.header(id: "20261205T171146Z-d24a7f72", sequence: 42, type: .intent)
        w.int("op", intent.op)
        w.int("action", intent.action)
        w.string("change", "unlink")
        w.path("path", path)
        w.string("entryType", type.rawValue)
        w.int("dev", identity.device)
        w.int("ino", identity.inode)
        w.int("size", identity.size)
        w.int("mtimeNs", identity.modificationTimeNs)
        return w.finished
    }

    @Test("a file delete's record, written from joined literals, is the field-by-field bytes for any path and number")
    func unlinkFastPath() {
        let paths: [[UInt8]] = [
            Array("a".utf8), Array("tmp/a b/c.dat".utf8), Array("exactly8/12345678".utf8),
            Array("q\"uote/back\\slash".utf8), [0x6E, 0x0A, 0x6C], [0x64, 0x2F, 0xC3, 0x28], Array("é/日本".utf8),
            [0x61, 0x7F, 0x62], Array(repeating: 0x78, count: 255), [0x61, 0x09, 0x2F, 0x01, 0x1F, 0x20, 0x7E],
        ]
        let identities = [
            EntryIdentity(device: 0, inode: 0, size: 0, modificationTimeNs: 0),
            EntryIdentity(device: .max, inode: .max, size: .max, modificationTimeNs: .max),
            EntryIdentity(device: 65024, inode: 16_263_544, size: -1, modificationTimeNs: .min),
            EntryIdentity(device: 9, inode: 99, size: 100, modificationTimeNs: -1_000_000_001),
        ]
        for bytes in paths {
            let path = RelativePath(bytes)!
            for type in Self.types {
                for identity in identities {
                    let intent = Intent(op: 1_000_000, action: 0, change: .unlink(path: path, type: type), identity: identity)
                    var w = Transaction.header(id: "20261205T171146Z-d24a7f72", sequence: 42, type: .intent)
                    intent.encode(into: &w)
                    #expect(w.finished == Self.fieldByField(intent), "\(bytes) \(type) \(identity)")
                }
            }
        }
    }

    @Test("a path is plain exactly when every byte is printable ASCII other than quote and backslash")
    func plainPaths() {
        for b in 0...255 {
            for at in [0, 3, 7, 8, 12] {
                var bytes = Array(repeating: UInt8(0x61), count: 13)
                bytes[at] = UInt8(b)
                let plain = b >= 0x20 && b < 0x7F && b != 0x22 && b != 0x5C
                #expect(bytes.withUnsafeBufferPointer(JSONWriter.isPlain) == plain, "byte \(b) at \(at)")
            }
        }
        #expect([UInt8]().withUnsafeBufferPointer(JSONWriter.isPlain))
    }

    @Test("every record's header, written from joined literals, is the field-by-field bytes", arguments: [
        JournalRecord.Kind.begin, .intent, .skip, .commit, .rollback, .undone, .kept, .end,
    ])
    func headers(kind: JournalRecord.Kind) {
        for sequence in [0, 1, 9, 10, 99_999, Int.max] {
            let id = "20261205T171146Z-d24a7f72"
            var w = JSONWriter()
            Transaction.header(idBytes: Array(id.utf8), sequence: sequence, type: kind, into: &w)
            w.int("op", 3)
            var expected = Transaction.header(id: id, sequence: sequence, type: kind)
            expected.int("op", 3)
            #expect(w.finished == expected.finished, "\(kind) \(sequence)")
        }
    }
}
