// The filters every kind takes beside match: size over/under, owner, group (names resolved when the policy is
// read, an unknown one an error at file:line:col) and case: insensitive for globs, on ugly names (not UTF-8,
// newlines). Checked on the walk, in explain, in validate --effective and in saved-plan validation.
import Testing
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyModel
@testable import StoragePolicyPlan
@testable import StoragePolicyEvaluation
import TreeFixture

@Suite("Entry filters") struct EntryFilterTests {
    static func policy(_ rules: String) throws -> Policy {
        try PolicyLoader.load(yaml: "version: 1\nname: t\nrules:\n" + rules, file: "p.yaml").policy
    }

    static func plan(_ tree: Tree, _ policy: Policy) throws -> Plan {
        try Planner(policy: policy, root: tree.root, options: tree.options(threads: 2, budget: nil)).plan()
    }

    @Test("size, owner, group and case decode; names resolve to ids; validate --effective writes them back")
    func decoding() throws {
        let policy = try Self.policy("""
          - { name: big, path: tmp, expire: 1d, size: { over: 100MiB }, owner: root, group: 0, case: insensitive }
          - { name: small, path: tmp, expire: 1d, size: { under: 1KiB, over: 10 }, owner: 12345 }

        """)
        let big = policy.rules[0].filters, small = policy.rules[1].filters
        #expect(big.sizeOver == ByteSize(bytes: 100 * 1024 * 1024) && big.sizeUnder == nil)
        #expect(big.owner == PrincipalFilter(id: 0, name: "root") && big.group == PrincipalFilter(id: 0))
        #expect(big.caseInsensitive && !small.caseInsensitive)
        #expect(small.sizeUnder == ByteSize(bytes: 1024) && small.sizeOver == ByteSize(bytes: 10))
        #expect(small.owner == PrincipalFilter(id: 12345) && small.group == nil)
        #expect(Policy(name: "x").rules.isEmpty && Rule(name: "r", path: .root, kind: expire(.days(1))).filters == EntryFilters())

        let text = EffectivePolicyWriter.yaml(policy)
        #expect(text.contains("    size: { over: 104857600 }\n    owner: \"root\"\n    group: 0\n    case: insensitive\n"))
        #expect(text.contains("    size: { over: 10, under: 1024 }\n    owner: 12345\n"))
        // What it writes loads to the same rules.
        let again = try PolicyLoader.load(yaml: text, file: "e.yaml").policy
        #expect(again.rules.map(\.filters) == policy.rules.map(\.filters))
    }

