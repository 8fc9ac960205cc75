// Pressure rules over a free-space figure the test sets (PlanOptions.freeSpace, the unit tests' seam): above
// freeBelow nothing happens; below it the named regenerable quota evicts beyond its own limit, oldest first,
// until freeUntil, counting what the plan deletes anyway, never past minAge or keep; and the loader refuses
// names that are no regenerable quota rule, at their line and column.
import Testing
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyModel
@testable import StoragePolicyPlan
@testable import StoragePolicyEvaluation
import TreeFixture

@Suite("pressure rules") struct PressureTests {
    /// Ten 10 kB files aged 1...10 days in cache/ (a regenerable quota far from its max), and docs/ (user files).
    static func tree() throws -> Tree {
        try Tree {
            Dir("cache") { for d in 1...10 { File("f\(d)", age: .days(Int64(d)), size: 10_000) } }
            Dir("docs") { File("mine.txt", age: .days(30), size: 10_000) }
        }
    }

    static func policy(minAge: PolicyDuration? = nil, keep: Int = 0, below: PressureRule.FreeSpace = .percent(10),
                       until: PressureRule.FreeSpace = .percent(15)) -> Policy {
        var cache = rule("cache", "cache", .quota(Quota(max: ByteSize(bytes: 1 << 30), minAge: minAge, keep: keep)))
        cache.regenerable = true
        var policy = Policy(name: "test", rules: [cache])
        policy.pressure = [PressureRule(name: "low-disk", freeBelow: below, freeUntil: until, evict: ["cache"])]
        return policy
    }

    static func plan(_ tree: Tree, _ policy: Policy, free: Int64, total: Int64) throws -> Plan {
        var options = tree.options(threads: 2, budget: nil)
        options.freeSpace = VolumeSpace(available: free, total: total)
        return try Planner(policy: policy, root: tree.root, options: options).plan()
    }

    @Test("above freeBelow nothing is evicted, and the note says why")
    func abovethreshold() throws {
        let tree = try Self.tree()
        defer { tree.remove() }
        let p = try Self.plan(tree, Self.policy(), free: 250_000, total: 1_000_000)
        #expect(p.lines.isEmpty)
        #expect(p.notes.contains { $0.hasPrefix("pressure rule 'low-disk': 244.1 KiB free of 976.6 KiB (25.0 %) is not below freeBelow 10%") }, "\(p.notes)")
    }

    @Test("below freeBelow the oldest cache files go until freeUntil; user files are never touched")
    func evictsToTarget() throws {
        let tree = try Self.tree()
        defer { tree.remove() }
        let file = allocated(tree, "cache/f1")
        // 5 % free of 100 files' worth; freeUntil 15 %: ten files' worth of bytes needed, less 5 already free.
        let total = file * 100
        let free = file * 5
        let p = try Self.plan(tree, Self.policy(), free: free, total: total)
        // 15 % of total is 15 files: 10 more are needed, so all ten cache files go, oldest first.
        #expect(p.lines == (1...10).map { "delete cache/f\($0)" }.sorted())
        // freeUntil 8 files' worth above free: three files (the three oldest).
        let q = try Self.plan(tree, Self.policy(below: .size(ByteSize(bytes: free + 1)), until: .size(ByteSize(bytes: free + file * 3))), free: free, total: total)
        #expect(q.lines == ["delete cache/f10", "delete cache/f8", "delete cache/f9"])
        #expect(q.actions[0].reason.hasSuffix("; oldest (mtime) first"))
        #expect(q.actions[0].reason.hasPrefix("pressure 'low-disk': "))
        #expect(q.notes.contains { $0.contains("expects to free \(ByteSize.human(file * 3)) more (3 files)") }, "\(q.notes)")
        #expect(!q.lines.contains { $0.contains("docs") })
        // A saved plan of these evictions is one the policy makes.
        #expect(PlanValidation(policy: Self.policy()).firstInvalid(in: q) == nil)
    }

