// Runs the example executables (Examples/) built beside the tests, on trees made by the Tree fixture.
// Never runs anything but the named example from the products folder.
import Foundation
import Testing
import TreeFixture

enum ExampleBinary {
    struct Result {
        var status: Int32
        /// True when the process was killed by a signal (`status` is then the signal number).
        var signaled: Bool
        var stdout: String
        var stderr: String
        var lines: [String] { stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).filter { !$0.isEmpty } }
    }

    /// Runs example `name` with `arguments` and an environment overlay; waits for it.
    static func run(_ name: String, _ arguments: [String], environment: [String: String] = [:]) throws -> Result {
        let path = PolicyctlBinary.productsDirectory.appendingPathComponent(name).path
        guard FileManager.default.isExecutableFile(atPath: path) else { throw PolicyctlBinary.BinaryMissing(path: path) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        for (k, v) in environment { env[k] = v }
        process.environment = env
        let scratch = URL(fileURLWithPath: TestScratch.path("example"))
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let outURL = scratch.appendingPathComponent("out"), errURL = scratch.appendingPathComponent("err")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let out = try FileHandle(forWritingTo: outURL), err = try FileHandle(forWritingTo: errURL)
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        try out.close(); try err.close()
        return Result(status: process.terminationStatus, signaled: process.terminationReason == .uncaughtSignal,
                      stdout: String(decoding: try Data(contentsOf: outURL), as: UTF8.self),
                      stderr: String(decoding: try Data(contentsOf: errURL), as: UTF8.self))
    }

    /// Every path under `root` (outside `.policyctl`) with its size for files: what "the tree" means in checks.
    static func contents(_ root: String) -> [String] {
        Manifest.take(root).compactMap { entry -> String? in
            let path = String(decoding: entry.path, as: UTF8.self)
            guard !path.isEmpty, !path.hasPrefix(".policyctl") else { return nil }
            return entry.type == UInt32(S_IFDIR) ? path + "/" : "\(path) \(entry.size)"
        }.sorted()
    }
}