    @Test("an unknown user or group, a bad size or range, and a naming case at the rule level are errors at line:col")
    func errors() {
        let head = "version: 1\nname: t\nrules:\n"
        #expect(PolicyLoaderTests.errors(head + "  - { name: a, path: tmp, expire: 1d, owner: no-such-user-xq }\n")
                == ["4:46: rule 'a': 'owner': no user named 'no-such-user-xq' on this system (getent passwd lists them; a number is taken as an id)"])
        #expect(PolicyLoaderTests.errors(head + "  - { name: a, path: tmp, expire: 1d, group: no-such-group-xq }\n")
                == ["4:46: rule 'a': 'group': no group named 'no-such-group-xq' on this system (getent group lists them; a number is taken as an id)"])
        #expect(PolicyLoaderTests.errors(head + "  - { name: a, path: tmp, expire: 1d, size: { over: 1KiB, under: 1KiB } }\n")
                == ["4:45: rule 'a': 'size': no size is over 1024 and under 1024 bytes; the rule would select nothing"])
        #expect(PolicyLoaderTests.errors(head + "  - { name: a, path: tmp, expire: 1d, size: { over: lots } }\n")
                == ["4:53: rule 'a': 'size': 'over': invalid size 'lots' (expected \(ByteSize.acceptedForms))"])
        #expect(PolicyLoaderTests.errors(head + "  - { name: a, path: tmp, expire: 1d, size: { above: 1 } }\n").first?
                    .hasPrefix("4:47: rule 'a': 'size': unknown key 'above'") == true)
        #expect(PolicyLoaderTests.errors(head + "  - { name: a, path: tmp, expire: 1d, owner: 4294967295 }\n")
                == ["4:46: rule 'a': 'owner': user id 4294967295 is out of range (0 to 4294967294)"])
        #expect(PolicyLoaderTests.errors(head + "  - { name: a, path: docs, naming: { case: lower }, case: lower }\n")
                == ["4:59: rule 'a': invalid case 'lower' (expected insensitive or sensitive; a naming rule's case goes under 'naming:')"])
    }

    @Test("size over and under select regular files by st_size; folders and symlinks are never selected by size")
    func sizes() throws {
        let tree = try Tree {
            Dir("tmp", age: .days(3)) {
                File("big.bin", age: .days(3), size: 5000)
                File("small.bin", age: .days(3), size: 10)
                File("edge.bin", age: .days(3), size: 1000)
                Dir("old", age: .days(3)) { File("inner.bin", age: .days(3), size: 2000) }
                Symlink("link", to: "/etc/passwd", age: .days(3))
            }
        }
        defer { tree.remove() }
        let over = try Self.plan(tree, Self.policy("  - { name: e, path: tmp, expire: 1d, type: any, size: { over: 1000 } }\n"))
        #expect(over.lines == ["delete tmp/big.bin", "delete tmp/old/inner.bin"])
        let under = try Self.plan(tree, Self.policy("  - { name: e, path: tmp, expire: 1d, size: { under: 1000 } }\n"))
        #expect(under.lines == ["delete tmp/small.bin"])
        let between = try Self.plan(tree, Self.policy("  - { name: e, path: tmp, match: '**/*.bin', expire: 1d, size: { over: 999, under: 2001 } }\n"))
        #expect(between.lines == ["delete tmp/edge.bin", "delete tmp/old/inner.bin"])
        // A quota counts only what its filter selects.
        let quota = try Self.plan(tree, Self.policy("  - { name: q, path: tmp, quota: { max: 5 }, size: { under: 1000 } }\n"))
        #expect(quota.lines == ["delete tmp/small.bin"])
    }

    @Test("owner and group compare the entry's own uid and gid (never a symlink's target's)")
    func ownership() throws {
        let tree = try Tree {
            Dir("tmp", age: .days(3)) {
                File("mine", age: .days(3))
                Symlink("link", to: "/etc/passwd", age: .days(3))
            }
        }
        defer { tree.remove() }
        let uid = geteuid(), gid = getegid()
        let mine = try Self.plan(tree, Self.policy("  - { name: e, path: tmp, expire: 1d, type: any, owner: \(uid), group: \(gid) }\n"))
        #expect(mine.lines == ["delete tmp/link", "delete tmp/mine"])
        let other = try Self.plan(tree, Self.policy("  - { name: e, path: tmp, expire: 1d, owner: \(uid + 1) }\n"))
        #expect(other.lines.isEmpty && other.violations.isEmpty)
        let otherGroup = try Self.plan(tree, Self.policy("  - { name: e, path: tmp, expire: 1d, group: \(gid + 1) }\n"))
        #expect(otherGroup.lines.isEmpty)
        // In audit the same selection is reported, not deleted.
        let audit = try Self.plan(tree, Self.policy("  - { name: e, path: tmp, expire: 1d, mode: audit, owner: \(uid + 1) }\n"))
        #expect(audit.violations.isEmpty)
    }

    @Test("case: insensitive selects any letter case, names that are not UTF-8 and names with newlines included")
    func caseInsensitive() throws {
        let tree = try Tree {
            Dir("tmp", age: .days(3)) {
                File("A.TXT", age: .days(3))
                File("b.Txt", age: .days(3))
                File(bytes: [0xFF, 0x2E, 0x54, 0x58, 0x54], age: .days(3))  // "\xFF.TXT"
                File("new\nline.tXt", age: .days(3))
                File("keep.TXT.bak", age: .days(3))
                Dir("SUB", age: .days(3)) { File("Deep.TxT", age: .days(3)) }
            }
        }
        defer { tree.remove() }
        let sensitive = try Self.plan(tree, Self.policy("  - { name: e, path: tmp, match: '**/*.txt', expire: 1d }\n"))
        #expect(sensitive.lines.isEmpty)
        let insensitive = try Self.plan(tree, Self.policy("  - { name: e, path: tmp, match: '**/*.txt', exclude: 'sub/**', expire: 1d, case: insensitive }\n"))
        #expect(Set(insensitive.actions.map(\.path.bytes)) == Set(["tmp/A.TXT", "tmp/b.Txt", "tmp/new\nline.tXt"].map { Array($0.utf8) }
                                                                 + [Array("tmp/".utf8) + [0xFF, 0x2E, 0x54, 0x58, 0x54]]))
        #expect(insensitive.actions.count == 4)
        // forbid's own globs ignore case too.
        let forbid = try Self.plan(tree, Self.policy("  - { name: f, path: tmp, forbid: ['**/deep.txt'], mode: audit, case: insensitive }\n"))
        #expect(forbid.findings == ["f: tmp/SUB/Deep.TxT: forbidden (matches '**/deep.txt')"])
    }

    @Test("explain says which filter keeps an entry out, and what a selected entry passed")
    func explain() throws {
        let tree = try Tree { Dir("tmp") { File("small", age: .days(3), size: 10); File("Big.LOG", age: .days(3), size: 5000) } }
        defer { tree.remove() }
        let policy = try Self.policy("  - { name: e, path: tmp, match: '*.log', expire: 1d, size: { over: 1KiB }, case: insensitive }\n")
        let small = try Explainer(policy: policy, root: tree.root).explain(path("tmp/small"))
        #expect(small.rules[0].findings.last == "not selected: matches none of '*.log'")
        let policyAll = try Self.policy("  - { name: e, path: tmp, expire: 1d, size: { over: 1KiB } }\n")
        let smallAll = try Explainer(policy: policyAll, root: tree.root).explain(path("tmp/small"))
        #expect(smallAll.rules[0].findings.contains("not selected: 10 bytes, not over 1024 (size: over 1.0 KiB)"))
        let big = try Explainer(policy: policy, root: tree.root).explain(path("tmp/Big.LOG"))
        #expect(big.rules[0].findings.contains("selected by match '*.log' (case: insensitive)"))
        #expect(big.rules[0].findings.contains("passes the filters: size 5000 bytes"))
        #expect(big.actions.map(\.line) == ["delete tmp/Big.LOG"])
    }

    @Test("a saved plan's delete of a file the size filter does not select is refused")
    func savedPlanSize() throws {
        let tree = try Tree { Dir("tmp") { File("big", age: .days(3), size: 5000); File("small", age: .days(3), size: 10) } }
        defer { tree.remove() }
        let policy = try Self.policy("  - { name: e, path: tmp, expire: 1d, size: { over: 1KiB } }\n")
        let p = try Self.plan(tree, policy)
        #expect(p.lines == ["delete tmp/big"])
        #expect(PlanValidation(policy: policy).firstInvalid(in: p) == nil)
        let everything = try Self.plan(tree, Self.policy("  - { name: e, path: tmp, expire: 1d }\n"))
        var forged = p
        forged.actions = everything.actions.filter { $0.path == path("tmp/small") }
        #expect(PlanValidation(policy: policy).firstInvalid(in: forged)?.reason
                == "rule 'e' does not select it: 10 bytes, not over 1024 (size: over 1.0 KiB)")
    }

    @Test("globs that differ only by case are not taken as disjoint when a rule ignores case")
    func overlaps() throws {
        func warnings(_ filter: String) throws -> [String] {
            let yaml = "version: 1\nname: t\nrules:\n"
                + "  - { name: a, path: docs, match: '**/*.txt', expire: 1d\(filter) }\n"
                + "  - { name: b, path: docs, match: '**/*.TXT', naming: { case: lower } }\n"
            return try PolicyLoader.load(yaml: yaml, file: "p.yaml").warnings.map(\.message)
        }
        #expect(try warnings(", case: insensitive")
                == ["rule 'b' renames inside 'docs', where rule 'a' deletes; an entry both would touch is deleted, not renamed"])
        #expect(try warnings("").isEmpty)
    }
}
