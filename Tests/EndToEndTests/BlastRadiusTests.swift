// A forgotten `match:` on a schedule: an expire rule over Documents takes the whole Photos folder. The plan's
// summary counts what goes with the folder ("1 folder, 151 entries to delete"; JSON `deleteEntries`), and
// `apply --yes` without any max-delete is capped at 50% of the entries scanned (at least 100), so the first
// run is refused with nothing changed; --max-delete none or the policy's own max-delete lift the default.
import Foundation
import StoragePolicy
import Testing

@Suite("blast radius: the summary counts entries, apply --yes has a default max-delete (binary)")
struct BlastRadiusTests {
    static func policy(maxDelete: String? = nil) -> String {
        "version: 1\nname: photos\n" + (maxDelete.map { "max-delete: \($0)\n" } ?? "")
            + "rules:\n  - name: old-documents\n    path: Documents\n    expire: 1d\n"
    }

    struct Setup {
        let scratch = ScratchDirectory("blast")
        let root: String
        let policy: String

        init(maxDelete: String? = nil) throws {
            root = scratch.sub("root")
            policy = scratch.path + "/policy.yaml"
            try writePolicy(policy, BlastRadiusTests.policy(maxDelete: maxDelete))
            var nodes: [TreeNode] = [.dir("Documents"), .dir("Documents/Photos", ageHours: 72)]
            for i in 0..<150 { nodes.append(.file("Documents/Photos/p\(i).jpg", ageHours: 72)) }
            try buildTree(at: root, nodes)
        }

        var photos: Int { (try? FileManager.default.contentsOfDirectory(atPath: root + "/Documents/Photos").count) ?? 0 }
    }

    @Test("the summary says 1 folder, 151 entries; the JSON plan adds deleteEntries and keeps actions.delete at 1")
    func summaryCountsEntries() throws {
        let t = try Setup()
        let text = try policyctl(["plan", "--policy", t.policy, "--root", t.root])
        #expect(text.stdout.contains("\nPlan: 1 folder, 151 entries to delete ("), "\(text.stdout)")
        let json = try policyctl(["plan", "--policy", t.policy, "--root", t.root, "--format", "json"])
        let plan = try Plan.decode(json: Data(json.stdout.utf8))
        #expect(plan.summary.actions["delete"] == 1)
        #expect(plan.summary.deleteEntries == 151)
        #expect(json.stdout.contains("\"deleteEntries\" : 151,"), "\(json.stdout.suffix(400))")
    }

    @Test("apply --yes without a max-delete is refused (3) with nothing changed; --max-delete none deletes")
    func defaultCap() throws {
        let t = try Setup()
        let refused = try policyctl(["apply", "--yes", "--policy", t.policy, "--root", t.root])
        #expect(refused.status == 3, "\(refused)")
        #expect(refused.stderr.contains("would delete 151 entries, more than the default max-delete for --yes, 50% (at least 100)"), "\(refused.stderr)")
        #expect(refused.stderr.contains("--max-delete N, N% or none"), "\(refused.stderr)")
        #expect(t.photos == 150)

        let lifted = try policyctl(["apply", "--yes", "--max-delete", "none", "--policy", t.policy, "--root", t.root])
        #expect(lifted.status == 0, "\(lifted)")
        #expect(!FileManager.default.fileExists(atPath: t.root + "/Documents/Photos"))
    }

    @Test("the policy's max-delete replaces the default; an explicit --max-delete too")
    func policyCapReplacesDefault() throws {
        let t = try Setup(maxDelete: "1000")
        let applied = try policyctl(["apply", "--yes", "--policy", t.policy, "--root", t.root])
        #expect(applied.status == 0, "\(applied)")
        #expect(!FileManager.default.fileExists(atPath: t.root + "/Documents/Photos"))

        let u = try Setup()
        let counted = try policyctl(["apply", "--yes", "--max-delete", "200", "--policy", u.policy, "--root", u.root])
        #expect(counted.status == 0, "\(counted)")
        let small = try Setup()
        let capped = try policyctl(["apply", "--yes", "--max-delete", "10", "--policy", small.policy, "--root", small.root])
        #expect(capped.status == 3, "\(capped)")
        #expect(capped.stderr.contains("more than --max-delete 10"), "\(capped.stderr)")
    }
}
