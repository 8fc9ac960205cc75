import Testing
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem

@Suite("RelativePath") struct RelativePathTests {
    @Test("normalises slashes and dots", arguments: [("a//b/", "a/b"), ("./a/./b", "a/b"), ("", ""), (".", "")])
    func normalises(input: String, expected: String) {
        #expect(RelativePath(input)?.string == expected)
    }

    @Test("isChild(of:) is exactly `parent == folder`, without building the parent",
          arguments: [("a/b", "a", true), ("a/b/c", "a", false), ("a/b", "", false), ("a", "", true), ("", "", false),
                      ("ab/c", "a", false), ("a", "a", false), ("a/bc", "a/b", false), ("x/y/z", "x/y", true), ("b/c", "a", false)])
    func isChild(path: String, folder: String, expected: Bool) {
        let p = RelativePath(path)!, f = RelativePath(folder)!
        #expect(p.isChild(of: f) == expected)
        #expect(p.isChild(of: f) == (!p.isRoot && p.parent == f))
    }

    @Test("equal paths hash alike, and the hash covers every byte")
    func hashing() {
        #expect(RelativePath("a/b")!.hashValue == RelativePath(Array("a/b".utf8))!.hashValue)
        #expect(Set([RelativePath("a/b")!, RelativePath("a/c")!, RelativePath("a/b")!]).count == 2)
        #expect(Set([FileName("x")!, FileName("y")!, FileName("x")!]).count == 2)
    }

    @Test("refuses paths that could escape the root", arguments: ["/etc", "../x", "a/../../b", "a/.."])
    func refuses(input: String) {
        #expect(RelativePath(input) == nil)
    }

    @Test("escapes control characters and invalid bytes for display") func escaping() {
        let p = RelativePath([0x61, 0x0A, 0x62, 0xFF, 0x5C])!
        #expect(p.escaped == "a\\nb\\xff\\\\")
        #expect(!p.isValidUTF8)
        #expect(Base64.decode(p.base64) == p.bytes)
    }

    @Test("base64 round-trips every length", arguments: 0..<8)
    func base64(length: Int) {
        let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 200) }
        #expect(Base64.decode(Base64.encode(bytes)) == bytes)
    }

    @Test("prefix tests respect component boundaries") func prefix() {
        let p = RelativePath("Documents/UserFiles/a.txt")!
        #expect(p.hasPrefix(RelativePath("Documents")!))
        #expect(!p.hasPrefix(RelativePath("Doc")!))
        #expect(p.relative(to: RelativePath("Documents")!)?.string == "UserFiles/a.txt")
        #expect(p.hasPrefix(.root))
    }
}
