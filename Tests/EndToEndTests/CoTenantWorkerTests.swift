// The unlink workers against a co-tenant (uid 12345, via setpriv), the binary run as root: four workers delete
// files that hold data while the co-tenant, in a loop, swaps planned names for hard links and symlinks to a
// victim's files (uid 12346, outside the plan and the root) and swaps its folder for a symlink to the victim's
// folder. Each worker checks the identity just before its unlinkat through the folder's descriptor, so a swapped
// name is skipped, never unlinked, and nothing is followed. Then the same with a SIGKILL during the workers'
// unlinks, and recovery while the co-tenant still swaps.
import TreeFixture
import Foundation
import Testing

@Suite("unlink workers against a co-tenant's swaps (binary, attacker uid 12345, victim uid 12346)", .serialized)
struct CoTenantWorkerTests {
    static let victimUID: uid_t = 12346
    static let policyText = "version: 1\nname: workers\nrules:\n  - name: tmp-expiry\n    path: tmp\n    expire: 7d\n"
    /// The names the loop swaps; the victim's folder holds files of the same names (bait for a path lookup).
    static let swapped = 1...8

    /// What must not change about a victim file: inode, link count, owner, mode, size and contents.
    struct VictimFile: Equatable {
        var inode: UInt64, links: UInt64, uid: UInt32, mode: UInt32, contents: String?
        init?(_ path: String) {
            var s = stat()
            guard lstat(path, &s) == 0 else { return nil }
            inode = UInt64(s.st_ino); links = UInt64(s.st_nlink); uid = s.st_uid; mode = s.st_mode
            contents = try? String(contentsOfFile: path, encoding: .utf8)
        }
    }

    /// A root-owned root with `tmp` (1777); in it the co-tenant's folder `w` of `count` old files of 16 KiB
    /// each (data: four workers) and a fresh one. Outside, the victim's folder (uid 12346) with files named
    /// like the swapped ones, world-writable so the kernel lets the co-tenant hard-link them
    /// (protected_hardlinks). The plan is saved.
    final class World {
        let scratch = ScratchDirectory("coworkers")
        let root: String, tmp: String, victim: String, planFile: String
        let names: [String]
        /// The co-tenant's other folders `x1`...: `spread` of them, each with 60 old empty files.
        let others: [String]

        init(count: Int, spread: Int = 0) throws {
            chmod(scratch.path, 0o755)
            root = scratch.sub("root")
            tmp = root + "/tmp"
            mkdir(tmp, 0o755)
            chmod(tmp, 0o1777)
            victim = scratch.sub("victim")
            for k in CoTenantWorkerTests.swapped {
                let path = victim + "/old\(k)"
                try "the victim's file \(k)\n".write(toFile: path, atomically: false, encoding: .utf8)
                chmod(path, 0o666)
                chown(path, CoTenantWorkerTests.victimUID, CoTenantWorkerTests.victimUID)
            }
            chown(victim, CoTenantWorkerTests.victimUID, CoTenantWorkerTests.victimUID)
            names = (1...count).map { "old\($0)" }
            let made = try CoTenant.sh("""
                cd '\(tmp)' && mkdir w && cd w && i=1 && while [ $i -le \(count) ]; do \
                head -c 16384 /dev/zero | tr '\\0' x > old$i; i=$((i+1)); done && echo fresh > new
                """)
            #expect(made.status == 0, "co-tenant setup failed: \(made.stderr)")
            others = spread == 0 ? [] : (1...spread).map { "x\($0)" }
            for folder in others {
                let more = try CoTenant.sh("cd '\(tmp)' && mkdir \(folder) && cd \(folder) && i=1 && while [ $i -le 60 ]; do : > e$i; i=$((i+1)); done")
                #expect(more.status == 0, "co-tenant setup failed: \(more.stderr)")
            }
            let old = timespec(tv_sec: time(nil) - 12 * 86_400, tv_nsec: 0)
            var times = [old, old]
            for name in names { utimensat(AT_FDCWD, tmp + "/w/" + name, &times, AT_SYMLINK_NOFOLLOW) }
            for folder in others { for i in 1...60 { utimensat(AT_FDCWD, tmp + "/\(folder)/e\(i)", &times, AT_SYMLINK_NOFOLLOW) } }
            let policy = scratch.path + "/policy.yaml"
            planFile = scratch.path + "/plan.json"
            try writePolicy(policy, CoTenantWorkerTests.policyText)
            let plan = try policyctl(["plan", "--policy", policy, "--root", root, "--out", planFile])
            #expect(plan.status == 0, "\(plan)")
            #expect(plan.stdout.contains("Plan: \(count + 60 * spread) to delete"), "\(plan)")
        }

