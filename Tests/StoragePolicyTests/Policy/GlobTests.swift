import Testing
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyModel

@Suite("Glob") struct GlobTests {
    static func path(_ s: String) -> RelativePath { RelativePath(s)! }

    @Test("matches as a path glob", arguments: [
        ("*.tmp", "a.tmp", true), ("*.tmp", "d/a.tmp", false), ("**/*.tmp", "a.tmp", true),
        ("**/*.tmp", "x/y/z/a.tmp", true), ("**/*.tmp", "x/y/a.tmpx", false), ("a/**", "a/b/c", true),
        ("a/**", "a", true), ("a/**/b", "a/b", true), ("a/**/b", "a/x/y/b", true), ("a/**/b", "a/x/y/c", false),
        ("**", "anything/at/all", true), ("?.txt", "a.txt", true), ("?.txt", "ab.txt", false),
        ("[abc].txt", "b.txt", true), ("[!abc].txt", "b.txt", false), ("[a-z]*.log", "x1.log", true),
        ("[a-z]*.log", "X1.log", false), ("*.{jpg,png}", "p.png", true), ("*.{jpg,png}", "p.gif", false),
        ("{a,b/c}/*.db", "b/c/x.db", true), ("**/*.sqlite{,-wal}", "u/Notes.sqlite-wal", true),
        ("*", ".hidden", true), ("é*", "été", true), ("?", "é", true), ("a\\*b", "a*b", true), ("a\\*b", "axb", false),
        ("**/x/**", "x", true), ("**/x/**", "a/b/x/c", true), ("*a*b*c*", "xxaxxbxxcxx", true), ("*a*b*c*", "xxaxxcxxbxx", false),
    ])
    func table(pattern: String, path: String, expected: Bool) throws {
        #expect(try Glob(pattern).matches(Self.path(path)) == expected)
    }

    @Test("matches names that are not UTF-8 byte for byte") func nonUTF8() throws {
        let name = RelativePath([0x64, 0x2F, 0xFF, 0xFE, 0x2E, 0x74, 0x6D, 0x70])!  // d/\xff\xfe.tmp
        #expect(try Glob("**/*.tmp").matches(name))
        #expect(try Glob("d/??.tmp").matches(name))
        #expect(try Glob("d/[!a]?.*").matches(name))
        #expect(try !Glob("d/?.tmp").matches(name))
    }

    @Test("rejects malformed patterns", arguments: ["", "/abs/*", "a/../b", "[abc", "{a,b", "a//b", "[z-a]"])
    func malformed(pattern: String) {
        #expect(throws: Glob.SyntaxError.self) { try Glob(pattern) }
    }

    @Test("knows which subtrees can still match") func prefixes() throws {
        let g = try Glob("Library/Caches/**/*.db")
        #expect(g.couldMatchBelow(Self.path("Library")))
        #expect(g.couldMatchBelow(Self.path("Library/Caches/x")))
        #expect(!g.couldMatchBelow(Self.path("Documents")))
    }

    @Test("many stars stay fast") func pathological() throws {
        let g = try Glob("**/a/**/a/**/a/**/a/**/b")
        let long = RelativePath(Array(repeating: "a", count: 60).joined(separator: "/"))!
        #expect(!g.matches(long))
        let star = try Glob("*a*a*a*a*a*a*a*b")
        #expect(!star.matches(RelativePath(String(repeating: "a", count: 200))!))
    }
}

@Suite("Glob disjointness") struct GlobDisjointnessTests {
    @Test("globs whose matches must end differently are disjoint", arguments: [
        ("**/*.txt", "**/*.tmp", true), ("**/*.[tT][xX][tT]", "**/*.tmp", true), ("**/*.txt", "**/*.[tT][xX][tT]", false),
        ("*.db", "**/*", false), ("a/*.jpg", "*.{png,jpg}", false), ("*.{png,gif}", "*.jpg", true), ("*.md", "*.[!m]d", true),
    ])
    func disjoint(a: String, b: String, expected: Bool) throws {
        #expect(try Glob(a).isDisjoint(from: Glob(b)) == expected)
        #expect(try Glob(b).isDisjoint(from: Glob(a)) == expected)
    }
}
