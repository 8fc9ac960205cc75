// The library's folders form layers (Docs/architecture.md), and a folder may name only types declared in its own
// layer or below: this is the check that holds the order until the layers become targets with `package` access
// (then a back edge is a compile error and this test can go). Type names, not a compiler: it reads top-level
// declarations and the words of each line outside comments and string literals.
import Foundation
import Testing

@Suite("Layers") struct LayeringTests {
    /// Bottom first; the folders of one entry are one layer.
    static let layers: [[String]] = [
        ["Platform", "Base", "FileSystem"],
        ["YAML", "Policy"],
        ["Plan"],
        ["Evaluation"],
        ["Apply"],
        ["Reports", "Scheduling"],
        ["Library"],
    ]

    static let topLevel = try! NSRegularExpression(
        pattern: #"^(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|package|internal|fileprivate|private|final|indirect|nonisolated|open)\s+)*(?:struct|enum|class|protocol|actor|typealias)\s+([A-Z]\w*)"#,
        options: [.anchorsMatchLines])
    static let nested = try! NSRegularExpression(
        pattern: #"^\s+(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|package|internal|fileprivate|private|final|indirect|nonisolated|open)\s+)*(?:struct|enum|class|protocol|actor|typealias)\s+([A-Z]\w*)"#,
        options: [.anchorsMatchLines])

    static func names(_ regex: NSRegularExpression, in text: String) -> Set<String> {
        Set(regex.matches(in: text, range: NSRange(text.startIndex..., in: text)).map {
            String(text[Range($0.range(at: 1), in: text)!])
        })
    }

    /// Every Swift file of a folder, recursively, as (path below Sources/StoragePolicy, text).
    static func files(in folder: String) -> [(String, String)] {
        let base = BaseLayeringTests.sources + "/" + folder
        let paths = (FileManager.default.enumerator(atPath: base)?.allObjects as? [String]) ?? []
        return paths.filter { $0.hasSuffix(".swift") }.sorted().compactMap { path in
            (try? String(contentsOfFile: base + "/" + path, encoding: .utf8)).map { (folder + "/" + path, $0) }
        }
    }

    @Test("every folder names only types of its own layer or below")
    func noBackEdges() throws {
        var owner: [String: Int] = [:]
        for (level, folders) in Self.layers.enumerated() {
            for folder in folders {
                for (_, text) in Self.files(in: folder) {
                    for name in Self.names(Self.topLevel, in: text) { owner[name] = min(owner[name] ?? level, level) }
                }
            }
        }
        // The check can fail: these are declared high and named low in no file today.
        #expect(owner["StorageEngine"] == 6 && owner["ApplyRun"] == 4 && owner["Planner"] == 3 && owner["FileName"] == 0)
        let literal = try Regex(#""(?:\\.|[^"\\])*""#)
        var found: [String] = []
        for (level, folders) in Self.layers.enumerated() {
            for folder in folders {
                for (path, text) in Self.files(in: folder) {
                    let own = Self.names(Self.nested, in: text).union(Self.names(Self.topLevel, in: text))
                    for (i, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                        let code = (line.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
                            .replacing(literal, with: "\"\"")
                        let words = Set(code.split(whereSeparator: { !$0.isLetter && !$0.isNumber && $0 != "_" }).map(String.init))
                        for word in words.subtracting(own).sorted() {
                            if let up = owner[word], up > level {
                                found.append("\(path):\(i + 1): names \(word), declared in layer \(Self.layers[up].joined(separator: "+"))")
                            }
                        }
                    }
                }
            }
        }
        #expect(found == [])
    }
}
