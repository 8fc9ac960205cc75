// Holds the narrow public API of issue 13: the top-level `public` declarations of the library's layers and
// Sources/PolicyctlCommands are exactly the names Docs/library.md lists under "The public API", and none is a
// name SwiftUI, CryptoKit, System or Foundation also declares. Reads the source tree, never writes.
import Foundation
import Testing

@Suite("Public API") struct PublicAPITests {
    static let packageRoot = String(#filePath).components(separatedBy: "/Tests/")[0]

    /// The targets whose public declarations a client sees.
    static let publicTargets = ["Sources/StoragePolicyFileSystem", "Sources/StoragePolicyModel", "Sources/StoragePolicyPlan",
        "Sources/StoragePolicyEvaluation", "Sources/StoragePolicyApply", "Sources/StoragePolicyReports", "Sources/StoragePolicy",
        "Sources/PolicyctlCommands"]

    /// Names a client of these frameworks already has in scope: a public type of ours with one of them would
    /// have to be qualified in every file importing both. Not exhaustive; the ones a storage library could pick.
    static let platformNames: Set<String> = [
        // SwiftUI
        "Layout", "Text", "Group", "View", "Image", "Color", "Font", "Label", "List", "Section", "Form", "Table",
        "Button", "Toggle", "Link", "Menu", "Path", "Shape", "Animation", "Transaction", "Binding", "State",
        "Environment", "Alignment", "Edge", "Axis", "Scene", "Window", "Spacer", "Divider", "Grid", "Gauge",
        // CryptoKit
        "SHA256", "SHA384", "SHA512", "Insecure", "Digest", "HMAC", "SymmetricKey", "HashFunction",
        // System
        "FileDescriptor", "Errno", "FilePath", "FilePermissions", "SystemString", "SystemChar",
        // Foundation and the standard library
        "Node", "Data", "Date", "URL", "UUID", "Decimal", "Calendar", "TimeZone", "Locale", "Notification",
        "Operation", "Progress", "Thread", "Timer", "Bundle", "Host", "Process", "Pipe", "FileHandle",
        "FileManager", "Measurement", "Unit", "Scanner", "Stream", "Port", "Predicate", "Expression",
        "IndexPath", "IndexSet", "CharacterSet", "Duration", "Result", "POSIXError", "POSIXErrorCode",
        "FileAttributeType", "Formatter", "JSONEncoder", "JSONDecoder", "XMLNode", "XMLElement",
    ]

    /// The top-level public declarations of `source`: type, typealias, func, let and var names, and
    /// `extension X` for an extension that adds public members to a type not declared here.
    /// House style: top-level declarations start in column 0; members are indented.
    static func publicDeclarations(in source: String) -> (names: Set<String>, extensions: [String: Bool]) {
        let declaration = try! NSRegularExpression(pattern:
            #"^(?:@\w+(?:\([^)]*\))?\s+)*public\s+(?:(?:final|indirect|nonisolated)\s+)*(?:struct|enum|class|protocol|actor|typealias|func|let|var)\s+`?(\w+)"#)
        let publicExtension = try! NSRegularExpression(pattern: #"^(?:@\w+\s+)*public\s+extension\s+([\w.]+)"#)
        let anyExtension = try! NSRegularExpression(pattern: #"^(?:@\w+\s+)*(?:(?:package|internal|fileprivate|private)\s+)?extension\s+([\w.]+)"#)
        let publicMember = try! NSRegularExpression(pattern: #"^\s+(?:@\w+(?:\([^)]*\))?\s+)*public\s"#)
        func capture(_ regex: NSRegularExpression, _ line: String) -> String? {
            guard let match = regex.firstMatch(in: line, range: NSRange(line.startIndex..., in: line)),
                  let range = Range(match.range(at: 1), in: line) else { return nil }
            return String(line[range])
        }
        var names = Set<String>()
        var extensions: [String: Bool] = [:]   // extended type: whether it adds a public member
        var openExtension: String? = nil
        for lineSlice in source.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = String(lineSlice)
            // SPI (`@_spi(Layers) public`) is seen only by a file that imports it by name: the layers' own hot
            // primitives, public for the optimiser (ConditionLocked says why), not API.
            if line.hasPrefix("@_spi(") { continue }
            if let name = capture(declaration, line) { names.insert(name) }
            if let extended = capture(publicExtension, line) {
                extensions[extended] = true
                openExtension = nil
            } else if let extended = capture(anyExtension, line) {
                // `extension X { public func f() }` on one line adds a public member too.
                extensions[extended] = (extensions[extended] ?? false) || line.contains(" public ")
                openExtension = extended
            } else if line.hasPrefix("}") {
                openExtension = nil
            } else if let extended = openExtension,
                      publicMember.firstMatch(in: line, range: NSRange(line.startIndex..., in: line)) != nil {
                extensions[extended] = true
            }
        }
        return (names, extensions)
    }

    /// Every top-level public declaration of the public targets, as Docs/library.md names them.
    static func declaredAPI() -> Set<String> {
        var names = Set<String>()
        var extensions: [String: Bool] = [:]
        for target in publicTargets {
            let base = packageRoot + "/" + target
            let files = (FileManager.default.enumerator(atPath: base)?.allObjects as? [String] ?? []).filter { $0.hasSuffix(".swift") }
            for file in files {
                guard let text = try? String(contentsOfFile: base + "/" + file, encoding: .utf8) else { continue }
                let found = publicDeclarations(in: text)
                names.formUnion(found.names)
                extensions.merge(found.extensions) { $0 || $1 }
            }
        }
        // An extension of one of our public types adds to that type, which the list already names.
        let widening = extensions.filter { $0.value && !names.contains(String($0.key.split(separator: ".")[0])) }
        return names.union(widening.keys.map { "extension \($0)" })
    }

    /// The names listed under "## The public API" in Docs/library.md: each "- `Name`: ..." line.
    static func documentedAPI() throws -> [String] {
        let text = try String(contentsOfFile: packageRoot + "/Docs/library.md", encoding: .utf8)
        let start = try #require(text.range(of: "\n## The public API\n"))
        let rest = text[start.upperBound...]
        let section = rest.range(of: "\n## ").map { rest[..<$0.lowerBound] } ?? rest
        let item = try NSRegularExpression(pattern: #"^- `((?:extension )?[\w.]+)`"#)
        return section.split(separator: "\n").compactMap { lineSlice in
            let line = String(lineSlice)
            guard let match = item.firstMatch(in: line, range: NSRange(line.startIndex..., in: line)),
                  let range = Range(match.range(at: 1), in: line) else { return nil }
            return String(line[range])
        }
    }

    @Test("the scan finds top-level public declarations and public extensions of other types, and nothing else")
    func scanFindsDeclarations() {
        let source = """
        public struct Visible: Sendable {
            public var member: Int
            public struct Nested {}
        }
        @available(macOS 13, *) public final class Shown {}
        @_spi(Layers) public final class Layered {}
        package struct Hidden {}
        struct Internal { public var x = 1 }
        public func helper() {}
        extension Visible { public func more() {} }
        extension String {
            public var widened: Int { 0 }
        }
        extension Array { var notPublic: Int { 0 } }
        public extension Substring {}
        """
        let found = PublicAPITests.publicDeclarations(in: source)
        #expect(found.names == ["Visible", "Shown", "helper"])
        #expect(found.extensions == ["Visible": true, "String": true, "Array": false, "Substring": true])
    }

    @Test("the scan sees the library's front door and the command's entry point, and no package type")
    func scanSeesTheTree() {
        let api = PublicAPITests.declaredAPI()
        #expect(api.contains("StorageEngine"))
        #expect(api.contains("Policy"))
        #expect(api.contains("Policyctl"))
        #expect(!api.contains("Planner"))
        #expect(!api.contains("Errno"))
        #expect(api.count > 40)
    }

    @Test("the public declarations are exactly the list in Docs/library.md, each listed once")
    func apiMatchesTheDocs() throws {
        let documented = try PublicAPITests.documentedAPI()
        #expect(documented.count == Set(documented).count, "listed twice: \(documented.filter { n in documented.filter { $0 == n }.count > 1 })")
        let declared = PublicAPITests.declaredAPI()
        #expect(declared.subtracting(documented).sorted() == [], "public in Sources but not in Docs/library.md: make it package, or list it")
        #expect(Set(documented).subtracting(declared).sorted() == [], "listed in Docs/library.md but not public in Sources")
    }

    @Test("no public name is also a SwiftUI, CryptoKit, System or Foundation name")
    func noPlatformClashes() {
        #expect(PublicAPITests.declaredAPI().intersection(PublicAPITests.platformNames).sorted() == [])
    }
}
