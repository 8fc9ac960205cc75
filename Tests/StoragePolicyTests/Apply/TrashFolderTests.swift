// Trash conventions as pure values: Finder-style unique names, FreeDesktop .trashinfo text and its
// percent-encoding, wall-clock formats. No disk involved.
import Testing
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem

@Suite("Trash conventions")
struct TrashFolderTests {
    private func unique(_ name: String, taken: Set<String>, directory: Bool = false, max: Int = 255) -> String {
        let result = TrashFolder.uniqueName(for: FileName(name)!, isDirectory: directory, maxLength: max) {
            taken.contains(String(decoding: $0.bytes, as: UTF8.self))
        }
        return String(decoding: result.bytes, as: UTF8.self)
    }

    @Test("a free name is kept; a taken one gets ' (2)', ' (3)' before the extension", arguments: [
        ("report.pdf", [], "report.pdf"),
        ("report.pdf", ["report.pdf"], "report (2).pdf"),
        ("report.pdf", ["report.pdf", "report (2).pdf"], "report (3).pdf"),
        ("archive.tar.gz", ["archive.tar.gz"], "archive.tar (2).gz"),
        (".bashrc", [".bashrc"], ".bashrc (2)"),
        ("noext", ["noext"], "noext (2)"),
        ("trailing.", ["trailing."], "trailing. (2)"),
    ] as [(String, [String], String)])
    func finderNames(name: String, taken: [String], expected: String) {
        #expect(unique(name, taken: Set(taken)) == expected)
    }

    @Test("directories keep their dots: the counter goes at the end")
    func directoryNames() {
        #expect(unique("my.folder", taken: ["my.folder"], directory: true) == "my.folder (2)")
    }

    @Test("a long name is shortened to fit, never splitting a UTF-8 character")
    func longNames() {
        let long = String(repeating: "é", count: 120) + ".txt"  // 244 bytes
        let result = unique(long, taken: [long], max: 245)
        #expect(result.utf8.count <= 245)
        #expect(result.hasSuffix(" (2).txt"))
        #expect(String(validating: Array(result.utf8), as: UTF8.self) != nil)
    }

    @Test("a .trashinfo has the header, the percent-encoded absolute path and a local DeletionDate")
    func trashInfo() {
        let info = TrashFolder.trashInfo(absolutePath: Array("/home/u/My Docs/ça%.txt".utf8), deletedAt: 0)
        let text = String(decoding: info, as: UTF8.self)
        let lines = text.split(separator: "\n")
        #expect(lines.count == 3)
        #expect(lines[0] == "[Trash Info]")
        #expect(lines[1] == "Path=/home/u/My%20Docs/%C3%A7a%25.txt")
        #expect(lines[2].hasPrefix("DeletionDate=19"))
        #expect(lines[2].count == "DeletionDate=1970-01-01T00:00:00".count)
        #expect(TrashFolder.originalPath(inTrashInfo: info) == Array("/home/u/My Docs/ça%.txt".utf8))
    }

    @Test("percent-decoding is the inverse of encoding for any bytes")
    func percentRoundTrip() {
        let bytes: [UInt8] = Array(0...255)
        #expect(TrashFolder.percentDecoded(TrashFolder.percentEncoded(bytes)) == bytes)
    }

    @Test("a .trashinfo without the header or the key gives no path")
    func malformedTrashInfo() {
        #expect(TrashFolder.originalPath(inTrashInfo: Array("Path=/x\n".utf8)) == nil)
        #expect(TrashFolder.originalPath(inTrashInfo: Array("[Trash Info]\nDeletionDate=2020-01-01T00:00:00\n".utf8)) == nil)
        #expect(TrashFolder.originalPath(inTrashInfo: Array("[Trash Info]\r\nPath=/a%2Fb\r\n".utf8)) == Array("/a/b".utf8))
    }

    @Test("wall-clock formats: RFC 3339 UTC round-trips, compact ids sort like time")
    func wallClock() {
        let ns: Int64 = 1_795_960_114_000_000_000
        let text = WallClock.rfc3339(ns: ns)
        #expect(text == "2026-11-29T13:48:34Z")
        #expect(WallClock.parseRFC3339(text) == ns)
        #expect(WallClock.parseRFC3339("2026-11-29T13:48:34.250Z") == ns)
        #expect(WallClock.parseRFC3339("yesterday") == nil)
        #expect(WallClock.compactUTC(ns: ns) == "20261129T134834Z")
    }

    @Test("directorysizes: good lines parse (the name percent-decoded), broken ones are ignored, the last of a name counts, rendering round-trips")
    func directorySizes() {
        let text = "150 1700000000 album\n12 5 my%20dir\r\nbroken\n-1 5 neg\n1 2\n9 x name\n1 2 a/b\n1 2 ..\n1 2 %2E\n"
            + "99999999999999999999 1 huge\n3 4 album\n"
        let parsed = TrashFolder.parseDirectorySizes(Array(text.utf8))
        #expect(parsed == [FileName("album")!: TrashDirectorySize(size: 3, infoModificationSeconds: 4),
                           FileName("my dir")!: TrashDirectorySize(size: 12, infoModificationSeconds: 5)])
        let rendered = TrashFolder.renderDirectorySizes(parsed)
        #expect(String(decoding: rendered, as: UTF8.self) == "3 4 album\n12 5 my%20dir\n")
        #expect(TrashFolder.parseDirectorySizes(rendered) == parsed)
        #expect(TrashFolder.parseDirectorySizes([]) == [:])
    }
}