        func victimFiles() -> [VictimFile?] { CoTenantWorkerTests.swapped.map { VictimFile(victim + "/old\($0)") } }

        /// The names in `w` (the real folder once the loop has stopped).
        func left() throws -> Set<String> { Set(try FileManager.default.contentsOfDirectory(atPath: tmp + "/w")) }
    }

    /// The co-tenant's loop, in the background until `stop()`: each round moves each swapped name aside, puts a
    /// hard link and then a symlink to the victim's file of that name in its place, and moves the file back;
    /// then moves `w` aside for a symlink to the victim's folder and back. It stops only between rounds, so
    /// every name is what it was once it has stopped. A name the run deleted meanwhile is left alone.
    static func swapLoop(_ w: World, round: Int) throws -> CoTenantLoop {
        let names = CoTenantWorkerTests.swapped.map(String.init).joined(separator: " ")
        return try CoTenantLoop(in: w.scratch.path, round: round) { stopFile in """
            cd '\(w.tmp)'; n=0
            while [ ! -e '\(stopFile)' ]; do
              for k in \(names); do
                if mv w/old$k w/.hold$k 2>/dev/null; then
                  ln '\(w.victim)'/old$k w/old$k && rm w/old$k && ln -s '\(w.victim)'/old$k w/old$k && rm w/old$k
                  mv w/.hold$k w/old$k || exit 1
                fi
              done
              mv w w.real && ln -s '\(w.victim)' w && rm w && mv w.real w || exit 2
              n=$((n+1))
            done
            echo $n
            """ }
    }

