// The library's layers are targets (Package.swift; Docs/architecture.md): a target sees only the targets below
// it, so a back edge is a compile error. These tests hold what the compiler does not: that the manifest keeps the
// layers a chain in the documented order, each folder in the target of its layer; and, inside the bottom target,
// that Base/ (bytes, locks, the pool) stays below the file system it shares a target with. Type names, not a
// compiler: they read declarations, and the words of each line outside comments.
import Foundation
import Testing

@Suite("Layers") struct LayeringTests {
    static let sources = PlatformLayeringTests.packageRoot + "/Sources"

    /// Bottom first: each layer's target and the folders it holds (a target of one folder holds it flat).
    static let layers: [(target: String, folders: [String])] = [
        ("StoragePolicyFileSystem", ["Platform", "Base", "FileSystem"]),
        ("StoragePolicyModel", ["YAML", "Policy"]),
        ("StoragePolicyPlan", []),
        ("StoragePolicyEvaluation", []),
        ("StoragePolicyApply", []),
        ("StoragePolicyReports", ["Reports", "Scheduling"]),
        ("StoragePolicy", ["Library"]),
    ]

    static let modifiers = #"(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|package|internal|fileprivate|private|final|indirect|nonisolated|open)\s+)*(?:struct|enum|class|protocol|actor|typealias)\s+([A-Z]\w*)"#
    static let topLevel = try! NSRegularExpression(pattern: "^" + modifiers, options: [.anchorsMatchLines])
    static let nested = try! NSRegularExpression(pattern: #"^\s+"# + modifiers, options: [.anchorsMatchLines])

    static func names(_ regex: NSRegularExpression, in text: String) -> Set<String> {
        Set(regex.matches(in: text, range: NSRange(text.startIndex..., in: text)).map {
            String(text[Range($0.range(at: 1), in: text)!])
        })
    }

    /// Every Swift file below `folder` (a path under Sources/), recursively, as (path under Sources/, text).
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

    /// The target dependencies Package.swift declares, by target name: each `.target(` up to the next `.`-call
    /// of a target kind, its `name:` and its `dependencies: [...]` (comments may stand between them).
    static func manifestDependencies() throws -> [String: [String]] {
        let text = try String(contentsOfFile: PlatformLayeringTests.packageRoot + "/Package.swift", encoding: .utf8)
        let name = try NSRegularExpression(pattern: #"name: "(\w+)""#)
        let dependencies = try NSRegularExpression(pattern: #"dependencies: \[([^\]]*)\]"#)
        var out: [String: [String]] = [:]
        for chunk in text.components(separatedBy: ".target(").dropFirst() {
            let declaration = chunk.components(separatedBy: "Target(")[0]
            let range = NSRange(declaration.startIndex..., in: declaration)
            guard let n = name.firstMatch(in: declaration, range: range) else { continue }
            let list = dependencies.firstMatch(in: declaration, range: range).map {
                declaration[Range($0.range(at: 1), in: declaration)!].split(separator: ",").map {
                    $0.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                }
            }
            out[String(declaration[Range(n.range(at: 1), in: declaration)!])] = list ?? []
        }
        return out
    }

    @Test("the layers are a chain of targets in the documented order: each depends on the one below, C aside")
    func layersAreAChain() throws {
        let dependencies = try Self.manifestDependencies()
        for (level, layer) in Self.layers.enumerated() {
            let swiftDependencies = (dependencies[layer.target] ?? ["missing"]).filter { !$0.hasPrefix("C") }
            #expect(swiftDependencies == (level == 0 ? [] : [Self.layers[level - 1].target]), "\(layer.target)")
        }
        // The command layer stands on the front door alone.
        #expect(dependencies["PolicyctlCommands"] == ["StoragePolicy"])
    }

    @Test("each layer's folders are in its target, and no library source lies outside the layers")
    func foldersInTheirTargets() throws {
        let targets = try FileManager.default.contentsOfDirectory(atPath: Self.sources).filter { $0.hasPrefix("StoragePolicy") }
        #expect(Set(targets) == Set(Self.layers.map(\.target)))
        for layer in Self.layers {
            let entries = try FileManager.default.contentsOfDirectory(atPath: Self.sources + "/" + layer.target)
            let folders = entries.filter { !$0.hasSuffix(".swift") }
            if layer.folders.isEmpty {
                // A flat target: Swift files and a Kinds/ folder at most.
                #expect(folders.allSatisfy { $0 == "Kinds" }, "\(layer.target): \(folders)")
                #expect(entries.contains { $0.hasSuffix(".swift") })
            } else {
                #expect(Set(folders) == Set(layer.folders), "\(layer.target)")
                #expect(!entries.contains { $0.hasSuffix(".swift") }, "\(layer.target) keeps its files in its folders")
            }
        }
    }

    /// Base/ sits below the file system (which shares its layer): it may use only Platform/ and the standard library.
    @Test("Base/ names no type declared above it, and imports no Foundation")
    func baseNamesNothingAbove() throws {
        func declared(in folders: [String]) -> Set<String> {
            Set(folders.flatMap { Self.files(in: $0) }.flatMap {
                Self.names(Self.topLevel, in: $0.text).union(Self.names(Self.nested, in: $0.text))
            })
        }
        let bottom = "StoragePolicyFileSystem/"
        let below = declared(in: [bottom + "Base", bottom + "Platform"])
        let above = declared(in: [bottom + "FileSystem"] + Self.layers.dropFirst().map(\.target)).subtracting(below)
        #expect(above.contains("RelativePath") && above.contains("Action"))
        let files = Self.files(in: bottom + "Base")
        #expect(files.contains { $0.path == bottom + "Base/JSONWriter.swift" } && files.contains { $0.path == bottom + "Base/ByteOrder.swift" })
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
