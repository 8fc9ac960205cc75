// Expire rules judging by atime (or newest) on tmpfs mounted noatime, relatime and strictatime: plan names the
// rule once with the right note; a rule by mtime gets none. Every mount is detached in a defer.
import TreeFixture
import Foundation
import StoragePolicy
import Testing

@Suite("atime notes on noatime and relatime mounts (binary, as root)")
struct AccessTimeNoteTests {
    static let canMount: Bool = getuid() == 0

    @Test("noatime warns, relatime says once a day, strictatime and mtime say nothing", .enabled(if: Self.canMount),
          arguments: [(UInt(MS_NOATIME), "noatime"), (UInt(MS_RELATIME), "relatime"), (UInt(MS_STRICTATIME), "strict")])
    func notes(flags: UInt, label: String) throws {
        let scratch = ScratchDirectory("atime")
        let root = scratch.sub("root")
        guard mount("tmpfs", root, "tmpfs", flags, "size=256k,mode=0755") == 0 else {
            Issue.record("mount failed: \(errno)")
            return
        }
        defer { umount2(root, Int32(MNT_DETACH)) }
        try FileManager.default.createDirectory(atPath: root + "/tmp", withIntermediateDirectories: true)
        let policy = scratch.path + "/p.yaml"
        try writePolicy(policy, "version: 1\nname: a\nrules:\n  - name: by-atime\n    path: tmp\n    expire: { after: 1d, by: atime }\n  - name: by-newest\n    path: tmp\n    expire: { after: 2d, by: newest }\n  - name: by-mtime\n    path: tmp\n    expire: { after: 3d }\n")
        let r = try policyctl(["plan", "--policy", policy, "--root", root])
        let text = r.stdout + r.stderr
        switch label {
        case "noatime":
            #expect(text.contains("rule 'by-atime' judges by atime, but tmp is on a noatime mount: access times are never updated"), "\(text)")
            #expect(text.contains("rule 'by-newest' judges by newest (which includes atime), but tmp is on a noatime mount"), "\(text)")
        case "relatime":
            #expect(text.contains("rule 'by-atime' judges by atime; tmp is on a relatime mount: atime is updated at most once a day"), "\(text)")
            #expect(text.contains("rule 'by-newest' judges by newest (which includes atime); tmp is on a relatime mount"), "\(text)")
        default:
            #expect(!text.contains("atime mount"), "\(text)")
        }
        #expect(!text.contains("rule 'by-mtime' judges"), "\(text)")
    }
}