    /// The state every run must leave: the victim's files exactly as made, `w` holding only planned names that
    /// are still the co-tenant's own files (no link, no symlink, nothing held aside), and the fresh file kept.
    private func expectIntact(_ w: World, victims: [VictimFile?], _ context: String) throws {
        #expect(w.victimFiles() == victims, "\(context): a victim file changed")
        for (k, file) in zip(CoTenantWorkerTests.swapped, victims) {
            #expect(file?.links == 1 && file?.contents == "the victim's file \(k)\n", "\(context)")
        }
        let left = try w.left()
        #expect(left.subtracting(w.names) == ["new"], "\(context): \(left.subtracting(w.names).sorted())")
        #expect((try? String(contentsOfFile: w.tmp + "/w/new", encoding: .utf8)) == "fresh\n")
        for name in left {
            var s = stat()
            #expect(lstat(w.tmp + "/w/" + name, &s) == 0 && (s.st_mode & S_IFMT) == S_IFREG && s.st_nlink == 1
                    && s.st_uid == CoTenant.uid, "\(context): \(name) is not the co-tenant's own file")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: w.tmp).sorted() == (["w"] + w.others).sorted(), "\(context): nothing left aside in tmp")
    }

    @Test("four workers delete 400 files of 16 KiB while the co-tenant swaps names for hard links and symlinks to the victim's files: the victim's files keep content and link count, nothing outside the plan changes",
          .enabled(if: CoTenant.isAvailable))
    func swapsDuringWorkerUnlinks() throws {
        let w = try World(count: 400)
        let victims = w.victimFiles()
        #expect(victims.allSatisfy { $0?.uid == CoTenantWorkerTests.victimUID && $0?.links == 1 })
        let loop = try Self.swapLoop(w, round: 1)
        defer { loop.stop() }
        // 1 ms after each unlink: the workers' run lasts long enough for many rounds of swaps.
        let run = try policyctl(["apply", w.planFile, "--yes", "--max-delete", "none"], environment: ["POLICYCTL_DELAY_PER_CHANGE_MS": "1"])
        let stopped = loop.stop()
        #expect(stopped.status == 0, "the swap loop failed: \(stopped.stderr)")
        #expect(stopped.rounds >= 1)
        #expect(run.signal == nil)
        #expect(run.status == 0, "\(run)")
        try expectIntact(w, victims: victims, "after apply")
        let counts = try #require(CoTenantDirectoryTimesTests.summary(run.stdout), "\(run)")
        let left = try w.left().subtracting(["new"])
        #expect(counts.deleted == w.names.count - left.count, "\(run)")
        #expect(counts.deleted + counts.skipped == w.names.count, "\(run)")
        let recover = try policyctl(["recover", "--root", w.root])
        #expect(recover.stdout == "Nothing to recover: no interrupted transaction under \(w.root).\n", "\(recover)")
    }

    @Test("the workers take folders' runs: 400 files of 16 KiB in w and 8 more folders of 60 empty files, while the co-tenant swaps in w: the victim's files intact, every other folder emptied",
          .enabled(if: CoTenant.isAvailable))
    func swapsWhileWorkersTakeFolders() throws {
        let w = try World(count: 400, spread: 8)
        let victims = w.victimFiles()
        let loop = try Self.swapLoop(w, round: 9)
        defer { loop.stop() }
        let run = try policyctl(["apply", w.planFile, "--yes", "--max-delete", "none"], environment: ["POLICYCTL_DELAY_PER_CHANGE_MS": "1"])
        let stopped = loop.stop()
        #expect(stopped.status == 0, "the swap loop failed: \(stopped.stderr)")
        #expect(run.signal == nil)
        #expect(run.status == 0, "\(run)")
        try expectIntact(w, victims: victims, "after apply")
        for folder in w.others {
            #expect(try FileManager.default.contentsOfDirectory(atPath: w.tmp + "/" + folder) == [], "\(folder)")
        }
        let counts = try #require(CoTenantDirectoryTimesTests.summary(run.stdout), "\(run)")
        let left = try w.left().subtracting(["new"])
        #expect(counts.deleted == w.names.count - left.count + 60 * w.others.count, "\(run)")
        #expect(counts.deleted + counts.skipped == w.names.count + 60 * w.others.count, "\(run)")
    }

    @Test("killed during the workers' unlinks while the co-tenant swaps, recovered while it still swaps and once it stops: the victim's files intact, recovery converges and closes the transaction",
          .enabled(if: CoTenant.isAvailable))
    func killedDuringWorkerUnlinks() throws {
        // SIGKILL after the 60th change: the workers are unlinking, with more unlink intents durable. When the
        // loop had `w` moved aside as the run reached it, every delete is skipped as vanished (safe, and no kill):
        // then the scenario is set up again, a few times at most.
        var attempt = 0
        var setup: (World, [VictimFile?], CoTenantLoop, RunResult)? = nil
        while setup == nil && attempt < 5 {
            attempt += 1
            let w = try World(count: 400)
            let victims = w.victimFiles()
            let loop = try Self.swapLoop(w, round: 1 + attempt)
            let run = try policyctl(["apply", w.planFile, "--yes", "--max-delete", "none"],
                                    environment: ["POLICYCTL_DELAY_PER_CHANGE_MS": "1", "POLICYCTL_CRASH_AFTER_CHANGES": "60"])
            if run.signal == SIGKILL { setup = (w, victims, loop, run) } else {
                #expect(run.status == 0 || run.status == 1, "\(run)")
                loop.stop()
                try expectIntact(w, victims: victims, "after an apply that met w moved aside")
            }
        }
        let (w, victims, loop, run) = try #require(setup, "five applies in a row were never killed during the workers' unlinks")
        defer { loop.stop() }
        #expect(run.signal == SIGKILL, "\(run)")
        // The loop is still running: `w` may be moved aside for an instant, so look until it is there.
        var seen: Set<String>? = nil
        for _ in 0..<200 where seen == nil {
            seen = try? w.left()
            if seen == nil { usleep(5_000) }
        }
        #expect(try #require(seen).count < w.names.count + 1, "some unlinks were made before the kill")
        // While names come and go, recovery finishes a delete only on the exact entry through the real folder;
        // it may leave one it could not settle for the next recover (exit 74).
        let racing = try policyctl(["recover", "--root", w.root])
        #expect(racing.status == 0 || racing.status == 74, "\(racing)")
        let stopped = loop.stop()
        #expect(stopped.status == 0, "the swap loop failed: \(stopped.stderr)")
        let calm = try policyctl(["recover", "--root", w.root])
        #expect(calm.status == 0, "\(calm)")
        let again = try policyctl(["recover", "--root", w.root])
        #expect(again.stdout == "Nothing to recover: no interrupted transaction under \(w.root).\n", "\(again)")
        try expectIntact(w, victims: victims, "after recovery")
        // The transaction is closed in the journal: its last record is an end.
        #expect(try journalLines(w.root).last?.contains(#""type":"end""#) == true)
    }
}
