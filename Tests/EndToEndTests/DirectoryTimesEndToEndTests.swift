// Folder times after apply (binary): a partly cleaned old folder keeps its atime and mtime, as systemd-tmpfiles
// leaves it; a crash after the times were put back is rolled back by `policyctl recover` like any other change.
import TreeFixture
import Foundation
import Testing

@Suite("apply restores folder times (binary)", .serialized)
struct DirectoryTimesEndToEndTests {
    static let policyText = "version: 1\nname: times\nrules:\n  - name: tmp-expiry\n    path: tmp\n    expire: 7d\n"

    struct Setup {
        let scratch = ScratchDirectory("times")
        let root: String
        let policy: String
        let originalMtime: Int

        init() throws {
            root = scratch.sub("root")
            policy = scratch.path + "/policy.yaml"
            try writePolicy(policy, DirectoryTimesEndToEndTests.policyText)
            mkdir(root + "/tmp", 0o755)
            mkdir(root + "/tmp/d", 0o755)
            for (name, hours) in [("old", 240), ("new", 1)] {
                close(open(root + "/tmp/d/" + name, O_WRONLY | O_CREAT, 0o644))
                Setup.age(root + "/tmp/d/" + name, hours: hours)
            }
            Setup.age(root + "/tmp/d", hours: 240)
            originalMtime = Setup.mtime(root + "/tmp/d")
        }

        static func age(_ path: String, hours: Int) {
            let t = Int(time(nil)) - hours * 3600
            var times = [timespec(tv_sec: t, tv_nsec: 0), timespec(tv_sec: t, tv_nsec: 0)]
            utimensat(AT_FDCWD, path, &times, AT_SYMLINK_NOFOLLOW)
        }

        static func mtime(_ path: String) -> Int {
            var s = stat()
            lstat(path, &s)
            return s.st_mtim.tv_sec
        }
    }

    @Test("an old folder partly cleaned keeps its old mtime, and goes on the next run once the rest is old")
    func partlyCleaned() throws {
        let s = try Setup()
        let run = try policyctl(["apply", "--yes", "--policy", s.policy, "--root", s.root])
        #expect(run.status == 0, "\(run)")
        #expect(!FileManager.default.fileExists(atPath: s.root + "/tmp/d/old"))
        #expect(Setup.mtime(s.root + "/tmp/d") == s.originalMtime)
        Setup.age(s.root + "/tmp/d/new", hours: 240)
        let next = try policyctl(["apply", "--yes", "--policy", s.policy, "--root", s.root])
        #expect(next.status == 0, "\(next)")
        #expect(!FileManager.default.fileExists(atPath: s.root + "/tmp/d"), "\(next.stdout)")
    }

    @Test("killed right after the times were put back: recover rolls that change back; the roll-forward delete stays done")
    func crashThenRecover() throws {
        let s = try Setup()
        // Change 1 unlinks tmp/d/old (roll-forward); change 2 puts tmp/d's times back; then the process dies.
        let run = try policyctl(["apply", "--yes", "--policy", s.policy, "--root", s.root],
                                environment: ["POLICYCTL_CRASH_AFTER_CHANGES": "2"])
        #expect(run.signal == SIGKILL, "\(run)")
        #expect(Setup.mtime(s.root + "/tmp/d") == s.originalMtime)
        let recover = try policyctl(["recover", "--root", s.root])
        #expect(recover.status == 0, "\(recover)")
        #expect(!FileManager.default.fileExists(atPath: s.root + "/tmp/d/old"))
        #expect(FileManager.default.fileExists(atPath: s.root + "/tmp/d/new"))
        // The uncommitted times change is undone: the folder has the times its removal gave it.
        #expect(Setup.mtime(s.root + "/tmp/d") > s.originalMtime + 200 * 3600)
        #expect(try policyctl(["recover", "--root", s.root]).stdout.contains("Nothing to recover"))
    }

    @Test("1,200 folders partly cleaned under a 1,024-descriptor limit: every time restored, every folder synced, none left open past the bound")
    func manyFoldersUnderDescriptorLimit() throws {
        let s = try Setup()
        // Each folder keeps a fresh file, loses an old one, and gets its old times back: all of them are dirty and
        // restored, and the commit syncs each one. Their descriptors must never be held all at once.
        for k in 0..<1_200 {
            let folder = s.root + "/tmp/f\(k)"
            mkdir(folder, 0o755)
            for (name, hours) in [("old", 240), ("new", 1)] {
                close(open(folder + "/" + name, O_WRONLY | O_CREAT, 0o644))
                Setup.age(folder + "/" + name, hours: hours)
            }
            Setup.age(folder, hours: 240)
        }
        let sampled = [0, 599, 1_199]
        let before = sampled.map { Setup.mtime(s.root + "/tmp/f\($0)") }
        let run = try ChildProcess.run("/bin/sh", ["-c", "ulimit -n 1024 && exec \"$0\" \"$@\"", PolicyctlBinary.path,
                                                   "apply", "--yes", "--max-delete", "none", "--policy", s.policy, "--root", s.root])
        #expect(run.status == 0, "\(run.stderr)")
        for (k, mtime) in zip(sampled, before) {
            #expect(!FileManager.default.fileExists(atPath: s.root + "/tmp/f\(k)/old"))
            #expect(FileManager.default.fileExists(atPath: s.root + "/tmp/f\(k)/new"))
            #expect(Setup.mtime(s.root + "/tmp/f\(k)") == mtime)
        }
    }
}
