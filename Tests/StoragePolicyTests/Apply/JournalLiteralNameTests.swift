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
}
