// Policy language 1.1 through the built binary: extends (effective policy, stale saved plans when any file of
// the chain changes) and the max-delete floor that lets a timer clean a small tree.
import Foundation
import StoragePolicy
import Testing

@Suite("policy language 1.1 (end to end)")
struct PolicyLanguageTests {
    static let packageRoot = String(#filePath).components(separatedBy: "/Tests/")[0]

    @Test("the issue's case: ios-app-sandbox's bare 25% allows at least 10, so one expired file among 2 entries is cleaned")
    func smallTreeIsCleaned() throws {
        let scratch = ScratchDirectory("lang")
        let root = scratch.sub("tree")
        try buildTree(at: root, [.dir("tmp", ageHours: 1), .file("tmp/old", ageHours: 48)])
        let policy = Self.packageRoot + "/Policies/ios-app-sandbox.yaml"
        let run = try policyctl(["apply", "--policy", policy, "--root", root, "--yes"])
        #expect(run.status == 0, "\(run)")
        #expect(!FileManager.default.fileExists(atPath: root + "/tmp/old"))
    }

    @Test("a percentage with a floor: refused above the larger of the two, applied at exactly it")
    func floorBothEnds() throws {
        let scratch = ScratchDirectory("lang")
        let root = scratch.sub("tree")
        var nodes: [TreeNode] = [.dir("tmp", ageHours: 1)]
        for i in 0..<4 { nodes.append(.file("tmp/old\(i)")) }
        try buildTree(at: root, nodes)
        let policy = scratch.path + "/p.yaml"
        // 4 expired among 5 entries: 25% of 5 is 1, the floor 3 is larger, and 4 is over it.
        try writePolicy(policy, "version: 1\nname: floor\nmax-delete: { percent: 25%, atLeast: 3 }\nrules:\n  - name: e\n    path: tmp\n    expire: 24h\n")
        let refused = try policyctl(["apply", "--policy", policy, "--root", root, "--yes"])
        #expect(refused.status == 3, "\(refused)")
        #expect(refused.stderr.contains("apply refused: would delete 4 entries, more than the policy's max-delete 25% (at least 3) (3 of 5 entries scanned); nothing was changed"))
        try writePolicy(policy, "version: 1\nname: floor\nmax-delete: { percent: 25%, atLeast: 4 }\nrules:\n  - name: e\n    path: tmp\n    expire: 24h\n")
        let applied = try policyctl(["apply", "--policy", policy, "--root", root, "--yes"])
        #expect(applied.status == 0, "\(applied)")
        #expect(try manifest(of: root) == ["tmp directory"])
    }

    @Test("validate --effective prints the merged policy with each rule's file; it loads back")
    func effective() throws {
        let scratch = ScratchDirectory("lang")
        let policy = scratch.path + "/p.yaml"
        try writePolicy(scratch.path + "/team.yaml", "version: 1\nname: team\nrules:\n  - name: logs\n    path: Logs\n    expire: 30d\n")
        try writePolicy(policy, "version: 1\nname: p\nextends: [download-manager, ./team.yaml]\nrules:\n  - name: logs\n    path: Logs\n    expire: 7d\n")
        let r = try policyctl(["validate", "--effective", policy])
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout.contains("  # from \(policy):5\n  - name: \"logs\"\n    path: \"Logs\"\n    expire: { after: 1w, by: mtime }\n"))
        #expect(r.stdout.contains("# from bundled:download-manager:"))
        #expect(!r.stdout.contains("30d"))
        let effective = scratch.path + "/effective.yaml"
        try writePolicy(effective, r.stdout)
        #expect(try policyctl(["validate", effective]).status == 0)
    }

    @Test("a saved plan goes stale when a file the policy extends changes (exit 3); unchanged, it applies")
    func staleChain() throws {
        let scratch = ScratchDirectory("lang")
        let root = scratch.sub("tree")
        try buildTree(at: root, [.dir("tmp", ageHours: 1), .file("tmp/old")])
        let base = scratch.path + "/base.yaml"
        let policy = scratch.path + "/p.yaml"
        try writePolicy(base, "version: 1\nname: base\nrules:\n  - name: e\n    path: tmp\n    expire: 24h\n")
        try writePolicy(policy, "version: 1\nname: p\nextends: [./base.yaml]\n")
        let planFile = scratch.path + "/plan.json"
        #expect(try policyctl(["plan", "--policy", policy, "--root", root, "--out", planFile]).status == 0)
        try writePolicy(base, "version: 1\nname: base\nrules:\n  - name: e\n    path: tmp\n    expire: 12h\n")
        let stale = try policyctl(["apply", planFile, "--yes"])
        #expect(stale.status == 3, "\(stale)")
        #expect(stale.stderr.contains("plan is stale: policy changed since the plan was made"))
        #expect(FileManager.default.fileExists(atPath: root + "/tmp/old"))
        #expect(try policyctl(["plan", "--policy", policy, "--root", root, "--out", planFile]).status == 0)
        let fresh = try policyctl(["apply", planFile, "--yes"])
        #expect(fresh.status == 0, "\(fresh)")
        #expect(!FileManager.default.fileExists(atPath: root + "/tmp/old"))
    }
}

@Suite("policy language 1.1: explain (end to end)")
struct PolicyLanguageExplainTests {
    @Test("explain names the file an inherited rule came from, and why keep kept an expired entry")
    func explainOriginAndKeep() throws {
        let scratch = ScratchDirectory("lang")
        let root = scratch.sub("tree")
        try buildTree(at: root, [.dir("exports", ageHours: 1), .file("exports/a", ageHours: 48), .file("exports/b", ageHours: 72)])
        try writePolicy(scratch.path + "/base.yaml", "version: 1\nname: base\nrules:\n  - name: exports\n    path: exports\n    expire: { after: 1d, keep: 1 }\n")
        let policy = scratch.path + "/p.yaml"
        try writePolicy(policy, "version: 1\nname: p\nextends: [./base.yaml]\n")
        let kept = try policyctl(["explain", "--policy", policy, "--root", root, "exports/a"])
        #expect(kept.status == 0, "\(kept)")
        #expect(kept.stdout.contains("defined at \(scratch.path)/./base.yaml:4:5"), "\(kept.stdout)")
        #expect(kept.stdout.contains("kept: one of the 1 newest in its directory (keep: 1)"), "\(kept.stdout)")
        let gone = try policyctl(["explain", "--policy", policy, "--root", root, "exports/b"])
        #expect(!gone.stdout.contains("kept: one of"), "\(gone.stdout)")
        #expect(gone.stdout.contains("delete    exports/b"), "\(gone.stdout)")
    }
}
