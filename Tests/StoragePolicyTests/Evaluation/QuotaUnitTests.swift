// quota `unit: directory` on generated trees: each direct child folder of the scope is evicted whole, dated by
// the newest thing inside it and sized by the files it holds; files in the scope are units of their own;
// minAge and keep protect units, and a shortfall is a violation naming the bytes still over.
import Testing
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyModel
@testable import StoragePolicyPlan
@testable import StoragePolicyEvaluation
import TreeFixture

@Suite("quota unit: directory") struct QuotaUnitTests {
    static func units(_ max: Int64, target: Quota.Target = .percent(100), evict: Quota.Eviction = .oldest,
                      minAge: PolicyDuration? = nil, keep: Int = 0) -> Rule {
        rule("q", "c", .quota(Quota(max: ByteSize(bytes: max), target: target, evict: evict, minAge: minAge, keep: keep,
                                    unit: .directory)))
    }

    /// Four units: a (newest inside 9d), loose (a file, 7d), b (newest inside 5d, deep), fresh (1h).
    static func tree() throws -> Tree {
        try Tree {
            Dir("c") {
                Dir("a", age: .days(10)) {
                    File("x", age: .days(10), size: 10_000)
                    Dir("sub", age: .days(10)) { File("y", age: .days(9), size: 20_000) }
                }
                File("loose", age: .days(7), size: 30_000)
                Dir("b", age: .days(10)) {
                    File("x", age: .days(10), size: 10_000)
                    Dir("deep", age: .days(10)) { File("z", age: .days(5), size: 10_000) }
                }
                Dir("fresh", age: .days(10)) { File("x", age: .hours(1), size: 10_000) }
            }
        }
    }

    static func size(_ tree: Tree, _ files: [String]) -> Int64 { files.reduce(Int64(0)) { $0 + allocated(tree, "c/" + $1) } }
    static let all = ["a/x", "a/sub/y", "loose", "b/x", "b/deep/z", "fresh/x"]

    @Test("units go whole, oldest newest-inside first, until the target is met; a loose file is a unit of its own")
    func oldestFirst() throws {
        let tree = try Self.tree()
        defer { tree.remove() }
        let total = Self.size(tree, Self.all)
        let a = Self.size(tree, ["a/x", "a/sub/y"])
        let loose = Self.size(tree, ["loose"])
        // The target is just under what evicting `a` leaves: `a` and then `loose` must go, nothing more.
        let p = try plan(tree, [Self.units(total - 1, target: .size(ByteSize(bytes: total - a - 1)))])
        #expect(p.lines == ["delete c/a", "delete c/loose"])
        let unit = try #require(p.actions.first { $0.path == path("c/a") })
        #expect(unit.type == .directory)
        #expect(unit.entries == 4)
        #expect(unit.bytes == a)
        #expect(unit.reason.hasSuffix("unit: directory, oldest (newest mtime inside) first"))
        #expect(p.actions.first { $0.path == path("c/loose") }?.bytes == loose)
        #expect(p.violations.isEmpty)
        // Exactly at max: nothing goes.
        #expect(try plan(tree, [Self.units(total)]).lines == [])
    }

    @Test("one fresh file deep inside makes the whole unit young")
    func newestInside() throws {
        let tree = try Self.tree()
        defer { tree.remove() }
        let total = Self.size(tree, Self.all)
        // Everything but one unit must go: b is dated by b/deep/z (5d), so it goes after loose (7d), before fresh.
        let p = try plan(tree, [Self.units(total - 1, target: .size(ByteSize(bytes: Self.size(tree, ["fresh/x"]))))])
        #expect(p.lines == ["delete c/a", "delete c/b", "delete c/loose"])
    }

    @Test("a unit exactly minAge old may be evicted; one a second younger may not, and the shortfall is a violation")
    func minAgeBoundary() throws {
        let tree = try Tree {
            Dir("c") {
                Dir("exact", age: .days(5)) { File("f", age: .days(5), size: 10_000) }
                Dir("young", age: .seconds(5 * 86400 - 1)) { File("f", age: .seconds(5 * 86400 - 1), size: 10_000) }
            }
        }
        defer { tree.remove() }
        let young = allocated(tree, "c/young/f")
        let p = try plan(tree, [Self.units(1, minAge: .days(5))])
        #expect(p.lines == ["delete c/exact"])
        #expect(p.violations.map(\.message) == ["quota not met: \(young - 1) bytes (\(ByteSize.human(young - 1))) still over the target of \(ByteSize.human(1)); minAge 5d protect 1 unit"])
    }

