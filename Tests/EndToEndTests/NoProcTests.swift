// Without /proc the Swift runtime's CommandLine.arguments is empty (it reads /proc/self/cmdline): policyctl
// used to print the top-level help and exit 0 for any command, so a timer in a bare chroot "succeeded" forever.
// The binary now takes main's own argv (saved by CPosix before main). Run in a mount namespace of its own with
// a tmpfs over /proc, as root.
import Foundation
import Testing

@Suite("without /proc the command line is still read (binary)", .serialized)
struct NoProcTests {
    /// `unshare -m` works here: root with CAP_SYS_ADMIN.
    static let canUnshareMount: Bool = {
        guard getuid() == 0, let r = try? ChildProcess.run("/usr/bin/unshare", ["-m", "/bin/true"]) else { return false }
        return r.status == 0
    }()

    /// Runs the binary with `arguments` in a new mount namespace whose /proc is an empty tmpfs.
    static func withoutProc(_ arguments: [String]) throws -> PolicyctlBinary.Result {
        let quoted = ([PolicyctlBinary.path] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        // The mount must not leak: --propagation private (unshare's default) keeps it in the namespace.
        return try ChildProcess.run("/usr/bin/unshare", ["-m", "--propagation", "private", "/bin/sh", "-c",
                                                         "mount -t tmpfs none /proc && test ! -e /proc/self && exec " + quoted.joined(separator: " ")])
    }

    @Test("apply --yes in a namespace with an empty /proc runs the apply it was given (not the top-level help, exit 0)",
          .enabled(if: NoProcTests.canUnshareMount))
    func applyWithoutProc() throws {
        let scratch = ScratchDirectory("noproc")
        let root = scratch.sub("root")
        let policy = scratch.path + "/policy.yaml"
        try writePolicy(policy, "version: 1\nname: noproc\nlayout:\n  - path: Library/Caches\n")
        let applied = try Self.withoutProc(["apply", "--policy", policy, "--root", root, "--yes"])
        #expect(applied.status == 0, "\(applied.stdout)\(applied.stderr)")
        #expect(!applied.stdout.contains("USAGE") && !applied.stdout.contains("SUBCOMMANDS"), "\(applied.stdout)")
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: root + "/Library/Caches", isDirectory: &isDirectory) && isDirectory.boolValue,
                "\(applied.stdout)\(applied.stderr)")

        // A wrong command line is still a usage error, not help and success.
        let wrong = try Self.withoutProc(["aply", "--policy", policy])
        #expect(wrong.status == 64, "\(wrong.stdout)\(wrong.stderr)")
        #expect(wrong.stderr.contains("Unknown subcommand 'aply'"), "\(wrong.stderr)")
    }
}
