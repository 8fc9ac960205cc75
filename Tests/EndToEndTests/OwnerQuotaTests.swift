// quota `per: owner` with the built binary as root: three owners' files in one sticky (1777) folder, chowned by
// root in the test, one owner over the per-owner limit. Only that owner's oldest files go; the two others keep
// every file, even though the folder as a whole is far over `max`. Plan and explain name whose quota it was.
import TreeFixture
import Foundation
import StoragePolicy
import Testing

@Suite("quota per: owner (binary, as root)")
struct OwnerQuotaTests {
    static let heavy: uid_t = 12345, light: uid_t = 12346, other: uid_t = 12347

    @Test("three owners in a 1777 folder, one over its limit: only that owner's oldest files go",
          .enabled(if: getuid() == 0))
    func onlyTheHeavyOwnerLoses() throws {
        let scratch = ScratchDirectory("owner-quota")
        chmod(scratch.path, 0o755)
        let root = scratch.sub("root")
        let shared = root + "/shared"
        // Each file 40 kB; heavy has five (200 kB), the others two each: per-owner max 100 kB, target 100%.
        var nodes: [TreeNode] = [.dir("shared")]
        for d in 1...5 { nodes.append(.file("shared/heavy\(d)", size: 40_000, ageHours: Double(d * 24))) }
        for d in 1...2 {
            nodes.append(.file("shared/light\(d)", size: 40_000, ageHours: Double(d * 100)))
            nodes.append(.file("shared/other\(d)", size: 40_000, ageHours: Double(d * 200)))
        }
        try buildTree(at: root, nodes)
        chmod(shared, 0o1777)
        for d in 1...5 { #expect(lchown(shared + "/heavy\(d)", Self.heavy, Self.heavy) == 0) }
        for d in 1...2 {
            #expect(lchown(shared + "/light\(d)", Self.light, Self.light) == 0)
            #expect(lchown(shared + "/other\(d)", Self.other, Self.other) == 0)
        }
        var s = stat()
        lstat(shared + "/heavy1", &s)
        let perFile = Int64(s.st_blocks) * 512
        // Room for exactly two files per owner: heavy must lose its three oldest (heavy3, heavy4, heavy5).
        let policy = scratch.path + "/policy.yaml"
        try writePolicy(policy, "version: 1\nname: owners\nrules:\n  - name: per-user\n    path: shared\n    quota: { max: \(perFile * 2)B, per: owner }\n")
        let plan = try policyctl(["plan", "--policy", policy, "--root", root, "--format", "json"])
        #expect(plan.status == 0, "\(plan)")
        let decoded = try Plan.decode(json: Data(plan.stdout.utf8))
        #expect(decoded.actions.map(\.path.escaped) == ["shared/heavy3", "shared/heavy4", "shared/heavy5"])
        #expect(decoded.actions.allSatisfy { $0.reason.hasPrefix("quota of uid 12345 (per: owner): ") }, "\(decoded.actions.map(\.reason))")
        let explain = try policyctl(["explain", "--policy", policy, "--root", root, "shared/light1"])
        #expect(explain.status == 0, "\(explain)")
        #expect(explain.stdout.contains("counts toward the quota of its owner, uid 12346"), "\(explain)")
        let r = try policyctl(["apply", "--policy", policy, "--root", root, "--yes"])
        #expect(r.status == 0, "\(r)")
        let left = try FileManager.default.contentsOfDirectory(atPath: shared).sorted()
        #expect(left == ["heavy1", "heavy2", "light1", "light2", "other1", "other2"], "\(r)")
    }
}
