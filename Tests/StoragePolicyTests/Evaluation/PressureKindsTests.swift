// Pressure through expire and trash rules (the debug free-space figure set by PlanOptions.freeSpace): below
// freeBelow, a regenerable expire rule gives up files younger than `after`, oldest first by its timestamp, and a
// regenerable trash gives up items younger than `retain`, trashed longest ago first (or its order), each with
// its .trashinfo; `keep` (expire) and `minAge` (both) still protect, user files are never reached, the rules
// go in the order named, and the plan is one the policy makes. Expected plans by hand.
import Testing
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyModel
@testable import StoragePolicyPlan
@testable import StoragePolicyEvaluation
import TreeFixture

@Suite("pressure through expire and trash rules") struct PressureKindsTests {
    /// tmp/ holds ten 10 kB files aged 1...10 hours (none expired at 30d), docs/ a user file, Trash/ three items
    /// trashed 1, 2 and 3 days ago (none past retain 30d).
    static func tree(_ now: Int64) throws -> Tree {
        try Tree(now: now) {
            Dir("tmp") { for h in 1...10 { File("t\(h)", age: .hours(Int64(h)), size: 10_000) } }
            Dir("docs") { File("mine.txt", age: .days(30), size: 10_000) }
            Dir("Trash") {
                Dir("files") { File("x1", size: 10_000); File("x2", size: 10_000); File("x3", size: 10_000) }
                Dir("info") {
                    for d in 1...3 { File("x\(d).trashinfo", contents: TrashTests.info(TrashTests.utcDate(now, minus: .days(Int64(d))))) }
                }
            }
        }
    }

    static func policy(evict: [String], expireMinAge: PolicyDuration? = nil, keep: Int = 0,
                       trashMinAge: PolicyDuration? = nil, order: EvictionOrder? = nil) -> Policy {
        var e = Expire(after: .days(30), keep: keep)
        e.minAge = expireMinAge
        var tmp = rule("tmp", "tmp", .expire(e))
        tmp.regenerable = true
        var t = TrashRetention(retain: .days(30), layout: .freedesktop)
        t.minAge = trashMinAge
        t.eviction.order = order
        var trash = rule("trash", "Trash", .trash(t))
        trash.regenerable = true
        var policy = Policy(name: "test", rules: [tmp, trash])
        policy.pressure = [PressureRule(name: "low", freeBelow: .percent(10), freeUntil: .percent(15), evict: evict)]
        return policy
    }

    /// A plan with `need` bytes to free: 5 % free, freeUntil 15 %, so 10 % of `total` is needed.
    static func plan(_ tree: Tree, _ policy: Policy, need: Int64, now: Int64) throws -> Plan {
        var options = tree.options(threads: 2, budget: nil)
        options.now = now
        options.freeSpace = VolumeSpace(available: need / 2, total: need * 10)
        return try Planner(policy: policy, root: tree.root, options: options).plan()
    }

    @Test("an expire rule gives up its unexpired files oldest first until freeUntil; user files stay")
    func expireOldestFirst() throws {
        let now = Tree.currentTimeNs()
        let tree = try Self.tree(now)
        defer { tree.remove() }
        let file = allocated(tree, "tmp/t1")
        let p = try Self.plan(tree, Self.policy(evict: ["tmp"]), need: file * 3, now: now)
        #expect(p.lines == ["delete tmp/t10", "delete tmp/t8", "delete tmp/t9"])
        #expect(p.actions[0].reason.hasSuffix("; oldest (mtime) first, before its expire age 4w2d"), "\(p.actions[0].reason)")
        #expect(p.notes.contains { $0.contains("expects to free \(ByteSize.human(file * 3)) more (3 files)") }, "\(p.notes)")
        #expect(PlanValidation(policy: Self.policy(evict: ["tmp"])).firstInvalid(in: p) == nil)
        // Not pressure-named: the same files are no expire rule's to delete in a saved plan.
        var plain = Self.policy(evict: [])
        plain.rules[0].regenerable = false
        #expect(PlanValidation(policy: plain).firstInvalid(in: p) != nil)
    }

    @Test("expire's keep and minAge still protect under pressure, and the shortfall is a note")
    func expireFloors() throws {
        let now = Tree.currentTimeNs()
        let tree = try Self.tree(now)
        defer { tree.remove() }
        let file = allocated(tree, "tmp/t1")
        // minAge 7h: t1...t6 are younger (t7 is exactly 7 hours old by the fixture's clock: it may go).
        let m = try Self.plan(tree, Self.policy(evict: ["tmp"], expireMinAge: .hours(7)), need: file * 10, now: now)
        #expect(m.lines == ["delete tmp/t10", "delete tmp/t7", "delete tmp/t8", "delete tmp/t9"])
        #expect(m.notes.contains { $0.contains("falls short by") && $0.contains("minAge and keep protect 6 files") }, "\(m.notes)")
        // keep 8: the eight newest in the folder were never candidates.
        let k = try Self.plan(tree, Self.policy(evict: ["tmp"], keep: 8), need: file * 10, now: now)
        #expect(k.lines == ["delete tmp/t10", "delete tmp/t9"])
    }

