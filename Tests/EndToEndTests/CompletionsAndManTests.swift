import Foundation
import TreeFixture
import Testing

@Suite("Completions and manual pages") struct CompletionsAndManTests {
    /// Loads the generated bash script in a real bash and returns what it offers for `words`.
    static func bashCompletions(_ words: [String]) throws -> [String] {
        let script = try PolicyctlBinary.run(["completions", "bash"])
        #expect(script.status == 0)
        let file = TestScratch.path("completion") + ".bash"
        try script.stdout.write(toFile: file, atomically: true, encoding: .utf8)
        let quoted = words.map { "'\($0)'" }.joined(separator: " ")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["-c", "source '\(file)'; COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1); _policyctl; printf '%s\\n' \"${COMPREPLY[@]}\""]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    @Test("bash completes subcommands from the command table") func subcommands() throws {
        #expect(try Self.bashCompletions(["policyctl", "pl"]) == ["plan"])
        #expect(try Self.bashCompletions(["policyctl", "va"]) == ["validate"])
    }

    @Test("bash completes --format values and option names") func values() throws {
        #expect(try Self.bashCompletions(["policyctl", "plan", "--format", ""]) == ["text", "json"])
        #expect(try Self.bashCompletions(["policyctl", "validate", "--st"]) == ["--strict"])
    }

    @Test("the manual pages render without a single groff warning", arguments: ["1", "5"])
    func manPages(section: String) throws {
        let page = try PolicyctlBinary.run(["manpage", "--section", section])
        #expect(page.status == 0)
        let file = TestScratch.path("policyctl") + ".\(section)"
        try page.stdout.write(toFile: file, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/groff")
        process.arguments = ["-man", "-ww", "-z", file]
        let err = Pipe()
        process.standardError = err
        try process.run()
        let warnings = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(warnings == "")
    }

    @Test("every synopsis form carries its command's name: apply, audit and trash have several")
    func synopsisForms() throws {
        let page = try PolicyctlBinary.run(["manpage", "--section", "1"]).stdout
        let synopsis = try #require(page.components(separatedBy: ".SH SYNOPSIS\n").dropFirst().first?.components(separatedBy: ".SH ").first)
        let lines = synopsis.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        // Each form is `.B policyctl NAME`, the form, `.br`: no line of a form may start without its `.B` line.
        for (i, line) in lines.enumerated() where !line.hasPrefix(".") && !line.isEmpty {
            #expect(i > 0 && lines[i - 1].hasPrefix(".B policyctl "), "a form without its command name: '\(line)'")
        }
        #expect(lines.filter { $0 == ".B policyctl apply" }.count >= 2, "\(synopsis)")
        #expect(lines.filter { $0 == ".B policyctl audit" }.count == 2, "\(synopsis)")
    }

    @Test("the zsh and fish scripts name every subcommand") func otherShells() throws {
        let zsh = try PolicyctlBinary.run(["completions", "zsh"]).stdout
        let fish = try PolicyctlBinary.run(["completions", "fish"]).stdout
        for name in ["validate", "init", "demo", "completions", "manpage"] {
            #expect(zsh.contains("'\(name):"))
            #expect(fish.contains("-a \(name) -d"))
        }
        #expect(zsh.hasPrefix("#compdef policyctl\n"))
    }
}
