// A real full disk: the crash scenario on a small tmpfs, filled so that only a few pages are free, for every
// amount from none up. Apply either completes or is rolled back with ENOSPC named; nothing is ever lost.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import StoragePolicy
import Testing

@Suite("A full disk (real ENOSPC on a tmpfs)", .enabled(if: ScratchDirectory.canMountTmpfs))
struct ApplyDiskFullTests {
    /// Fills the filesystem holding `directory` with one file, then gives back `pages` pages of it.
    private func fill(_ directory: String, leavingFreePages pages: Int) {
        let path = directory + "/filler"
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let chunk = [UInt8](repeating: 0, count: 4096)
        var written = 0
        while chunk.withUnsafeBytes({ write(fd, $0.baseAddress, 4096) }) == 4096 { written += 4096 }
        ftruncate(fd, off_t(max(0, written - pages * 4096)))
        close(fd)
    }

    @Test("apply on a full disk: completes, or rolls back naming ENOSPC; recover afterwards converges")
    func diskFull() throws {
        let ref = try CrashReference.make()
        var outcomes: [Int32] = []
        for pages in 0...8 {
            let s = try CrashScenario(tmpfsKilobytes: 512)
            // The filler lives beside the root, on the same filesystem.
            let fs = (s.root as NSString).deletingLastPathComponent
            fill(fs, leavingFreePages: pages)
            let before = try s.manifest()
            #expect(before == ref.before)
            let run = try policyctl(["apply", s.planFile, "--yes"])
            outcomes.append(run.status)
            let m = try s.manifest()
            if run.status == 0 {
                #expect(m == ref.after, "\(pages) free pages: \(run)")
            } else {
                #expect(run.status == 3 || run.status == 74, "\(pages) free pages: \(run)")
                #expect(run.stderr.contains("No space left on device (ENOSPC)"), "\(pages) free pages: \(run)")
                #expect(m == ref.before, "\(pages) free pages: \(Set(m).symmetricDifference(ref.before).sorted())")
            }
            unlink(fs + "/filler")
            let recover = try policyctl(["recover", "--root", s.root])
            #expect(recover.status == 0, "\(recover)")
            #expect(try s.manifest() == (run.status == 0 ? ref.after : ref.before))
            try s.expectOutsideUntouched()
        }
        #expect(outcomes.first != 0, "with no free page at all, apply cannot journal and must not change anything")
        #expect(outcomes.contains(3), "somewhere in between it fails midway and rolls back")
        #expect(outcomes.contains(0), "with a few free pages it completes")
    }
}
