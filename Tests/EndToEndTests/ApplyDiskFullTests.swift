// A real full disk: small tmpfs filesystems filled to the last byte. With the journal's space reserve in place
// apply still cleans up and frees space; without one (a first run ever on a full disk) its roll-forward file
// deletes make room before the journal begins, and then the rest applies.
import TreeFixture
import Foundation
import StoragePolicy
import Testing

@Suite("A full disk (real ENOSPC on a tmpfs)", .enabled(if: ScratchDirectory.canMountTmpfs))
struct ApplyDiskFullTests {
    /// Fills the filesystem holding `directory` with one file until ENOSPC, then gives back `pages` pages of it.
    private func fill(_ directory: String, leavingFreePages pages: Int = 0) {
        let path = directory + "/filler"
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let chunk = [UInt8](repeating: 0, count: 4096)
        var written = 0
        while chunk.withUnsafeBytes({ write(fd, $0.baseAddress, 4096) }) == 4096 { written += 4096 }
        // A last partial page, so not one byte is left.
        while chunk.withUnsafeBytes({ write(fd, $0.baseAddress, 1) }) == 1 { written += 1 }
        if pages > 0 { ftruncate(fd, off_t(max(0, written - pages * 4096))) }
        close(fd)
    }

    private func freeBytes(_ directory: String) -> Int64 {
        var s = statvfs()
        statvfs(directory, &s)
        return Int64(s.f_bavail) * Int64(s.f_frsize)
    }

    /// Opens the journal once (as every apply, trash and recover does first), which sets the reserve aside.
    private func prepareReserve(_ root: String) throws {
        let state = try #require(try StateDirectory.open(root: try DirectoryHandle.open(root: root), create: true))
        let lock = try state.lock(wait: false)
        _ = try Recovery.run(holding: lock)
    }

    @Test("a 2 MiB tmpfs with 0 bytes free: apply of an expiry policy deletes the expired files, exit 0, and frees space")
    func zeroBytesFree() throws {
        let scratch = ScratchDirectory("full")
        let fs = try scratch.tmpfs("fs", kilobytes: 2048)
        let root = fs + "/root"
        mkdir(root, 0o755)
        try buildTree(at: root, [.dir("tmp", ageHours: 48), .file("tmp/a.log", size: 200_000), .file("tmp/b.log", size: 200_000),
                                 .dir("tmp/sub", ageHours: 48), .file("tmp/sub/c.log", size: 100_000),
                                 .file("tmp/fresh.log", size: 1000, ageHours: 1)])
        let policy = scratch.path + "/expire.yaml"
        try writePolicy(policy, "version: 1\nname: expire\nrules:\n  - name: tmp-expiry\n    path: tmp\n    expire: { after: 24h }\n")
        // The state folder exists from an earlier run, as on any machine where a timer has run before.
        try prepareReserve(root)
        #expect(FileManager.default.fileExists(atPath: root + "/.policyctl/journal.reserve"))
        fill(fs)
        #expect(freeBytes(fs) == 0)
        let probe = open(fs + "/probe", O_WRONLY | O_CREAT, 0o600)
        let wrote = [UInt8](repeating: 1, count: 1).withUnsafeBytes { write(probe, $0.baseAddress, 1) }
        close(probe)
        unlink(fs + "/probe")
        #expect(wrote == -1, "the disk must be full to the last byte")

        let run = try policyctl(["apply", "--policy", policy, "--root", root, "--yes"])
        #expect(run.status == 0, "\(run)")
        #expect(try manifest(of: root) == ["tmp directory", "tmp/fresh.log file size=1000 mtime=\(manifestTime(ageHours: 1))"])
        #expect(freeBytes(fs) >= 400_000, "the deletes freed their space: \(freeBytes(fs)) bytes free")
        // The reserve is set aside again for the next full disk, and the journal says what happened.
        let reserve = try FileManager.default.attributesOfItem(atPath: root + "/.policyctl/journal.reserve")
        #expect((reserve[.size] as? Int ?? 0) > 0)
        #expect(try policyctl(["journal", "--root", root]).stdout.contains("committed"))
    }

