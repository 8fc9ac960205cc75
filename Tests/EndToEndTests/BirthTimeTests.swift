// expire `by: birth` through the binary: judged by statx btime (a backdated mtime does not matter), and on a file
// system that records no birth time (ramfs) plan says so once for the rule and keeps every entry.
import TreeFixture
import Foundation
import StoragePolicy
import Testing

@Suite("expire by: birth (binary)")
struct BirthTimeTests {
    static let policy = "version: 1\nname: b\nrules:\n  - name: by-birth\n    path: tmp\n    expire: { after: 1s, by: birth }\n"

    @Test("judged by btime: a file born two seconds ago goes, whatever its mtime; one born now stays")
    func byBirth() throws {
        let scratch = ScratchDirectory("birth")
        let root = scratch.sub("root")
        // mtime far in the future for the old one, far in the past for the new one: only btime decides.
        try buildTree(at: root, [.dir("tmp", ageHours: 1), .file("tmp/born-early", ageHours: -1000)])
        Thread.sleep(forTimeInterval: 2.2)
        try buildTree(at: root, [.file("tmp/born-now", ageHours: 10_000)])
        let policy = scratch.path + "/p.yaml"
        try writePolicy(policy, Self.policy)
        let r = try policyctl(["plan", "--policy", policy, "--root", root, "--format", "json"])
        #expect(r.stdout.contains("tmp/born-early"), "\(r)")
        #expect(!r.stdout.contains("tmp/born-now"), "\(r)")
        #expect(!r.stdout.contains("records none"), "\(r)")
    }

    @Test("no birth time on the file system: one note for the rule, every entry kept", .enabled(if: getuid() == 0))
    func noBirthTime() throws {
        let scratch = ScratchDirectory("birth")
        let root = scratch.sub("root")
        guard mount("ramfs", root, "ramfs", 0, "mode=0755") == 0 else {
            Issue.record("mount failed: \(errno)")
            return
        }
        defer { umount2(root, Int32(MNT_DETACH)) }
        try buildTree(at: root, [.dir("tmp", ageHours: 1), .file("tmp/a"), .file("tmp/b")])
        Thread.sleep(forTimeInterval: 1.2)
        let policy = scratch.path + "/p.yaml"
        try writePolicy(policy, Self.policy)
        let r = try policyctl(["plan", "--policy", policy, "--root", root])
        let text = r.stdout + r.stderr
        #expect(text.components(separatedBy: "rule 'by-birth' judges by birth time, but the file system of tmp records none: its entries are skipped (kept)").count == 2, "\(text)")
        #expect(text.contains("No changes. 0 to delete"), "\(text)")
    }
}
