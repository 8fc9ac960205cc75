// Jobs for the scheduling tests, the built policyctl binary (systemd-analyze verify needs an ExecStart that
// exists) and a way to run system tools; temp directories are per test, never the working directory.
import Foundation
import TreeFixture
@testable import StoragePolicy
@testable import StoragePolicyReports

enum SchedulingFixture {
    /// The policyctl binary built next to the test bundle.
    static var builtBinary: String {
        let runner = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        return runner.deletingLastPathComponent().appendingPathComponent("policyctl").path
    }

    static func job(_ trigger: ScheduleTrigger, root: String = "/srv/data", policy: String = "/etc/policyctl/app-sandbox.yaml",
                    executable: String = "/usr/local/bin/policyctl", scope: ScheduledJob.Scope = .system) throws -> ScheduledJob {
        try ScheduledJob(name: "app-sandbox", policyName: "app-sandbox", executable: executable, policyPath: policy,
                         root: root, trigger: trigger, scope: scope, home: "/Users/ana")
    }

    static func every(_ text: String) throws -> ScheduleTrigger { try ScheduleTrigger(every: text) }
    static func on(_ text: String) throws -> ScheduleTrigger { try ScheduleTrigger(calendar: text) }

    struct Outcome { var status: Int32; var stdout: String; var stderr: String }

    /// Runs a program to completion with no standard input.
    static func run(_ program: String, _ arguments: [String]) throws -> Outcome {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Read both pipes before waiting, so a chatty program cannot block on a full pipe.
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Outcome(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
                       stderr: String(decoding: stderr, as: UTF8.self))
    }

    static let systemdAnalyze = "/usr/bin/systemd-analyze"
    static var hasSystemdAnalyze: Bool { FileManager.default.isExecutableFile(atPath: systemdAnalyze) }

    /// A fresh directory under the system temp directory, removed by the caller.
    static func temporaryDirectory(_ label: String) throws -> String {
        let path = TestScratch.path(label)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}
