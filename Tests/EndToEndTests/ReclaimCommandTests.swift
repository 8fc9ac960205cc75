// `policyctl reclaim --bytes N` with the built binary: frees that much through the pressure rules (free space
// stood in for by the debug seam POLICYCTL_FREE_SPACE, so the volume looks roomy and freeBelow alone would do
// nothing), oldest first, down to minAge; exit 1 naming the shortfall when the floors leave it short.
import TreeFixture
import Foundation
import Testing

@Suite("policyctl reclaim (binary)")
struct ReclaimCommandTests {
    @Test("reclaim frees the bytes asked, oldest first; asked for more than minAge allows it frees what it may and exits 1")
    func reclaim() throws {
        let scratch = ScratchDirectory("reclaim")
        chmod(scratch.path, 0o755)
        let root = scratch.sub("root")
        try buildTree(at: root, [.dir("cache"), .dir("docs"), .file("docs/mine", size: 5000, ageHours: 500)]
                      + (1...4).map { .file("cache/f\($0)", size: 5000, ageHours: Double($0 * 24)) })
        var s = stat()
        lstat(root + "/cache/f1", &s)
        let file = Int64(s.st_blocks) * 512
        let policy = scratch.path + "/p.yaml"
        try writePolicy(policy, "version: 1\nname: r\npressure:\n  - name: low\n    freeBelow: 10%\n    freeUntil: 15%\n    evict: [q]\nrules:\n  - name: q\n    path: cache\n    regenerable: true\n    quota: { max: 1GiB, minAge: 36h }\n")
        let roomy = ["POLICYCTL_FREE_SPACE": "500000/1000000"]
        let one = try policyctl(["reclaim", "--policy", policy, "--root", root, "--bytes", "\(file)B", "--yes"], environment: roomy)
        #expect(one.status == 0, "\(one)")
        #expect(one.stdout.contains("reclaim: \(file / 1024).0 KiB freed, at least the"), "\(one)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: root + "/cache").sorted() == ["f1", "f2", "f3"])
        let more = try policyctl(["reclaim", "--policy", policy, "--root", root, "--bytes", "1MiB", "--yes"], environment: roomy)
        #expect(more.status == 1, "\(more)")
        #expect(more.stdout.contains("short (the pressure rules' regenerable files"), "\(more)")
        // f1 is a day old, younger than minAge 36h: it stays, and so do the user's files.
        #expect(try FileManager.default.contentsOfDirectory(atPath: root + "/cache") == ["f1"])
        #expect(FileManager.default.fileExists(atPath: root + "/docs/mine"))
        let usage = try policyctl(["reclaim", "--policy", policy, "--root", root, "--yes"])
        #expect(usage.status == 64 && usage.stderr.contains("Missing --bytes <size>"), "\(usage)")
    }
}
