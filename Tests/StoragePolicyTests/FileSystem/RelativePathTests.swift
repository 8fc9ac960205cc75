import Testing
@testable import StoragePolicy

@Suite("RelativePath") struct RelativePathTests {
    @Test("normalises slashes and dots", arguments: [("a//b/", "a/b"), ("./a/./b", "a/b"), ("", ""), (".", "")])
    func normalises(input: String, expected: String) {
        #expect(RelativePath(input)?.string == expected)
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
