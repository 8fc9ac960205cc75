// `by: [atime, mtime]` through the built binary: a file read lately is kept though its mtime is old, one with
// both times old goes though its ctime is new (what `by: newest` would keep it for), names with a newline or
// bytes that are not UTF-8 included; validate --effective and explain name the list.
import TreeFixture
import Foundation
import Testing

@Suite("expire by a list of timestamps (end to end)")
struct ExpireByListEndToEndTests {
    /// Sets `path`'s atime to `hours` ago, leaving its mtime.
    static func setAccessTime(_ path: String, hoursAgo hours: Double) {
        var times = [timespec(tv_sec: Int(treeEpoch - Int64(hours * 3600)), tv_nsec: 0),
                     timespec(tv_sec: 0, tv_nsec: (1 << 30) - 2 /* UTIME_OMIT */)]
        #expect(utimensat(AT_FDCWD, path, &times, AT_SYMLINK_NOFOLLOW) == 0)
    }

    @Test("[atime, mtime] keeps what was read lately and deletes what is old by both, whatever its ctime")
    func plansAndApplies() throws {
        let scratch = ScratchDirectory("bylist")
        let root = scratch.sub("tree")
        try buildTree(at: root, [.dir("tmp", ageHours: 1), .file("tmp/old\nname", ageHours: 72),
                                 .rawFile(Array("tmp/x".utf8) + [0xFF], size: 10, ageHours: 72),
                                 .file("tmp/read-lately", ageHours: 72)])
        Self.setAccessTime(root + "/tmp/read-lately", hoursAgo: 1)
        let policy = scratch.path + "/p.yaml"
        try writePolicy(policy, "version: 1\nname: p\nrules:\n  - name: e\n    path: tmp\n    expire: { after: 1d, by: [atime, mtime] }\n")
        let effective = try policyctl(["validate", "--effective", policy])
        #expect(effective.stdout.contains("    expire: { after: 1d, by: [atime, mtime] }\n"), "\(effective)")
        let newest = scratch.path + "/newest.yaml"
        try writePolicy(newest, "version: 1\nname: p\nrules:\n  - name: e\n    path: tmp\n    expire: { after: 1d, by: newest }\n")
        // By newest, the ctime buildTree just gave every file keeps them all.
        let kept = try policyctl(["plan", "--policy", newest, "--root", root, "--detailed-exitcode"])
        #expect(kept.status == 0, "\(kept)")

        let plan = try policyctl(["plan", "--policy", policy, "--root", root])
        #expect(plan.status == 0, "\(plan)")
        #expect(plan.stdout.contains("newest of atime/mtime (atime) 3d ago > 1d") || plan.stdout.contains("newest of atime/mtime (mtime) 3d ago > 1d"), "\(plan)")
        #expect(plan.stdout.contains("tmp/old\\nname"), "\(plan)")
        #expect(!plan.stdout.contains("read-lately"), "\(plan)")
        let explain = try policyctl(["explain", "--policy", policy, "--root", root, "tmp/read-lately"])
        #expect(explain.stdout.contains("newest of atime/mtime (atime) 1h"), "\(explain)")

        let apply = try policyctl(["apply", "--policy", policy, "--root", root, "--yes"])
        #expect(apply.status == 0, "\(apply)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: root + "/tmp") == ["read-lately"])
    }
}
