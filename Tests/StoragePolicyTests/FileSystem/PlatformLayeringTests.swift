// Holds the platform layering of issue 13: only Sources/StoragePolicyFileSystem/Platform/ (and the command layer's one
// Platform.swift) names Glibc or Darwin; C modules stay behind `internal import`; nothing re-exports libc
// (issue 26), so a command file or a client of PolicyctlCommands cannot reach it unseen. Reads the source tree,
// never writes.
import Foundation
import Testing

@Suite("One platform layer") struct PlatformLayeringTests {
    static let packageRoot = String(#filePath).components(separatedBy: "/Tests/")[0]

    /// The files allowed to know the platform.
    static func isPlatformLayer(_ path: String) -> Bool {
        path.hasPrefix("Sources/StoragePolicyFileSystem/Platform/") || path == "Sources/PolicyctlCommands/Platform.swift"
    }

    /// Every Swift file under Sources/, as (path relative to the package, lines).
    static func sources() -> [(path: String, lines: [Substring])] {
        let base = packageRoot + "/Sources"
        let names = (FileManager.default.enumerator(atPath: base)?.allObjects as? [String] ?? []).filter { $0.hasSuffix(".swift") }
        return names.sorted().compactMap { name in
            guard let text = try? String(contentsOfFile: base + "/" + name, encoding: .utf8) else { return nil }
            return ("Sources/" + name, text.split(separator: "\n", omittingEmptySubsequences: false))
        }
    }

    /// `path:line: text` for each line outside the layer that matches.
    static func violations(_ pattern: String) -> [String] {
        let regex = try! NSRegularExpression(pattern: pattern)
        return sources().filter { !isPlatformLayer($0.path) }.flatMap { file in
            file.lines.enumerated().compactMap { (i, line) -> String? in
                let s = String(line)
                let found = regex.firstMatch(in: s, range: NSRange(s.startIndex..., in: s)) != nil
                return found ? "\(file.path):\(i + 1): \(s)" : nil
            }
        }
    }

    @Test("the scan sees the whole tree, the layer included (so the checks below can fail)")
    func scanSeesTheTree() {
        let files = PlatformLayeringTests.sources()
        #expect(files.count > 100)
        let layer = files.filter { PlatformLayeringTests.isPlatformLayer($0.path) }
        #expect(layer.map(\.path).contains("Sources/StoragePolicyFileSystem/Platform/Syscalls.swift"))
        #expect(layer.contains { $0.lines.contains("#if canImport(Glibc)") })
    }

    @Test("no #if canImport(Glibc) or canImport(Darwin) outside the platform layer")
    func noPlatformConditions() {
        #expect(PlatformLayeringTests.violations(#"canImport\((Glibc|Darwin|Musl)\)"#) == [])
    }

    @Test("no Glibc.- or Darwin.-qualified call outside the platform layer")
    func noQualifiedCalls() {
        #expect(PlatformLayeringTests.violations(#"\b(Glibc|Darwin)\.[A-Za-z_]"#) == [])
    }

    @Test("the tests name the platform's libc only in the test-support target (Support/, re-exported by PlatformImports.swift), so they build on Darwin too")
    func testsImportLibcOnce() throws {
        let tests = PlatformLayeringTests.packageRoot + "/Tests"
        let regex = try NSRegularExpression(pattern: #"^\s*(@_exported\s+)?import\s+(Glibc|Darwin|Musl)\b|canImport\((Glibc|Musl)\)|\b(Glibc|Darwin)\.[A-Za-z_]"#)
        var found: [String] = []
        let files = FileManager.default.enumerator(atPath: tests)?.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") } ?? []
        for name in files.sorted() where !name.hasSuffix("PlatformLayeringTests.swift") {   // its patterns name them
            let text = try String(contentsOfFile: tests + "/" + name, encoding: .utf8)
            for (i, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let s = String(line)
                if regex.firstMatch(in: s, range: NSRange(s.startIndex..., in: s)) != nil { found.append("Tests/\(name):\(i + 1)") }
            }
        }
        #expect(files.count > 150)
        #expect(found.allSatisfy { $0.hasPrefix("Tests/StoragePolicyTests/Support/") }, "\(found)")
        #expect(found.contains("Tests/StoragePolicyTests/Support/PlatformImports.swift:5"), "the re-export is seen")
    }

    @Test("no file outside the platform layer imports Glibc or Darwin")
    func noLibcImports() {
        #expect(PlatformLayeringTests.violations(#"^\s*(@_exported\s+|@_implementationOnly\s+)?((public|package|internal|fileprivate|private)\s+)?import\s+(Glibc|Darwin|Musl)\b"#) == [])
    }

    /// `path:line: text` for each line anywhere under Sources/ (the layer included) that matches.
    static func everywhere(_ pattern: String) -> [String] {
        let regex = try! NSRegularExpression(pattern: pattern)
        return sources().flatMap { file in
            file.lines.enumerated().compactMap { (i, line) -> String? in
                let s = String(line)
                return regex.firstMatch(in: s, range: NSRange(s.startIndex..., in: s)) != nil ? "\(file.path):\(i + 1): \(s)" : nil
            }
        }
    }

    static let exportedLibc = #"^\s*@_exported\s+((public|package|internal)\s+)?import\s+(Glibc|Darwin|Musl)\b"#

    @Test("no file re-exports the C library (@_exported import Glibc/Darwin/Musl), the platform layer included")
    func noReexportedLibc() {
        // The pattern matches what it forbids, so the check can fail.
        let regex = try! NSRegularExpression(pattern: PlatformLayeringTests.exportedLibc)
        for sample in ["@_exported import Glibc", "  @_exported import Darwin", "@_exported public import Musl"] {
            #expect(regex.firstMatch(in: sample, range: NSRange(sample.startIndex..., in: sample)) != nil)
        }
        #expect(PlatformLayeringTests.everywhere(PlatformLayeringTests.exportedLibc) == [])
        // The command layer's one platform file imports libc plainly, for itself alone.
        let commandPlatform = PlatformLayeringTests.sources().first { $0.path == "Sources/PolicyctlCommands/Platform.swift" }
        #expect(commandPlatform?.lines.contains("import Glibc") == true)
    }

    @Test("the library imports its C modules internal only, so a client needs no C module map")
    func cModulesInternal() {
        let imports = PlatformLayeringTests.sources().filter { $0.path.hasPrefix("Sources/StoragePolicy") }.flatMap { file in
            file.lines.filter { $0.contains("import CPosix") || $0.contains("import CYAML") }.map { "\(file.path): \($0)" }
        }
        #expect(!imports.isEmpty)
        #expect(imports.filter { !$0.hasSuffix(": internal import CPosix") && !$0.hasSuffix(": internal import CYAML") } == [])
    }
}
