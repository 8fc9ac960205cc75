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

    @Test("killed after folders got their times back between groups: recover rolls those back and finishes the deletes both groups journaled")
    func crashAfterTimesBetweenGroups() throws {
        let s = try Setup()
        // 300 folders, each losing its old file: the first group unlinks 256 of them (f299 down to f044); the
        // second group's intents put back the times of the folders it has left (at most 128), carried out
        // before its own unlinks. The process dies after ten of those. Unlinked on the run's thread, so every
        // first-group folder but the last is noted when the second group starts (no worker still behind).
        for k in 0..<300 {
            let folder = s.root + "/tmp/f" + String(format: "%03d", k)
            mkdir(folder, 0o755)
            for (name, hours) in [("old", 240), ("new", 1)] {
                close(open(folder + "/" + name, O_WRONLY | O_CREAT, 0o644))
                Setup.age(folder + "/" + name, hours: hours)
            }
            Setup.age(folder, hours: 240)
        }
        let folders = (0..<300).map { s.root + "/tmp/f" + String(format: "%03d", $0) }
        // Each folder's own: on a loaded machine the 300 were aged over more than one second.
        let original = folders.map(Setup.mtime)
        let run = try policyctl(["apply", "--yes", "--max-delete", "none", "--policy", s.policy, "--root", s.root],
                                environment: ["POLICYCTL_CRASH_AFTER_CHANGES": "266", "POLICYCTL_UNLINK_IN_PLACE": "1"])
        #expect(run.signal == SIGKILL, "\(run)")
        // What the dead run journaled: times intents, before a single delete of the second group.
        let journal = String(decoding: FileManager.default.contents(atPath: s.root + "/.policyctl/journal.jsonl") ?? Data(), as: UTF8.self)
        let timesIntents = journal.split(separator: "\n").filter { $0.contains("\"change\":\"times\"") }.count
        #expect(timesIntents == 128, "\(timesIntents) times intents")
        let restoredBeforeRecover = (44..<300).filter { Setup.mtime(folders[$0]) == original[$0] }.count
        #expect(restoredBeforeRecover == 10)
        // The second group's unlinks were journaled with those intents, and none was made yet.
        #expect(folders[..<44].allSatisfy { FileManager.default.fileExists(atPath: $0 + "/old") })
        let recover = try policyctl(["recover", "--root", s.root])
        #expect(recover.status == 0, "\(recover)")
        // Every journaled delete is finished (roll-forward), the first group's by the run, the second's by
        // recover; every uncommitted times change is undone: each folder has the times its removal gave it.
        for (k, folder) in folders.enumerated() {
            #expect(FileManager.default.fileExists(atPath: folder + "/new"))
            #expect(!FileManager.default.fileExists(atPath: folder + "/old"))
            #expect(Setup.mtime(folder) > original[k] + 200 * 3600, "f\(k)")
        }
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
