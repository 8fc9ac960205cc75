// Finds and runs the built `policyctl` binary for end-to-end tests; never runs anything else.
// `swift test` builds every product, so the binary sits beside the test bundle in the products folder.
import Foundation
import TreeFixture
import Testing

enum PolicyctlBinary {
    /// The products folder: where this test executable was built.
    static let productsDirectory: URL = {
        let exe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        var dir = exe.deletingLastPathComponent()
        // On Darwin the tests run inside a .xctest bundle: climb out of it.
        while dir.pathExtension == "xctest" || dir.lastPathComponent == "MacOS" || dir.lastPathComponent == "Contents" {
            dir = dir.deletingLastPathComponent()
        }
        return dir
    }()

    static var path: String { productsDirectory.appendingPathComponent("policyctl").path }

    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
        var stdoutData: Data
    }

    /// Runs policyctl with `arguments`, no stdin, an optional environment overlay; waits for it.
    @discardableResult
    static func run(_ arguments: [String], environment: [String: String] = [:], cwd: String? = nil) throws -> Result {
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw BinaryMissing(path: path)
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env["NO_COLOR"] = "1"
        for (k, v) in environment { env[k] = v }
        process.environment = env
        if let cwd { process.currentDirectoryURL = URL(fileURLWithPath: cwd) }
        // Output goes to files, not pipes: a chatty child can never block on a full pipe.
        let scratch = URL(fileURLWithPath: TestScratch.path("run"))
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
        let outData = try Data(contentsOf: outURL), errData = try Data(contentsOf: errURL)
        return Result(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                      stderr: String(decoding: errData, as: UTF8.self), stdoutData: outData)
    }

    struct BinaryMissing: Error, CustomStringConvertible {
        var path: String
        var description: String { "policyctl was not built at \(path); run `swift build` first" }
    }
}

@Suite("The policyctl binary") struct BinarySmokeTests {
    @Test("--help lists the subcommands and exits 0") func help() throws {
        let r = try PolicyctlBinary.run(["--help"])
        #expect(r.status == 0)
        #expect(r.stdout.hasPrefix("OVERVIEW: "))
        #expect(r.stdout.contains("SUBCOMMANDS:"))
    }

    @Test("an unknown subcommand is a usage error (64) with a suggestion") func unknown() throws {
        let r = try PolicyctlBinary.run(["versoin"])
        #expect(r.status == 64)
        #expect(r.stderr.contains("Error: Unknown subcommand 'versoin' (did you mean 'version'?)"))
    }
}

@Suite("Version") struct VersionTests {
    @Test("--version prints the version and the revision it was built from, or says an unstamped build has none") func version() throws {
        let r = try PolicyctlBinary.run(["--version"])
        #expect(r.status == 0)
        #expect(r.stdout.range(of: #"^policyctl \d+\.\d+\.\d+ \((development build: no revision recorded; 'make build' records it|[0-9a-f]{12}(-dirty)?|unknown)\)\n$"#, options: .regularExpression) != nil, "\(r.stdout)")
    }
}