    @Test("a trash rule gives up kept items trashed longest ago first, with their .trashinfo, down to minAge")
    func trashItems() throws {
        let now = Tree.currentTimeNs()
        let tree = try Self.tree(now)
        defer { tree.remove() }
        let item = allocated(tree, "Trash/files/x1")
        let p = try Self.plan(tree, Self.policy(evict: ["trash"]), need: item * 2 - 1, now: now)
        #expect(p.lines == ["delete Trash/files/x2", "delete Trash/files/x3", "delete Trash/info/x2.trashinfo", "delete Trash/info/x3.trashinfo"])
        let x3 = try #require(p.actions.first { $0.path == path("Trash/files/x3") })
        #expect(x3.reason.hasPrefix("pressure 'low': ") && x3.reason.contains("; trashed longest ago first (trashed (DeletionDate) 3d"), "\(x3.reason)")
        #expect(PlanValidation(policy: Self.policy(evict: ["trash"])).firstInvalid(in: p) == nil)
        // minAge 2d12h: only x3 (3 days) may go, whatever is needed.
        let m = try Self.plan(tree, Self.policy(evict: ["trash"], trashMinAge: PolicyDuration(seconds: 60 * 60 * 60)), need: item * 10, now: now)
        #expect(m.lines == ["delete Trash/files/x3", "delete Trash/info/x3.trashinfo"])
        #expect(m.notes.contains { $0.contains("minAge and keep protect 2 files") }, "\(m.notes)")
    }

    @Test("the rules go in the order named: trash first, then tmp, and only as far as needed")
    func order() throws {
        let now = Tree.currentTimeNs()
        let tree = try Self.tree(now)
        defer { tree.remove() }
        let item = allocated(tree, "Trash/files/x1")
        let p = try Self.plan(tree, Self.policy(evict: ["trash", "tmp"]), need: item * 4, now: now)
        #expect(p.lines == ["delete Trash/files/x1", "delete Trash/files/x2", "delete Trash/files/x3",
                            "delete Trash/info/x1.trashinfo", "delete Trash/info/x2.trashinfo", "delete Trash/info/x3.trashinfo",
                            "delete tmp/t10"], "\(p.lines)")
        #expect(!p.lines.contains { $0.contains("docs") })
    }

    @Test("explain says a regenerable rule's files may go sooner under pressure, and what minAge still protects")
    func explain() throws {
        let now = Tree.currentTimeNs()
        let tree = try Self.tree(now)
        defer { tree.remove() }
        var options = tree.options()
        options.now = now
        let explainer = Explainer(policy: Self.policy(evict: ["tmp", "trash"], expireMinAge: .hours(7), trashMinAge: .days(2)),
                                  root: tree.root, options: options)
        let young = try #require(try explainer.explain(path("tmp/t2")).rules.first { $0.rule == "tmp" })
        #expect(young.findings.last?.hasSuffix(": keep; regenerable: a pressure rule naming this rule may evict it sooner, oldest first; younger than minAge 7h, so not even then") == true, "\(young.findings)")
        let old = try #require(try explainer.explain(path("tmp/t9")).rules.first { $0.rule == "tmp" })
        #expect(old.findings.last?.hasSuffix("; minAge 7h no longer protects it") == true, "\(old.findings)")
        let item = try #require(try explainer.explain(path("Trash/files/x1")).rules.first { $0.rule == "trash" })
        #expect(item.findings.last?.hasSuffix("; regenerable: a pressure rule naming this rule may evict it sooner, trashed longest ago first, never one trashed less than 2d ago (minAge)") == true, "\(item.findings)")
    }

    @Test("the loader takes regenerable expire and trash rules and their minAge, and refuses expire with unit: directory")
    func language() throws {
        let yaml = """
            version: 1
            name: t
            rules:
              - name: tmp
                path: tmp
                regenerable: true
                expire: { after: 30d, minAge: 1h }
              - name: trash
                path: Trash
                regenerable: true
                trash: { retain: 30d, minAge: 1d }
              - name: units
                path: builds
                regenerable: true
                expire: { after: 30d, unit: directory }
              - name: names
                path: docs
                regenerable: true
                forbid: ["*.tmp"]
            pressure:
              - name: low
                freeBelow: 10%
                freeUntil: 15%
                evict: [tmp, trash, units, names]

            """
        #expect(PolicyLoaderTests.errors(yaml) == [
            "24:25: pressure rule 'low': 'evict': rule 'units' expires whole folders (unit: directory); pressure evicts an expire rule's files one by one, so name an expire rule with unit: entry, or a quota with unit: directory",
            "24:32: pressure rule 'low': 'evict': rule 'names' (forbid) is not a quota, expire or trash rule; pressure evicts only through those (name a regenerable quota over the same cache)",
        ])
        let ok = try PolicyLoader.load(yaml: yaml.replacingOccurrences(of: ", units, names]", with: "]"), file: "p.yaml").policy
        let effective = EffectivePolicyWriter.yaml(ok)
        #expect(effective.contains("expire: { after: 4w2d, by: mtime, minAge: 1h }"), "\(effective)")
        #expect(effective.contains("trash: { retain: 4w2d, layout: auto, minAge: 1d }"), "\(effective)")
    }
}
