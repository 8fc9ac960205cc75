// The co-tenant of the shared-roots tests: uid 12345 with no groups, reached from root through setpriv. One
// definition for every suite that plays it; never used to do anything but what an unprivileged user could.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
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
