// One path normalisation through the binary: `apply --policy ./p.yaml` journals the same absolute policy
// path the plan fingerprint records (`/cwd/p.yaml`, never `/cwd/./p.yaml`), and a saved plan of it stays fresh.
import Foundation
import Testing
import TreeFixture

@Suite("CLI: path normalisation") struct PathNormalisationTests {
    @Test("apply --policy ./p.yaml journals /cwd/p.yaml, the path the plan's fingerprint records")
    func dotSlashPolicy() throws {
        let scratch = ScratchDirectory("dot")
        let root = scratch.sub("root")
        try writePolicy(scratch.path + "/p.yaml", "version: 1\nname: dot\nrules:\n  - name: tmp-expiry\n    path: tmp\n    expire: 1h\n")
        try buildTree(at: root, [.dir("tmp", ageHours: 48), .file("tmp/a"), .file("tmp/keep", ageHours: 0.1)])
        let cwd = URL(fileURLWithPath: scratch.path).resolvingSymlinksInPath().path
        let expected = cwd + "/p.yaml"

        let planned = try PolicyctlBinary.run(["plan", "--policy", "./p.yaml", "--root", root, "--out", "plan.json"], cwd: scratch.path)
        #expect(planned.status == 2 || planned.status == 0, "\(planned)")
        let plan = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: scratch.path + "/plan.json"))) as? [String: Any]
        let fingerprint = plan?["fingerprint"] as? [String: Any]
        #expect(fingerprint?["policyPath"] as? String == expected)

        let applied = try PolicyctlBinary.run(["apply", "--policy", "./p.yaml", "--root", root, "--yes"], cwd: scratch.path)
        #expect(applied.status == 0, "\(applied)")
        #expect(applied.stdout.hasPrefix("applied: 1 delete;"), "\(applied)")
        let journal = try PolicyctlBinary.run(["journal", "--root", root, "--format", "json"])
        #expect(journal.status == 0, "\(journal)")
        let transactions = try JSONSerialization.jsonObject(with: journal.stdoutData) as? [[String: Any]]
        #expect(transactions?.count == 1)
        #expect(transactions?.first?["policyPath"] as? String == expected)
    }
}