    @Test("minAge and keep still protect under pressure; the shortfall is a note")
    func protection() throws {
        let tree = try Self.tree()
        defer { tree.remove() }
        let file = allocated(tree, "cache/f1")
        let p = try Self.plan(tree, Self.policy(minAge: .days(4), keep: 0), free: file * 5, total: file * 100)
        // Files 1...3 days old are younger than minAge 4d (f4 is exactly 4 days: it may go).
        #expect(p.lines == (4...10).map { "delete cache/f\($0)" }.sorted())
        #expect(p.notes.contains { $0.contains("falls short by") && $0.contains("minAge and keep protect 3 files") }, "\(p.notes)")
        let k = try Self.plan(tree, Self.policy(keep: 8), free: file * 5, total: file * 100)
        #expect(k.lines == ["delete cache/f10", "delete cache/f9"])
    }

    @Test("reclaim(bytes:) evicts through the pressure rules whatever freeBelow says, applies, and says how far short it fell")
    func reclaim() throws {
        let tree = try Self.tree()
        defer { tree.remove() }
        let file = allocated(tree, "cache/f1")
        var engine = StorageEngine(policy: Self.policy(minAge: .days(8)), root: tree.root)
        // Plenty free (50 %): pressure alone does nothing, reclaim still makes room.
        engine.planOptions.freeSpace = VolumeSpace(available: file * 50, total: file * 100)
        let asked = try engine.reclaimPlan(bytes: file * 2)
        #expect(asked.plan.lines == ["delete cache/f10", "delete cache/f9"])
        #expect(asked.shortfall == 0 && asked.expected == file * 2)
        #expect(asked.plan.actions[0].reason.contains("making room on request"))
        // More than the floors allow: minAge 8d leaves only f8, f9, f10; the rest is the shortfall.
        let done = try engine.reclaim(bytes: file * 5)
        #expect(done.expected == file * 3 && done.shortfall == file * 2)
        #expect(done.result?.report.bytesFreed == file * 3)
        #expect(allocated(tree, "cache/f7") >= 0 && allocated(tree, "cache/f8") == -1 && allocated(tree, "docs/mine.txt") >= 0)
    }

    @Test("the loader refuses names that are no regenerable quota, expire or trash rule, and backwards thresholds, at their column")
    func language() throws {
        let header = "version: 1\nname: t\nrules:\n  - name: cache\n    path: cache\n    quota: { max: 1GiB }\n  - name: tmp\n    path: tmp\n    regenerable: true\n    expire: 1d\npressure:\n  - name: low\n"
        #expect(PolicyLoaderTests.errors(header + "    freeBelow: 10%\n    freeUntil: 15%\n    evict: [cache, tmp, nope]\n") == [
            "15:13: pressure rule 'low': 'evict': rule 'cache' is not marked regenerable; add 'regenerable: true' to it if its files can be fetched or rebuilt again (pressure never evicts anything else)",
            "15:25: pressure rule 'low': 'evict': there is no rule 'nope'",
        ])
        #expect(PolicyLoaderTests.errors(header + "    freeBelow: 10%\n    freeUntil: 5%\n    evict: []\n")
            == ["14:16: pressure rule 'low': freeUntil 5% is below freeBelow 10%; eviction runs until freeUntil, so it must be at or above freeBelow"])
        #expect(PolicyLoaderTests.errors(header + "    freeBelow: lots\n    freeUntil: 5%\n    evict: []\n").first?.hasPrefix("13:16: pressure rule 'low': 'freeBelow': invalid free space 'lots'") == true)
        let ok = header.replacingOccurrences(of: "    quota:", with: "    regenerable: true\n    quota:") + "    freeBelow: 10%\n    freeUntil: 2GiB\n    evict: [cache]\n"
        let policy = try PolicyLoader.load(yaml: ok, file: "p.yaml").policy
        #expect(policy.pressure.map(\.name) == ["low"])
        #expect(EffectivePolicyWriter.yaml(policy).hasSuffix("pressure:\n  # from p.yaml:13\n  - name: \"low\"\n    freeBelow: 10%\n    freeUntil: 2147483648\n    evict: [\"cache\"]\n"))
    }
}
