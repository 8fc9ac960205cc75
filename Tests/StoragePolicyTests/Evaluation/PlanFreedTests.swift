// Bytes freed per rule and per volume in a plan's summary: `bytesFreedByRule` (absent without deletes) and
// `volumes` (the root's, with its free space when pressure rules measured it), in the text form two lines above
// the summary line, and in the JSON form the same bytes JSONEncoder gives the Codable form.
import Foundation
import Testing
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyModel
@testable import StoragePolicyPlan
@testable import StoragePolicyEvaluation
import TreeFixture

@Suite("bytes freed per rule and per volume") struct PlanFreedTests {
    static func sample(volume: Plan.Summary.Volume?) -> Plan {
        var plan = Plan(policy: "p", root: "/r", createdAt: "2026-01-02T03:04:05Z", evaluatedAtNs: 0, actions: [
            Action(kind: .delete, path: path("a/1"), rule: "a", reason: "r", bytes: 4096, type: .regular),
            Action(kind: .delete, path: path("b/1"), rule: "b", reason: "r", bytes: 8192, type: .regular),
            Action(kind: .delete, path: path("b/2"), rule: "b", reason: "r", bytes: 8192, type: .regular),
            Action(kind: .delete, path: path("c/1"), rule: "a\"q", reason: "r", bytes: 4096, type: .regular),
        ])
        plan.summary.volumes = volume.map { [$0] }
        return plan
    }

    @Test("the summary sums each rule's deletes; a plan without deletes has no per-rule figure")
    func perRule() {
        let plan = Self.sample(volume: nil)
        #expect(plan.summary.bytesFreedByRule == ["a": 4096, "b": 16384, "a\"q": 4096])
        #expect(Plan(policy: "p", root: "/r", createdAt: "x", evaluatedAtNs: 0).summary.bytesFreedByRule == nil)
    }

    @Test("text: most first, ties by name, then the root's volume with its free space before and after")
    func text() {
        let volume = Plan.Summary.Volume(device: (8 << 8) | 3, bytesFreed: 24576, freeBefore: 1 << 20, size: 1 << 30)
        let text = PlanRenderer(color: false).render(Self.sample(volume: volume))
        #expect(text.hasSuffix("""

            Freed per rule: b 16.0 KiB, a 4.0 KiB, a"q 4.0 KiB
            Freed on the root's volume (device 8:3): 24.0 KiB; 1.0 MiB free of 1.0 GiB before, 1.0 MiB after
            Plan: 4 to delete (24.0 KiB freed), 0 to rename, 0 to move to the trash, 0 to create, 0 markers to set, 0 cache tags to write; 0 violations, 0 skipped.

            """), "\(text)")
        let unmeasured = PlanRenderer(color: false).render(Self.sample(volume: .init(device: (8 << 8) | 3, bytesFreed: 24576)))
        #expect(unmeasured.contains("\nFreed on the root's volume (device 8:3): 24.0 KiB\nPlan: "), "\(unmeasured)")
    }

    @Test("JSON: the streamed bytes are JSONEncoder's, and decode to the same plan")
    func json() throws {
        for volume in [nil, Plan.Summary.Volume(device: 2049, bytesFreed: 24576), .init(device: 2049, bytesFreed: 24576, freeBefore: 5, size: 100)] {
            let plan = Self.sample(volume: volume)
            let streamed = PlanJSONWriter.data(plan, layout: .encoder)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            #expect(streamed == Array(try encoder.encode(plan)), "\(String(decoding: streamed, as: UTF8.self))")
            #expect(try Plan.decode(json: PlanJSONWriter.data(plan)) == plan)
        }
        let text = String(decoding: PlanJSONWriter.data(Self.sample(volume: .init(device: 2049, bytesFreed: 24576))), as: UTF8.self)
        #expect(text.contains("\"bytesFreedByRule\" : {\n      \"a\" : 4096,\n      \"a\\\"q\" : 4096,\n      \"b\" : 16384\n    },"), "\(text)")
        #expect(text.contains("\"volumes\" : [\n      {\n        \"bytesFreed\" : 24576,\n        \"device\" : 2049\n      }\n    ]\n  },"), "\(text)")
    }

    @Test("a planned tree's volume is the root's device, with the pressure snapshot when one was taken")
    func planner() throws {
        let tree = try Tree { Dir("tmp") { File("old", age: .days(3), size: 5000) } }
        defer { tree.remove() }
        let policy = Policy(name: "t", rules: [rule("tmp", "tmp", expire(.days(1)))])
        let p = try Planner(policy: policy, root: tree.root, options: tree.options()).plan()
        var st = stat()
        #expect(stat(tree.root, &st) == 0)
        #expect(p.summary.volumes == [.init(device: UInt64(st.st_dev), bytesFreed: p.summary.bytesFreed)])
        #expect(p.summary.bytesFreedByRule == ["tmp": p.summary.bytesFreed])
    }
}
