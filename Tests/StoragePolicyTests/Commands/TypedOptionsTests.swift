// Holds issue 27's typed options: a command reads its options as properties of its Options struct (filled by
// key path from the fields that are also its spec), never by string key from the parser's result, so a
// misspelt option name cannot compile. The test target does not link the command layer, so this reads the
// source tree (as PlatformLayeringTests does); it never writes.
import Foundation
import Testing

@Suite("typed command options") struct TypedOptionsTests {
    /// The only files that may name the parser's raw result: the parser, the fill and the dispatch.
    static let parserFiles: Set<String> = [
        "Sources/PolicyctlCommands/ArgumentParser.swift",
        "Sources/PolicyctlCommands/ParsableOptions.swift",
        "Sources/PolicyctlCommands/Policyctl.swift",
    ]

    static var commandFiles: [(path: String, lines: [Substring])] {
        PlatformLayeringTests.sources().filter { $0.path.hasPrefix("Sources/PolicyctlCommands/") }
    }

    static func matches(_ pattern: String, in files: [(path: String, lines: [Substring])]) -> [String] {
        let regex = try! NSRegularExpression(pattern: pattern)
        return files.flatMap { file in
            file.lines.enumerated().compactMap { (i, line) -> String? in
                let s = String(line)
                return regex.firstMatch(in: s, range: NSRange(s.startIndex..., in: s)) != nil ? "\(file.path):\(i + 1): \(s)" : nil
            }
        }
    }

    @Test("the scan sees the command layer, and the patterns match what they are meant to (so the checks can fail)")
    func scanSeesCommands() {
        let files = TypedOptionsTests.commandFiles
        #expect(files.count > 30)
        #expect(!TypedOptionsTests.matches(#"\bParsedArguments\b"#, in: files).isEmpty)
        #expect(!TypedOptionsTests.matches(#"options\.required\(\\\.root"#, in: files).isEmpty)
        let sample: [(path: String, lines: [Substring])] = [("x", [
            #"root = arguments.value("root")"#, #"let q = parsed.flag("quiet")"#,
            #"let r = try arguments.required("root", "dir", command: c)"#, #"options: [.flag("version", help: "Show the version.")]"#,
        ])]
        #expect(TypedOptionsTests.matches(TypedOptionsTests.stringKeyRead, in: sample).count == 3)
    }

    /// A read of an option by its name: `.value("x")`, `.flag("x")`, `.all("x")`, `.required("x", "dir"`,
    /// `.parsed("x", "N"`. A declaration (`.flag("version", help: ...)`) goes on with a label, so it is not one.
    static let stringKeyRead = #"\.(value|flag|all|required|parsed)\("[a-z-]+"\s*(\)|,\s*")"#

    @Test("no command file names the parser's raw result: commands take their Options struct")
    func rawResultStaysInTheParser() {
        let outside = TypedOptionsTests.commandFiles.filter { !TypedOptionsTests.parserFiles.contains($0.path) }
        #expect(TypedOptionsTests.matches(#"\bParsedArguments\b"#, in: outside) == [])
    }

    @Test("no command reads an option by string key")
    func noStringKeyReads() {
        let reads = TypedOptionsTests.matches(TypedOptionsTests.stringKeyRead, in: TypedOptionsTests.commandFiles)
        #expect(reads == [])
    }

    @Test("a command declares its options once, in its Options struct (no CommandSpec(...options:) of its own)")
    func optionsDeclaredOnce() {
        // Policyctl.swift builds the top-level tool's spec (its --version); every subcommand's comes from
        // `CommandSpec(summary, Options.self)`.
        let outside = TypedOptionsTests.commandFiles.filter { $0.path != "Sources/PolicyctlCommands/Policyctl.swift" }
        #expect(TypedOptionsTests.matches(#"\bstatic (let|var) spec\s*="#, in: outside) == [])
        #expect(TypedOptionsTests.matches(#"\bstatic (let|var) spec\s*="#, in: TypedOptionsTests.commandFiles).count == 1)
    }
}
