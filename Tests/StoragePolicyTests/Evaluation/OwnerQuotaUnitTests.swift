// quota `per: owner` in the evaluator: grouping by uid, keep and maxEntries counted per owner, audit findings
// that name the owner, and the loader's refusal of `per: owner` with `unit: directory`. Files chowned as root.
import Testing
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyModel
@testable import StoragePolicyEvaluation
import TreeFixture

@Suite("quota per: owner") struct OwnerQuotaUnitTests {
    /// a1...a4 owned by uid 2001 (ages 1...4 days), b1, b2 by uid 2002 (ages 10, 11 days): b's are the oldest.
    static func tree() throws -> Tree {
        let tree = try Tree {
            Dir("up") {
                for d in 1...4 { File("a\(d)", age: .days(Int64(d)), size: 10_000) }
                File("b1", age: .days(10), size: 10_000); File("b2", age: .days(11), size: 10_000)
            }
        }
        for d in 1...4 { lchown(tree.root + "/up/a\(d)", 2001, 2001) }
        for n in ["b1", "b2"] { lchown(tree.root + "/up/\(n)", 2002, 2002) }
        return tree
    }

    static func quota(_ max: Int64, keep: Int = 0, maxEntries: Int? = nil, mode: Rule.Mode = .enforce) -> Rule {
        var q = Quota(max: ByteSize(bytes: max), keep: keep)
        q.per = .owner
        q.eviction.maxEntries = maxEntries
        return rule("per-user", "up", .quota(q), mode: mode)
    }

    @Test("each owner over max loses its own oldest files; an owner under it loses nothing", .enabled(if: getuid() == 0))
    func grouping() throws {
        let tree = try Self.tree()
        defer { tree.remove() }
        let two = allocated(tree, "up/a1") * 2
        let p = try plan(tree, [Self.quota(two)])
        #expect(p.lines == ["delete up/a3", "delete up/a4"])
        #expect(p.actions[0].reason == "quota of uid 2001 (per: owner): \(ByteSize.human(two * 2)) used > \(ByteSize.human(two)) max; oldest (mtime) first")
        // keep and maxEntries count per owner: keep 3 leaves a1..a3, maxEntries 1 takes b2 (b's oldest) too.
        #expect(try plan(tree, [Self.quota(two, keep: 3)]).lines == ["delete up/a4"])
        #expect(try plan(tree, [Self.quota(two * 10, maxEntries: 1)]).lines
            == ["delete up/a2", "delete up/a3", "delete up/a4", "delete up/b2"])
        let audit = try plan(tree, [Self.quota(two, mode: .audit)])
        #expect(audit.lines.isEmpty)
        #expect(audit.findings == ["per-user: up: quota of uid 2001 (per: owner): \(ByteSize.human(two * 2)) used > \(ByteSize.human(two)) max; would evict 2 files (\(ByteSize.human(two))) of uid 2001"])
        // The evictions are ones the policy makes.
        #expect(PlanValidation(policy: Policy(name: "test", rules: [Self.quota(two)])).firstInvalid(in: p) == nil)
    }

    @Test("per: owner loads, prints in validate --effective, and is refused with unit: directory at its column")
    func language() throws {
        let header = "version: 1\nname: t\nrules:\n  - name: q\n    path: up\n"
        let loaded = try PolicyLoader.load(yaml: header + "    quota: { max: 1GiB, per: owner }\n", file: "p.yaml").policy
        #expect(loaded.rules[0].kind.syntax.effectiveYAML == "quota: { max: 1073741824, target: 100%, evict: oldest, per: owner }")
        #expect(PolicyLoaderTests.errors(header + "    quota: { max: 1GiB, per: owner, unit: directory }\n")
            == ["6:30: rule 'q': 'quota': 'per: owner' counts each owner's files, so it cannot be combined with unit: directory (a folder's files may have several owners; drop one of the two)"])
        #expect(PolicyLoaderTests.errors(header + "    quota: { max: 1GiB, per: group }\n")
            == ["6:30: rule 'q': 'quota': 'per': invalid value 'group' (expected one of: owner)"])
    }
}
