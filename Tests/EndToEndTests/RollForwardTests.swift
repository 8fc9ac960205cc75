// Roll-forward deletes under attack, end to end: an apply is killed once its unlink intents are durable, then a
// co-tenant (uid 12345, via setpriv) swaps the planned files before root runs recovery. Recovery finishes only
// a delete whose entry is still exactly what its intent recorded; a swapped-in file or symlink is never removed.
import TreeFixture
import Foundation
import StoragePolicy
import Testing

@Suite("Roll-forward deletes against a co-tenant (binary, attacker uid 12345)")
struct RollForwardTests {
    static let canRunAsCoTenant: Bool = {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") else { return false }
        return (try? ChildProcess.run("/usr/bin/setpriv", ["--reuid=12345", "--regid=12345", "--clear-groups", "/bin/true"]))?.status == 0
    }()

    @Test("recovery finishes a durable roll-forward delete only on the recorded entry: a file or symlink swapped in meanwhile stays, and so does what it points to",
          .enabled(if: RollForwardTests.canRunAsCoTenant))
    func swappedBeforeRecovery() throws {
        let scratch = ScratchDirectory("rollforward")
        chmod(scratch.path, 0o755)
        let root = scratch.sub("root")
        chmod(root, 0o755)
        let outside = scratch.sub("outside")
        let policy = scratch.path + "/policy.yaml"
        try writePolicy(policy, "version: 1\nname: rollforward\nrules:\n  - name: tmp-expiry\n    path: tmp\n    expire: 24h\n")
        try buildTree(at: root, [.dir("tmp", ageHours: 48), .file("tmp/a.dat", size: 10), .file("tmp/b.dat", size: 10),
                                 .file("tmp/c.dat", size: 10)])
        // A folder everyone may write without the sticky bit: the co-tenant can replace root's entries in it.
        chmod(root + "/tmp", 0o777)
        try Data("victim\n".utf8).write(to: URL(fileURLWithPath: outside + "/keep"))
        chmod(outside + "/keep", 0o600)

        // Killed right after the intents are durable (begin, then the group): nothing deleted yet.
        let crashed = try policyctl(["apply", "--policy", policy, "--root", root, "--yes"],
                                    environment: ["POLICYCTL_CRASH_AFTER_RECORDS": "2"])
        #expect(crashed.signal == SIGKILL, "\(crashed)")
        let journal = try journalLines(root).joined(separator: "\n")
        #expect(journal.components(separatedBy: #""change":"unlink""#).count - 1 == 3, "\(journal)")
        #expect(FileManager.default.fileExists(atPath: root + "/tmp/a.dat"))

        // The co-tenant swaps a.dat for a file of its own and b.dat for a symlink to the outside victim.
        let swap = try ChildProcess.run("/usr/bin/setpriv", ["--reuid=12345", "--regid=12345", "--clear-groups", "/bin/sh", "-c",
            "printf mine > \(root)/tmp/.new && mv -f \(root)/tmp/.new \(root)/tmp/a.dat && ln -sfn \(outside)/keep \(root)/tmp/.link && mv -fT \(root)/tmp/.link \(root)/tmp/b.dat"])
        #expect(swap.status == 0, "\(swap.stderr)")

        let recover = try policyctl(["recover", "--root", root])
        #expect(recover.status == 0, "\(recover)")
        #expect(recover.stdout.contains("(0 changes undone, 1 roll-forward delete finished)"), "\(recover)")
        // Only c.dat was still what its intent recorded.
        #expect(!FileManager.default.fileExists(atPath: root + "/tmp/c.dat"))
        #expect(try String(contentsOfFile: root + "/tmp/a.dat", encoding: .utf8) == "mine")
        var status = stat()
        #expect(lstat(root + "/tmp/b.dat", &status) == 0 && (status.st_mode & S_IFMT) == S_IFLNK)
        #expect(try String(contentsOfFile: outside + "/keep", encoding: .utf8) == "victim\n")
        // Closed: nothing left for the next run to replay.
        #expect(try policyctl(["recover", "--root", root]).stdout.contains("Nothing to recover"))
    }
}
