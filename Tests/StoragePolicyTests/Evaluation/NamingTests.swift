// Naming rules: lowercase renames with Finder-style free names, case collisions, names that are not UTF-8,
// and patterns that are reported, never fixed. Expected renames are spelled out by hand.
import Testing
@testable import StoragePolicy
@testable import StoragePolicyModel
@testable import StoragePolicyEvaluation
import TreeFixture

@Suite("Naming") struct NamingTests {
    static let lower = Naming(letterCase: .lower)

    @Test("renames to lowercase, picking `name (N).ext` when the target is taken, and reports collisions")
    func lowercase() throws {
        let tree = try Tree {
            Dir("Docs") {
                File("Notes.txt")
                File("Report.TXT")
                File("report.txt")
                File("Photo.JPG")
                File("photo.jpg")
                File("photo (2).jpg")
                File("DATA.csv")
                File("Data.csv")
                File("ÉTÉ.txt")
                File("archive.tar.GZ")
                File(".Hidden")
                File("already_fine.txt")
                File(bytes: [0x42, 0xFF, 0x2E, 0x74, 0x78, 0x74])  // B\xff.txt
                Dir("SubDir") { File("Inner.txt") }
            }
        }
        defer { tree.remove() }
        let p = try plan(tree, [rule("lowercase", "Docs", .naming(Self.lower))])
        #expect(p.lines == [
            "rename Docs/.Hidden -> Docs/.hidden",
            "rename Docs/DATA.csv -> Docs/data.csv",
            "rename Docs/Data.csv -> Docs/data (2).csv",
            "rename Docs/Notes.txt -> Docs/notes.txt",
            "rename Docs/Photo.JPG -> Docs/photo (3).jpg",
            "rename Docs/Report.TXT -> Docs/report (2).txt",
            "rename Docs/SubDir -> Docs/subdir",
            "rename Docs/SubDir/Inner.txt -> Docs/SubDir/inner.txt",
            "rename Docs/archive.tar.GZ -> Docs/archive.tar.gz",
            "rename Docs/ÉTÉ.txt -> Docs/été.txt",
        ])
        #expect(p.findings == [
            "lowercase: Docs/B\\xff.txt: name is not valid UTF-8: it cannot be lowercased",
            "lowercase: Docs/DATA.csv: differs only by case from 'Data.csv': they collide on case-insensitive file systems",
            "lowercase: Docs/Data.csv: differs only by case from 'DATA.csv': they collide on case-insensitive file systems",
            "lowercase: Docs/Photo.JPG: differs only by case from 'photo.jpg': they collide on case-insensitive file systems",
            "lowercase: Docs/Report.TXT: differs only by case from 'report.txt': they collide on case-insensitive file systems",
            "lowercase: Docs/photo.jpg: differs only by case from 'Photo.JPG': they collide on case-insensitive file systems",
            "lowercase: Docs/report.txt: differs only by case from 'Report.TXT': they collide on case-insensitive file systems",
        ])
        let rename = try #require(p.actions.first { $0.path == path("Docs/Notes.txt") })
        #expect(rename.identity != nil)
        #expect(rename.reason == "name has uppercase letters")
    }

    @Test("a large folder (names found by hashing, not scanning) gives exactly the renames, free names and collisions a small one does")
    func lowercaseLargeFolder() throws {
        let tree = try Tree {
            Dir("Docs") {
                File("Report.TXT")
                File("report.txt")
                File("Photo.JPG")
                File("photo.jpg")
                File("photo (2).jpg")
                File("DATA.csv")
                File("Data.csv")
                File("ÉTÉ.txt")
                File("été.txt")
                for i in 0..<60 { File("fill-\(i).txt") }
                File("Fill-7.txt")
            }
        }
        defer { tree.remove() }
        let p = try plan(tree, [rule("lowercase", "Docs", .naming(Self.lower))])
        #expect(p.lines == [
            "rename Docs/DATA.csv -> Docs/data.csv",
            "rename Docs/Data.csv -> Docs/data (2).csv",
            "rename Docs/Fill-7.txt -> Docs/fill-7 (2).txt",
            "rename Docs/Photo.JPG -> Docs/photo (3).jpg",
            "rename Docs/Report.TXT -> Docs/report (2).txt",
            "rename Docs/ÉTÉ.txt -> Docs/été (2).txt",
        ])
        #expect(p.findings == [
            "lowercase: Docs/DATA.csv: differs only by case from 'Data.csv': they collide on case-insensitive file systems",
            "lowercase: Docs/Data.csv: differs only by case from 'DATA.csv': they collide on case-insensitive file systems",
            "lowercase: Docs/Fill-7.txt: differs only by case from 'fill-7.txt': they collide on case-insensitive file systems",
            "lowercase: Docs/Photo.JPG: differs only by case from 'photo.jpg': they collide on case-insensitive file systems",
            "lowercase: Docs/Report.TXT: differs only by case from 'report.txt': they collide on case-insensitive file systems",
            "lowercase: Docs/fill-7.txt: differs only by case from 'Fill-7.txt': they collide on case-insensitive file systems",
            "lowercase: Docs/photo.jpg: differs only by case from 'Photo.JPG': they collide on case-insensitive file systems",
            "lowercase: Docs/report.txt: differs only by case from 'Report.TXT': they collide on case-insensitive file systems",
            "lowercase: Docs/ÉTÉ.txt: differs only by case from 'été.txt': they collide on case-insensitive file systems",
            "lowercase: Docs/été.txt: differs only by case from 'ÉTÉ.txt': they collide on case-insensitive file systems",
        ])
    }

    @Test("match narrows renames to selected names; the scope itself is never renamed")
    func selection() throws {
        let tree = try Tree {
            Dir("Docs") {
                Dir("UserFiles") {
                    File("A.txt")
                    File("B.PDF")
                    Dir("Sub") { File("C.txt") }
                }
            }
        }
        defer { tree.remove() }
        let p = try plan(tree, [rule("lowercase", "Docs/UserFiles", .naming(Self.lower), match: ["**/*.txt"])])
        #expect(p.lines == ["rename Docs/UserFiles/A.txt -> Docs/UserFiles/a.txt",
                            "rename Docs/UserFiles/Sub/C.txt -> Docs/UserFiles/Sub/c.txt"])
    }

    @Test("patterns are reported, never fixed")
    func pattern() throws {
        let tree = try Tree {
            Dir("Docs") {
                File("good_name.txt")
                File("Bad Name.txt")
                File("other.pdf")
                File(bytes: [0x78, 0xFF, 0x2E, 0x74, 0x78, 0x74])
            }
        }
        defer { tree.remove() }
        let r = rule("names", "Docs", .naming(Naming(pattern: "[a-z0-9_]+\\.txt")), match: ["*.txt"])
        let p = try plan(tree, [r])
        #expect(p.actions.isEmpty)
        #expect(p.findings == [
            "names: Docs/Bad Name.txt: name does not match pattern '[a-z0-9_]+\\.txt'",
            "names: Docs/x\\xff.txt: name is not valid UTF-8: it cannot match pattern '[a-z0-9_]+\\.txt'",
        ])
    }

    @Test("an invalid pattern is reported once instead of silently matching nothing")
    func invalidPattern() throws {
        let tree = try Tree { Dir("Docs") { File("a.txt") } }
        defer { tree.remove() }
        let p = try plan(tree, [rule("names", "Docs", .naming(Naming(pattern: "([a-z")))])
        #expect(p.findings == ["names: Docs: pattern '([a-z' is not a valid regular expression; names were not checked"])
    }

    @Test("audit mode says what the rename would be")
    func audit() throws {
        let tree = try Tree { Dir("Docs") { File("A.txt"); File("a.txt") } }
        defer { tree.remove() }
        let p = try plan(tree, [rule("lowercase", "Docs", .naming(Self.lower), mode: .audit)])
        #expect(p.actions.isEmpty)
        #expect(p.findings == [
            "lowercase: Docs/A.txt: differs only by case from 'a.txt': they collide on case-insensitive file systems",
            "lowercase: Docs/A.txt: name has uppercase letters (would be renamed to 'a (2).txt')",
            "lowercase: Docs/a.txt: differs only by case from 'A.txt': they collide on case-insensitive file systems",
        ])
    }

    @Test("Finder-style numbering keeps the extension outside the counter", arguments: [
        ("photo.jpg", 2, "photo (2).jpg"), ("archive.tar.gz", 3, "archive.tar (3).gz"), (".hidden", 2, ".hidden (2)"),
        ("noext", 2, "noext (2)"), ("trailing.", 2, "trailing. (2)"),
    ])
    func numbering(name: String, n: Int, expected: String) {
        #expect(String(decoding: NameRules.numbered(Array(name.utf8), n), as: UTF8.self) == expected)
    }

    @Test("a lowercase name longer than NAME_MAX, alone or after the collision suffix, is a violation with its byte count, not a rename")
    func overlongTargets() throws {
        // 'İ' (2 bytes) lowercases to 'i' + U+0307 (3 bytes): 244 bytes become 364.
        let dotted = String(repeating: "İ", count: 120) + ".TXT"
        let long = "X" + String(repeating: "a", count: 247) + ".txt"      // 252 bytes; its lowercase form exists
        let taken = "x" + String(repeating: "a", count: 247) + ".txt"
        let fits = "Y" + String(repeating: "a", count: 250) + ".txt"     // 255 bytes: renamed
        #expect(dotted.utf8.count == 244)
        let tree = try Tree { Dir("Docs") { File(dotted); File(long); File(taken); File(fits) } }
        defer { tree.remove() }
        for mode in [Rule.Mode.enforce, .audit] {
            let p = try plan(tree, [rule("lowercase", "Docs", .naming(Self.lower), mode: mode)])
            #expect(p.actions.map(\.path) == (mode == .enforce ? [path("Docs/" + fits)] : []))
            #expect(p.findings.contains("lowercase: Docs/\(dotted): name has uppercase letters, but the new name would be 364 bytes, more than the 255 a file name may have (NAME_MAX); not renamed"))
            #expect(p.findings.contains("lowercase: Docs/\(long): name has uppercase letters, but the new name would be 256 bytes, more than the 255 a file name may have (NAME_MAX); not renamed"))
        }
    }
}
