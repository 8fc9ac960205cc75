// The walk's allocation-free glob matcher must agree with Glob everywhere; trashinfo dates and trash
// stamps parse in every form the specs and implementations write, and nothing else.
import Testing
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyModel
@testable import StoragePolicyEvaluation
import TreeFixture

@Suite("Matcher and dates") struct MatcherAndDateTests {
    static let patterns = ["*.tmp", "**/*.tmp", "a/**", "a/**/b", "**", "?.txt", "[abc].txt", "[!abc].txt", "*.{jpg,png}",
                           "{a,b/c}/*.db", "**/*.sqlite{,-wal}", "*", "é*", "?", "**/x/**", "*a*b*c*", "Library/Caches/**/*.db",
                           "a/*/c", "**/node_modules", "[a-z]*.log", "a\\*b"]
    static let paths = ["a.tmp", "d/a.tmp", "x/y/z/a.tmp", "a", "a/b", "a/b/c", "a/x/y/b", "a.txt", "ab.txt", "b.txt", "p.png",
                        "b/c/x.db", "u/Notes.sqlite-wal", ".hidden", "été", "é", "x", "a/b/x/c", "xxaxxbxxcxx",
                        "Library/Caches/t/x.db", "a/b/c/d", "p/node_modules", "x1.log", "a*b", "axb"]

    @Test("PathMatcher agrees with Glob.matches and couldMatchBelow", arguments: patterns)
    func agrees(pattern: String) throws {
        let glob = try Glob(pattern)
        let matcher = PathMatcher(glob)
        var all = Self.paths.map { Array($0.utf8) }
        all.append([0x64, 0x2F, 0xFF, 0xFE, 0x2E, 0x74, 0x6D, 0x70])  // d/\xff\xfe.tmp
        all.append([0xC3, 0x28, 0x2E, 0x74, 0x6D, 0x70])  // invalid 2-byte sequence
        for bytes in all {
            let p = RelativePath(bytes)!
            let components = p.bytes.split(separator: 0x2F, omittingEmptySubsequences: false)
            let directory = components.dropLast()
            let name = components.last!
            #expect(matcher.matches(directory, name) == glob.matches(p), "\(pattern) vs \(p.escaped)")
            #expect(matcher.couldMatchBelow(directory, name) == glob.couldMatchBelow(p), "below: \(pattern) vs \(p.escaped)")
        }
    }

    static func local(_ y: Int32, _ mo: Int32, _ d: Int32, _ h: Int32, _ mi: Int32, _ s: Int32) -> Int64 {
        var t = tm()
        t.tm_year = y - 1900; t.tm_mon = mo - 1; t.tm_mday = d; t.tm_hour = h; t.tm_min = mi; t.tm_sec = s; t.tm_isdst = -1
        return Int64(mktime(&t)) * 1_000_000_000
    }

    @Test("DeletionDate: local time, with fractions and zones too")
    func deletionDates() {
        func parse(_ date: String) -> Int64? {
            TrashDates.deletionDate(fromTrashInfo: Array("[Trash Info]\nPath=x\nDeletionDate=\(date)\n".utf8))
        }
        #expect(parse("2004-08-31T22:32:08") == Self.local(2004, 8, 31, 22, 32, 8))
        #expect(parse("2004-08-31T22:32:08.5") == Self.local(2004, 8, 31, 22, 32, 8) + 500_000_000)
        #expect(parse("2004-08-31T22:32:08Z") == Int64(1_093_991_528) * 1_000_000_000)
        #expect(parse("2004-08-31T22:32:08.250+02:00") == Int64(1_093_991_528 - 7200) * 1_000_000_000 + 250_000_000)
        #expect(parse("2004-08-31T22:32:08-0130") == Int64(1_093_991_528 + 5400) * 1_000_000_000)
        for bad in ["yesterday", "2004-08-31 22:32:08", "2004-13-01T00:00:00", "2004-08-31T22:32", "2004-08-31T22:32:08x", ""] {
            #expect(parse(bad) == nil, "\(bad)")
        }
        // Only inside the [Trash Info] group.
        #expect(TrashDates.deletionDate(fromTrashInfo: Array("[Other]\nDeletionDate=2004-08-31T22:32:08\n".utf8)) == nil)
        #expect(TrashDates.deletionDate(fromTrashInfo: Array("[Trash Info]\r\nDeletionDate=2004-08-31T22:32:08Z\r\n".utf8)) == Int64(1_093_991_528) * 1_000_000_000)
    }

    @Test("trash stamps are decimal seconds", arguments: [
        ("1700000000", Int64(1_700_000_000_000_000_000)), ("1700000000.5", 1_700_000_000_500_000_000),
        ("1700000000\n", 1_700_000_000_000_000_000),
    ])
    func stamps(text: String, expected: Int64) {
        #expect(TrashDates.stamp(Array(text.utf8)) == expected)
    }

    @Test("anything else is not a stamp", arguments: ["", "soon", "-5", "1.2.3", "12a", "99999999999999999999"])
    func badStamps(text: String) {
        #expect(TrashDates.stamp(Array(text.utf8)) == nil)
    }
}
