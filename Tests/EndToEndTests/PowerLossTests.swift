// The short run of the power-loss checker (scripts/power-loss.py --short; the full run is `make power-loss`):
// apply, recover, trash, restore and undo recorded with strace, a few hundred states a power cut can leave of
// them (writes and directory changes since the last fsync of what they touch lost, in any order the persistence
// model allows), and for each the built binary's `recover` and next `apply` checked against the journal's rule.
// It needs root (loop mounts), strace and mkfs.ext4: skipped with a message without them.
import Foundation
import Testing

@Suite("Power loss (scripts/power-loss.py --short)")
struct PowerLossTests {
    static let script = String(#filePath).components(separatedBy: "/Tests/")[0] + "/scripts/power-loss.py"

    static func tool(_ name: String) -> Bool {
        (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
            .contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(name)") }
    }

    static let available = geteuid() == 0 && tool("strace") && tool("mkfs.ext4") && tool("losetup") && tool("python3")
        && FileManager.default.fileExists(atPath: "/dev/loop-control")

    @Test("a few hundred crash states of apply, recover, trash, restore and undo: recover and the next apply keep the rule",
          .enabled(if: available, "needs root, strace, mkfs.ext4, losetup and loop devices: the power-loss states are not checked"),
          // A guard against a hang, not a speed check: on a loaded machine, beside the rest of the suite, the
          // minute it takes alone became over eight (seen under stress-ng --cpu 2 and two other suites).
          .timeLimit(.minutes(30)))
    func shortRun() throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["python3", Self.script, "--short", "--binary", PolicyctlBinary.path]
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        // Read both pipes while it runs: the log on stderr can fill a pipe's buffer.
        nonisolated(unsafe) var errData = Data()
        let reader = Thread { errData = err.fileHandleForReading.readDataToEndOfFile() }
        reader.start()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        while !reader.isFinished { usleep(10_000) }
        let stdout = String(decoding: outData, as: UTF8.self)
        let stderr = String(decoding: errData, as: UTF8.self)
        let last = stdout.split(separator: "\n").last.map(String.init) ?? ""
        // The last line is exactly `power-loss: N crash states, V violations`.
        let numbers = last.split { !$0.isNumber }.compactMap { Int($0) }
        #expect(last.hasPrefix("power-loss: ") && numbers.count == 2, "last line: \(last)\n\(stderr.suffix(4000))")
        guard numbers.count == 2 else { return }
        #expect(numbers[0] >= 200, "only \(numbers[0]) crash states explored")
        #expect(numbers[1] == 0, "violations:\n\(stderr.suffix(6000))")
        #expect(p.terminationStatus == (numbers[1] == 0 ? 0 : 1))
    }
}