    @Test("a first run ever (no state folder, no reserve) on a 2 MiB tmpfs with 0 bytes free: the file deletes make room before the journal, then the rest applies; exit 0, committed, the freed bytes named")
    func firstRunZeroBytesFree() throws {
        let scratch = ScratchDirectory("full")
        let fs = try scratch.tmpfs("fs", kilobytes: 2048)
        let root = fs + "/root"
        mkdir(root, 0o755)
        var nodes: [TreeNode] = [.dir("tmp", ageHours: 48)]
        for i in 0..<8 { nodes.append(.file("tmp/f\(i).log", size: 200_000)) }
        nodes += [.dir("tmp/sub", ageHours: 48), .file("tmp/sub/c.log", size: 100_000), .file("tmp/fresh.log", size: 1000, ageHours: 1)]
        try buildTree(at: root, nodes)
        let policy = scratch.path + "/expire.yaml"
        try writePolicy(policy, "version: 1\nname: expire\nrules:\n  - name: tmp-expiry\n    path: tmp\n    expire: { after: 24h }\n")
        #expect(!FileManager.default.fileExists(atPath: root + "/.policyctl"), "never applied before")
        fill(fs)
        #expect(freeBytes(fs) == 0)

        let run = try policyctl(["apply", "--policy", policy, "--root", root, "--yes"])
        #expect(run.status == 0, "\(run)")
        // The eight files went first, in one batch (each 200,000 bytes in 49 pages); the folder, staged, after.
        #expect((run.stdout + run.stderr).contains("disk full: freed \(8 * 49 * 4096) bytes before journaling (8 file deletes"), "\(run)")
        #expect(run.stdout.contains("applied: 9 delete"), "\(run)")
        #expect(try manifest(of: root) == ["tmp directory", "tmp/fresh.log file size=1000 mtime=\(manifestTime(ageHours: 1))"])
        let journal = try policyctl(["journal", "--root", root])
        #expect(journal.stdout.contains("committed"), "\(journal)")
        // The reserve is set aside for the next full disk.
        let reserve = try FileManager.default.attributesOfItem(atPath: root + "/.policyctl/journal.reserve")
        #expect((reserve[.size] as? Int ?? 0) > 0)
        #expect(try policyctl(["recover", "--root", root]).stdout.contains("Nothing to recover"))
    }

    @Test("the crash scenario with a reserve, for 0 to 8 free pages: always completes with exactly the after-manifest")
    func withReserve() throws {
        let ref = try CrashReference.make()
        for pages in 0...8 {
            let s = try CrashScenario(tmpfsKilobytes: 1024)
            // The filler lives beside the root, on the same filesystem.
            let fs = (s.root as NSString).deletingLastPathComponent
            try prepareReserve(s.root)
            fill(fs, leavingFreePages: pages)
            #expect(try s.manifest() == ref.before)
            let run = try policyctl(["apply", s.planFile, "--yes"])
            #expect(run.status == 0, "\(pages) free pages: \(run)")
            let m = try s.manifest()
            #expect(m == ref.after, "\(pages) free pages: \(Set(m).symmetricDifference(ref.after).sorted())")
            try s.expectStagingEmpty()
            try s.expectOutsideUntouched()
            unlink(fs + "/filler")
        }
    }

    @Test("a first run ever on a full disk (no reserve yet), 0 to 2 free pages: the file deletes make room first; what still cannot be journaled rolls back naming ENOSPC; once there is room it applies")
    func noReserveYet() throws {
        let ref = try CrashReference.make()
        for pages in 0...2 {
            let s = try CrashScenario(tmpfsKilobytes: 512)
            let fs = (s.root as NSString).deletingLastPathComponent
            fill(fs, leavingFreePages: pages)
            let run = try policyctl(["apply", s.planFile, "--yes"])
            let madeFirst = (run.stdout + run.stderr).contains("disk full: freed ")
            #expect(pages > 0 || madeFirst, "with no page free the begin record needs the file deletes' room: \(run)")
            if run.status == 0 {
                #expect(try s.manifest() == ref.after, "\(pages) free pages: \(run)")
            } else {
                #expect(run.status == 3 || run.status == 74, "\(pages) free pages: \(run)")
                #expect(run.stderr.contains("No space left on device (ENOSPC)"), "\(pages) free pages: \(run)")
                // The deletes made before the journal roll forward, like those the run made: gone either way.
                let first = madeFirst ? CrashScenario.rollForwardDeletes : []
                let expected = try s.rolledBack(ref).filter { line in !first.contains { line == $0 || line.hasPrefix($0 + " ") } }
                #expect(try s.manifest() == expected, "\(pages) free pages: \(run)")
            }
            unlink(fs + "/filler")
            let recover = try policyctl(["recover", "--root", s.root])
            #expect(recover.status == 0, "\(recover)")
            let again = try policyctl(["apply", s.planFile, "--yes"])
            #expect(again.status == 0 || run.status == 0, "\(again)")
            #expect(try s.manifest() == ref.after)
            try s.expectOutsideUntouched()
        }
    }
}
