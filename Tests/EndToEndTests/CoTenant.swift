// The co-tenant of the shared-roots tests: uid 12345 with no groups, reached from root through setpriv. One
// definition for every suite that plays it; never used to do anything but what an unprivileged user could.
import TreeFixture
import Foundation

enum CoTenant {
    /// The co-tenant's uid (and gid).
    static let uid: uid_t = 12345
    /// setpriv's arguments that drop from root to the co-tenant.
    static let drop = ["--reuid=\(uid)", "--regid=\(uid)", "--clear-groups"]

    /// True when this process is root and setpriv can drop to the co-tenant (tests that need it are skipped
    /// otherwise, with this as their condition).
    static let isAvailable: Bool = {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") else { return false }
        return (try? ChildProcess.run("/usr/bin/setpriv", drop + ["/bin/true"]))?.status == 0
    }()

    /// Runs `executable` as the co-tenant.
    static func run(_ executable: String, _ arguments: [String],
                    environment: [String: String] = [:]) throws -> PolicyctlBinary.Result {
        try ChildProcess.run("/usr/bin/setpriv", drop + [executable] + arguments, environment: environment)
    }

    /// Runs the built policyctl as the co-tenant.
    static func policyctl(_ arguments: [String], environment: [String: String] = [:]) throws -> PolicyctlBinary.Result {
        try run(PolicyctlBinary.path, arguments, environment: environment)
    }

    /// Runs a shell script as the co-tenant.
    static func sh(_ script: String) throws -> PolicyctlBinary.Result { try run("/bin/sh", ["-c", script]) }
}

/// A shell script run as the co-tenant in the background, round after round, until `stop()`: the races of the
/// co-tenant suites (folder swaps while apply and recovery run). The script is given the stop file's path; it
/// loops until that file exists, stopping only between rounds, and prints the rounds it made.
final class CoTenantLoop {
    private let process = Process()
    private let stopFile: String, outFile: String, errFile: String
    private var result: (status: Int32, rounds: Int, stderr: String)?

    /// Starts `script(stopFile)` as the co-tenant, its files named by `round` inside `folder`.
    init(in folder: String, round: Int, _ script: (_ stopFile: String) -> String) throws {
        stopFile = folder + "/stop-\(round)"
        outFile = folder + "/loop-\(round).out"
        errFile = folder + "/loop-\(round).err"
        _ = FileManager.default.createFile(atPath: outFile, contents: nil)
        _ = FileManager.default.createFile(atPath: errFile, contents: nil)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        process.arguments = CoTenant.drop + ["/bin/sh", "-c", script(stopFile)]
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: outFile))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errFile))
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Let it get going before the run it races.
        usleep(100_000)
    }

    /// Stops the loop after its current round and waits for it (killed, by its own pid, after 20 s).
    @discardableResult
    func stop() -> (status: Int32, rounds: Int, stderr: String) {
        if let result { return result }
        _ = FileManager.default.createFile(atPath: stopFile, contents: nil)
        let deadline = Date().addingTimeInterval(20)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        let out = (try? String(contentsOfFile: outFile, encoding: .utf8)) ?? ""
        let err = (try? String(contentsOfFile: errFile, encoding: .utf8)) ?? ""
        let stopped = (process.terminationStatus, Int(out.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1, err)
        result = stopped
        return stopped
    }

    deinit { stop() }
}