    @Test("keep N: exactly the N newest units stay, loose files counted among them")
    func keepN() throws {
        let tree = try Self.tree()
        defer { tree.remove() }
        let p = try plan(tree, [Self.units(1, keep: 2)])
        // Newest first: fresh (1h), b (5d) are kept; loose (7d) and a (9d) go.
        #expect(p.lines == ["delete c/a", "delete c/loose"])
        let left = Self.size(tree, ["b/x", "b/deep/z", "fresh/x"])
        #expect(p.violations.map(\.message) == ["quota not met: \(left - 1) bytes (\(ByteSize.human(left - 1))) still over the target of \(ByteSize.human(1)); keep 2 protect 2 units"])
        #expect(try plan(tree, [Self.units(1, keep: 4)]).lines == [])
    }

    @Test("lru dates a unit by the newest atime inside")
    func lru() throws {
        let tree = try Tree {
            Dir("c") {
                Dir("read", age: .days(9)) { File("f", age: .days(9), atime: .hours(1), size: 10_000) }
                Dir("idle", age: .days(2)) { File("f", age: .days(2), atime: .days(3), size: 10_000) }
            }
        }
        defer { tree.remove() }
        let p = try plan(tree, [Self.units(allocated(tree, "c/read/f"), evict: .lru)])
        #expect(p.lines == ["delete c/idle"])
    }

    @Test("other rules' deletions inside an evicted unit are covered by it; the rest still count")
    func otherRulesInside() throws {
        let tree = try Self.tree()
        defer { tree.remove() }
        // The expire rule deletes a/x (covered by evicting a), b/x and b/deep/z (separate deletes, no longer counted).
        let old = rule("old", "c", expire(.days(4)), match: ["**/x", "**/z"])
        let used = Self.size(tree, ["a/sub/y", "loose", "fresh/x"])
        let ay = Self.size(tree, ["a/sub/y"])
        let p = try plan(tree, [old, Self.units(used - 1, target: .size(ByteSize(bytes: used - ay)))])
        #expect(p.lines == ["delete c/a", "delete c/b/deep/z", "delete c/b/x"])
    }

    @Test("audit reports the units it would evict")
    func audit() throws {
        let tree = try Self.tree()
        defer { tree.remove() }
        var r = Self.units(1, keep: 3)
        r.mode = .audit
        let p = try plan(tree, [r])
        #expect(p.lines == [])
        #expect(p.violations.first?.message.hasSuffix("would evict 1 units (\(ByteSize.human(Self.size(tree, ["a/x", "a/sub/y"])))) to reach \(ByteSize.human(1))") == true)
    }

    @Test("the planner's unit evictions pass plan validation; a forged eviction below a unit is refused")
    func validation() throws {
        let tree = try Self.tree()
        defer { tree.remove() }
        let policy = Policy(name: "units", rules: [Self.units(1, keep: 1)])
        let p = try Planner(policy: policy, root: tree.root, options: tree.options(threads: 2, budget: nil)).plan()
        #expect(p.lines == ["delete c/a", "delete c/b", "delete c/loose"])
        #expect(PlanValidation(policy: policy).firstInvalid(in: p) == nil)
        var forged = p
        forged.actions = [Action(kind: .delete, path: path("c/a/sub"), rule: "q", reason: "forged",
                                 identity: p.actions[0].identity, type: .directory, entries: 2)]
        let refusal = PlanValidation(policy: policy).firstInvalid(in: forged)
        #expect(refusal?.description.contains("rule 'q' has unit: directory: it evicts only direct children of its scope c") == true)
    }

    @Test("the loader reads unit: directory on a quota; unit rules on nested paths must date by the same timestamp")
    func loader() throws {
        let yaml = "version: 1\nname: k\nrules:\n  - name: q\n    path: c\n    quota: { max: 1GiB, minAge: 1h, keep: 10, unit: directory }\n"
        #expect(try PolicyLoader.load(yaml: yaml).policy.rules[0].kind
                == .quota(Quota(max: .gibibytes(1), minAge: .hours(1), keep: 10, unit: .directory)))
        let clash = yaml + "  - name: e\n    path: c/d\n    expire: { after: 1d, by: atime, unit: directory }\n"
        #expect(throws: (any Error).self) { try PolicyLoader.load(yaml: clash) }
        do { _ = try PolicyLoader.load(yaml: clash) } catch {
            #expect("\(error)".contains("error: rule 'e': 'unit: directory' (by: atime) dates the same folders as rule 'q' (evict: oldest, dated by mtime)"), "\(error)")
        }
        let same = yaml + "  - name: e\n    path: c/d\n    expire: { after: 1d, unit: directory }\n"
        #expect(try PolicyLoader.load(yaml: same).policy.rules.count == 2)
    }
}
