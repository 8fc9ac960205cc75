// The C layer's Apple branches (`__APPLE__`, `TARGET_OS_*` in Sources/CPosix) compile nowhere in this suite's
// own build: scripts/darwin-c-check.sh type-checks every Sources/CPosix/*.c for macOS (arm64, x86_64) and iOS
// against the Darwin libc headers Zig ships (PyPI `ziglang`), -Wall -Werror, so they can no longer rot unseen.
import Foundation
import Testing

@Suite("Darwin C check (Sources/CPosix for macOS and iOS, against Zig's Darwin headers)")
struct DarwinCCheckTests {
    static let script = String(#filePath).components(separatedBy: "/Tests/")[0] + "/scripts/darwin-c-check.sh"

    static func run(_ arguments: [String]) -> (status: Int32, output: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/bash")
        p.arguments = [script] + arguments
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardError = pipe
        do { try p.run() } catch { return (-1, "\(error)") }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// ziglang installed (or installable now) into the script's venv; offline it cannot be, and the test says so.
    static let ready: Bool = run(["--prepare"]).status == 0

    @Test("every CPosix source type-checks for aarch64-macos, x86_64-macos and aarch64-ios with -Wall -Werror",
          .enabled(if: ready, "ziglang cannot be installed from PyPI (offline?): the Darwin C sources are not checked"),
          // A guard against a hang, not a speed check: twelve zig compiles took over five minutes on a loaded
          // machine beside the rest of the suite.
          .timeLimit(.minutes(30)))
    func darwinSourcesCompile() {
        let (status, output) = Self.run([])
        #expect(status == 0, "scripts/darwin-c-check.sh failed:\n\(output)")
        let files = (try? FileManager.default.contentsOfDirectory(atPath: String(Self.script.dropLast("scripts/darwin-c-check.sh".count)) + "Sources/CPosix"))?
            .filter { $0.hasSuffix(".c") }.count ?? 0
        // Three targets, every file: none left out.
        #expect(output.contains("darwin-c-check: \(3 * files) of \(3 * files) target/file compiles clean"), "\(output)")
    }
}
