// The README's quick start is two commands that do all the set-up (`make demo`, `make test`), CI runs exactly
// the second, and scripts/bootstrap.sh installs libyaml and pkg-config when they are missing. The script is
// run here against stub tools (a pkg-config that finds nothing, an apt-get and a brew that record their
// arguments), so nothing is installed on the test machine.
import Foundation
import Testing

@Suite("quick start: make demo, make test, scripts/bootstrap.sh")
struct QuickStartTests {
    static let packageRoot = String(#filePath).components(separatedBy: "/Tests/")[0]

    static func read(_ path: String) throws -> String { try String(contentsOfFile: packageRoot + "/" + path, encoding: .utf8) }

    @Test("the README's quick start is make demo and make test; .ci/run ends with make test; both targets bootstrap")
    func commands() throws {
        let readme = try Self.read("README.md")
        let quick = try #require(readme.components(separatedBy: "## Quick start").dropFirst().first?.components(separatedBy: "\n## ").first)
        let block = try #require(quick.components(separatedBy: "```sh\n").dropFirst().first?.components(separatedBy: "```").first)
        let commands = block.split(separator: "\n").map { $0.components(separatedBy: "#")[0].trimmingCharacters(in: .whitespaces) }
        #expect(commands == ["make demo", "make test"], "\(block)")
        let ci = try Self.read(".ci/run").split(separator: "\n")
        #expect(ci.last == "make test")
        #expect(!ci.contains { $0.hasPrefix("swift test") })
        let makefile = try Self.read("Makefile")
        for target in ["demo: bootstrap", "test: bootstrap", "test-fast: bootstrap", "bootstrap:\n\tscripts/bootstrap.sh"] {
            #expect(makefile.contains(target), "Makefile lacks '\(target)'")
        }
    }

    /// A folder of stub tools: each records its arguments in `log` and exits `status`.
    static func stubs(_ scratch: ScratchDirectory, _ tools: [String: Int32]) throws -> (bin: String, log: String) {
        let bin = scratch.sub("bin")
        let log = scratch.path + "/calls.log"
        for (tool, status) in tools {
            let path = bin + "/" + tool
            try "#!/bin/sh\necho \"\(tool) $*\" >> '\(log)'\nexit \(status)\n".write(toFile: path, atomically: true, encoding: .utf8)
            chmod(path, 0o755)
        }
        return (bin, log)
    }

    static func bootstrap(path: String) throws -> PolicyctlBinary.Result {
        try ChildProcess.run("/bin/bash", [packageRoot + "/scripts/bootstrap.sh"], environment: ["PATH": path])
    }

    @Test("bootstrap: nothing when pkg-config finds yaml-0.1; apt-get installs libyaml-dev and pkg-config when it does not; brew on macOS; a clear failure with neither")
    func bootstrap() throws {
        let present = ScratchDirectory("bootstrap-present")
        let ok = try Self.stubs(present, ["pkg-config": 0, "apt-get": 0])
        let nothing = try Self.bootstrap(path: ok.bin + ":/usr/bin:/bin")
        #expect(nothing.status == 0, "\(nothing.stderr)")
        #expect(try String(contentsOfFile: ok.log, encoding: .utf8) == "pkg-config --exists yaml-0.1\n")

        // The tests run as root, so apt-get is called without sudo.
        let missing = ScratchDirectory("bootstrap-apt")
        let apt = try Self.stubs(missing, ["pkg-config": 1, "apt-get": 0])
        let installed = try Self.bootstrap(path: apt.bin + ":/usr/bin:/bin")
        let calls = try String(contentsOfFile: apt.log, encoding: .utf8).split(separator: "\n")
        #expect(calls.contains("apt-get install -y -qq libyaml-dev pkg-config"), "\(calls)")
        // The stub pkg-config still finds nothing: the script says so and fails.
        #expect(installed.status == 1)
        #expect(installed.stderr.contains("pkg-config still cannot find yaml-0.1"), "\(installed.stderr)")

        let mac = ScratchDirectory("bootstrap-brew")
        let brew = try Self.stubs(mac, ["pkg-config": 1, "brew": 0])
        // No apt-get on this PATH: only the stubs and the few tools the script uses.
        let tools = mac.sub("tools")
        for tool in ["id", "env"] { symlink("/usr/bin/\(tool)", tools + "/" + tool) }
        _ = try ChildProcess.run("/bin/bash", [Self.packageRoot + "/scripts/bootstrap.sh"], environment: ["PATH": brew.bin + ":" + tools])
        #expect(try String(contentsOfFile: brew.log, encoding: .utf8).split(separator: "\n").contains("brew install libyaml pkg-config"))

        let none = ScratchDirectory("bootstrap-none")
        let bare = try Self.stubs(none, ["pkg-config": 1])
        let failed = try ChildProcess.run("/bin/bash", [Self.packageRoot + "/scripts/bootstrap.sh"], environment: ["PATH": bare.bin])
        #expect(failed.status == 1)
        #expect(failed.stderr.contains("neither apt-get nor brew"), "\(failed.stderr)")
    }
}
