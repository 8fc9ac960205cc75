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

/// Issue 26: the command layer calls the C library through Platform.swift's `system_` functions only. A
/// command file that imports Foundation still sees libc through it, so a call by a libc name is looked for
/// (string literals and comments left out) rather than an import.
@Suite("the command layer's one window on libc") struct CommandLibcTests {
    static let libcCall = #"(?<!func )(?<![\w.])(errno|geteuid|getuid|getpid|getenv|setenv|isatty|kill|signal|exit|open|openat|close|fstat|lstat|stat|mkdir|mkdtemp|unlink|rename|renameat|fsync|readlink|realpath|posix_spawn|waitpid|fexecve|getpwuid|clock_gettime|time|strdup|free)\s*\("#
    static let libcName = #"(?<![\w.])(errno|S_IF[A-Z]+|O_(RDONLY|WRONLY|RDWR|CREAT|EXCL|DIRECTORY|NOFOLLOW|CLOEXEC|NOCTTY)|E(INTR|EXIST|NOENT|NOTEMPTY))\b"#

    /// The line without its string literals and a trailing `//` comment.
    static func code(_ line: Substring) -> String {
        var s = String(line).replacingOccurrences(of: #""([^"\\]|\\.)*""#, with: "\"\"", options: .regularExpression)
        if let comment = s.range(of: "//") { s = String(s[..<comment.lowerBound]) }
        return s
    }

    static func calls(in files: [(path: String, lines: [Substring])]) -> [String] {
        let regexes = [libcCall, libcName].map { try! NSRegularExpression(pattern: $0) }
        return files.flatMap { file in
            // Lines inside a multi-line string literal (help texts name errnos) are text, not code.
            var inText = false
            return file.lines.enumerated().compactMap { (i, line) -> String? in
                let quotes = line.components(separatedBy: "\"\"\"").count - 1
                defer { if quotes % 2 == 1 { inText.toggle() } }
                guard !inText, quotes == 0 else { return nil }
                let s = code(line)
                return regexes.contains { $0.firstMatch(in: s, range: NSRange(s.startIndex..., in: s)) != nil } ? "\(file.path):\(i + 1): \(line)" : nil
            }
        }
    }

    @Test("the patterns find libc calls and pass their wrappers, literals and declarations (so the check can fail)")
    func patternsCanFail() {
        let bad: [(path: String, lines: [Substring])] = [("x", [
            "if isatty(1) == 1 {", "let fd = open(path, O_RDONLY)", "guard errno == EINTR", "var st = stat()", "exit(3)",
        ])]
        #expect(CommandLibcTests.calls(in: bad).count == 5)
        let good: [(path: String, lines: [Substring])] = [("x", [
            "let fd = system_open(path, [.readOnly])", "static func open(_ option: String?) throws", "try ScriptCache.open(x)",
            #"Terminal.err("cannot open(2) \(path): errno")"#, "// exit() is never called here", "Policyctl.exit(code)",
        ])]
        #expect(CommandLibcTests.calls(in: good) == [])
        let text: [(path: String, lines: [Substring])] = [("x", ["let help = \"\"\"", "    named with its errno (EINTR)", "    \"\"\"", "close(fd)"])]
        #expect(CommandLibcTests.calls(in: text) == ["x:4: close(fd)"])
    }

    @Test("no command file but Platform.swift calls the C library by name")
    func onlyPlatformCallsLibc() {
        let files = PlatformLayeringTests.sources().filter {
            ($0.path.hasPrefix("Sources/PolicyctlCommands/") || $0.path.hasPrefix("Sources/policyctl/"))
                && $0.path != "Sources/PolicyctlCommands/Platform.swift"
        }
        #expect(files.count > 30)
        #expect(CommandLibcTests.calls(in: files) == [])
    }
}
