// The library's folders form layers (Docs/architecture.md), and a folder may name only types declared in its own
// layer or below: these tests hold the order until the layers become targets with `package` access (then a back
// edge is a compile error and they can go). Type names, not a compiler: they read declarations, and the words of
// each line outside comments (and, for the layer order, outside the text of string literals: interpolations count).
import Foundation
import Testing

@Suite("Layers") struct LayeringTests {
    static let sources = PlatformLayeringTests.packageRoot + "/Sources/StoragePolicy"

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

    static let modifiers = #"(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|package|internal|fileprivate|private|final|indirect|nonisolated|open)\s+)*(?:struct|enum|class|protocol|actor|typealias)\s+([A-Z]\w*)"#
    static let topLevel = try! NSRegularExpression(pattern: "^" + modifiers, options: [.anchorsMatchLines])
    static let nested = try! NSRegularExpression(pattern: #"^\s+"# + modifiers, options: [.anchorsMatchLines])

    static func names(_ regex: NSRegularExpression, in text: String) -> Set<String> {
        Set(regex.matches(in: text, range: NSRange(text.startIndex..., in: text)).map {
            String(text[Range($0.range(at: 1), in: text)!])
        })
    }

    /// Every Swift file of a folder, recursively, as (path below Sources/StoragePolicy, text).
    static func files(in folder: String) -> [(path: String, text: String)] {
        let base = sources + "/" + folder
        let paths = (FileManager.default.enumerator(atPath: base)?.allObjects as? [String]) ?? []
        return paths.filter { $0.hasSuffix(".swift") }.sorted().compactMap { path in
            (try? String(contentsOfFile: base + "/" + path, encoding: .utf8)).map { (folder + "/" + path, $0) }
        }
    }

    /// Each line of `text` (numbered from 1): its code, the part before `//`, and the words of that code.
    static func codeLines(_ text: String) -> [(line: Int, code: Substring, words: Set<String>)] {
        text.split(separator: "\n", omittingEmptySubsequences: false).enumerated().map { i, line in
            let code = line.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            return (i + 1, code, Set(code.split(whereSeparator: { !$0.isLetter && !$0.isNumber && $0 != "_" }).map(String.init)))
        }
    }

    /// `code` with the text of its string literals blanked and their interpolations kept: `"see \(Planner.x) in
    /// StorageEngine"` keeps `Planner` (a call a message makes) and drops `StorageEngine` (prose).
    static func outsideLiteralText(_ code: Substring) -> String {
        var out = "", inLiteral = false, depth = 0, escaped = false
        var chars = code.makeIterator()
        while let c = chars.next() {
            if !inLiteral {
                if c == "\"" { inLiteral = true }
                if c == "(" && depth > 0 { depth += 1 }
                if c == ")" && depth > 0 { depth -= 1; if depth == 0 { inLiteral = true; out.append(" "); continue } }
                out.append(c)
                continue
            }
            if escaped {
                escaped = false
                if c == "(" { inLiteral = false; depth = 1; out.append(" ") }
                continue
            }
            if c == "\\" { escaped = true } else if c == "\"" { inLiteral = false; out.append(c) }
        }
        return out
    }

    @Test("a literal's text is prose, its interpolations are code")
    func literalText() {
        #expect(Self.outsideLiteralText(#"let m = "see \(Planner.x(a)) in StorageEngine" + StepVerifier.y"#)
                == #"let m = " Planner.x(a) " + StepVerifier.y"#)
        #expect(Self.outsideLiteralText(#"f("a \"Plan\" b", Policy.z)"#) == #"f("", Policy.z)"#)
    }

    @Test("every folder names only types of its own layer or below")
    func noBackEdges() throws {
        var owner: [String: Int] = [:]
        for (level, folders) in Self.layers.enumerated() {
            for folder in folders {
                for file in Self.files(in: folder) {
                    for name in Self.names(Self.topLevel, in: file.text) { owner[name] = min(owner[name] ?? level, level) }
                }
            }
        }
        // The check can fail: these are declared high and named low in no file today.
        #expect(owner["StorageEngine"] == 6 && owner["ApplyRun"] == 4 && owner["Planner"] == 3 && owner["FileName"] == 0)
        var found: [String] = []
        for (level, folders) in Self.layers.enumerated() {
            for folder in folders {
                for file in Self.files(in: folder) {
                    // A type this file declares (a nested `Node`, say) is its own, whatever a higher layer declares.
                    let own = Self.names(Self.nested, in: file.text).union(Self.names(Self.topLevel, in: file.text))
                    for (line, code, _) in Self.codeLines(file.text) {
                        let words = Set(Self.outsideLiteralText(code).split(whereSeparator: { !$0.isLetter && !$0.isNumber && $0 != "_" }).map(String.init))
                        for word in words.subtracting(own).sorted() {
                            if let up = owner[word], up > level {
                                found.append("\(file.path):\(line): names \(word), declared in layer \(Self.layers[up].joined(separator: "+"))")
                            }
                        }
                    }
                }
            }
        }
        #expect(found == [])
    }

    /// Base/ sits below the file system (which shares its layer): it may use only Platform/ and the standard library.
    @Test("Base/ names no type declared above it, and imports no Foundation")
    func baseNamesNothingAbove() throws {
        func declared(in folders: [String]) -> Set<String> {
            Set(folders.flatMap { Self.files(in: $0) }.flatMap {
                Self.names(Self.topLevel, in: $0.text).union(Self.names(Self.nested, in: $0.text))
            })
        }
        let below = declared(in: ["Base", "Platform"])
        let folders = try FileManager.default.contentsOfDirectory(atPath: Self.sources).filter { !$0.hasSuffix(".swift") }
        let above = declared(in: folders.filter { $0 != "Base" && $0 != "Platform" }).subtracting(below)
        #expect(above.contains("RelativePath") && above.contains("Action"))
        let files = Self.files(in: "Base")
        #expect(files.contains { $0.path == "Base/JSONWriter.swift" } && files.contains { $0.path == "Base/ByteOrder.swift" })
        var found: [String] = []
        for file in files {
            for (line, code, words) in Self.codeLines(file.text) {
                if code.contains("import Foundation") { found.append("\(file.path):\(line): imports Foundation") }
                for word in words.intersection(above).sorted() { found.append("\(file.path):\(line): names \(word)") }
            }
        }
        #expect(found == [])
    }
}
