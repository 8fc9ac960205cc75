// `by:` as a list (`by: [atime, mtime]`): the newest of exactly those timestamps, tmpfiles' age-by letters. A
// file just made has a fresh ctime, so `by: newest` keeps it where `[atime, mtime]` judges its old times.
import Testing
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyModel
@testable import StoragePolicyPlan
@testable import StoragePolicyEvaluation
import TreeFixture

@Suite("Expire by a list of timestamps") struct ExpireByListTests {
    static func policy(_ expire: String, extra: String = "") throws -> Policy {
        try PolicyLoader.load(yaml: "version: 1\nname: t\nrules:\n  - { name: e, path: tmp, expire: \(expire)\(extra) }\n",
                              file: "p.yaml").policy
    }

    static func expire(_ p: Policy) -> Expire {
        guard case .expire(let e) = p.rules[0].kind else { Issue.record("not an expire rule"); return Expire(after: .days(1)) }
        return e
    }

    @Test("a list decodes to the newest of those, a list of one to that timestamp; validate --effective writes it back")
    func decoding() throws {
        let list = try Self.policy("{ after: 1d, by: [atime, mtime] }")
        #expect(Self.expire(list).by == .newest && Self.expire(list).newestOf == [.atime, .mtime])
        #expect(EffectivePolicyWriter.yaml(list).contains("expire: { after: 1d, by: [atime, mtime] }"))
        let again = try PolicyLoader.load(yaml: EffectivePolicyWriter.yaml(list), file: "e.yaml").policy
        #expect(again.rules[0].kind == list.rules[0].kind)
        let one = try Self.policy("{ after: 1d, by: [ctime] }")
        #expect(Self.expire(one).by == .ctime && Self.expire(one).newestOf == nil)
        #expect(Self.expire(try Self.policy("{ after: 1d, by: atime }")).newestOf == nil)
    }

    @Test("newest, a repeat, an empty list, an unknown name and a list with unit: directory are errors at line:col")
    func errors() {
        let head = "version: 1\nname: t\nrules:\n  - { name: e, path: tmp, expire: "
        #expect(PolicyLoaderTests.errors(head + "{ after: 1d, by: [atime, newest] } }\n")
                == ["4:60: rule 'e': 'expire': 'by': 'newest' is already the newest of all timestamps; list only mtime, atime, ctime and birth, or write 'by: newest'"])
        #expect(PolicyLoaderTests.errors(head + "{ after: 1d, by: [atime, atime] } }\n")
                == ["4:60: rule 'e': 'expire': 'by': 'atime' is listed twice"])
        #expect(PolicyLoaderTests.errors(head + "{ after: 1d, by: [] } }\n")
                == ["4:52: rule 'e': 'expire': 'by': an empty list judges by nothing; give one or more of mtime, atime, ctime, birth"])
        #expect(PolicyLoaderTests.errors(head + "{ after: 1d, by: [atime, mtme] } }\n").first?.contains("invalid value 'mtme'") == true,
                "\(PolicyLoaderTests.errors(head + "{ after: 1d, by: [atime, mtme] } }\n"))")
        #expect(PolicyLoaderTests.errors(head + "{ after: 1d, by: [atime, mtime], unit: directory } }\n")
                == ["4:35: rule 'e': 'expire': 'by' as a list is not supported with 'unit: directory' (units are dated by one timestamp); use one of mtime, atime, ctime, newest, birth"])
    }

    @Test("[atime, mtime] judges files and folders by the newer of the two, never by ctime")
    func judging() throws {
        let tree = try Tree {
            Dir("tmp") {
                File("old", age: .days(3), atime: .days(3))
                File("read-lately", age: .days(3), atime: .hours(1))
                File("new\nline", age: .days(3), atime: .days(2))
                File(bytes: [0x6E, 0xFF], age: .hours(2), atime: .days(3))
                Dir("empty", age: .days(3))
            }
        }
        defer { tree.remove() }
        let list = try Self.policy("{ after: 1d, by: [atime, mtime] }")
        let p = try Planner(policy: list, root: tree.root, options: tree.options(threads: 2, budget: nil)).plan()
        // Files only: listing a folder may move its atime (relatime), so the folder is judged elsewhere.
        #expect(Set(p.actions.filter { $0.type == .regular }.map(\.path.bytes)) == Set(["tmp/old", "tmp/new\nline"].map { Array($0.utf8) }))
        let reason = try #require(p.actions.first { $0.path == path("tmp/old") }?.reason)
        #expect(reason.hasPrefix("newest of atime/mtime ("), "\(reason)")
        #expect(reason.hasSuffix(" ago > 1d"), "\(reason)")
        // `newest` counts a file's ctime, which making the tree just moved: it keeps every file.
        let newest = try Self.policy("{ after: 1d, by: newest }")
        let q = try Planner(policy: newest, root: tree.root, options: tree.options(threads: 2, budget: nil)).plan()
        #expect(q.actions.filter { $0.type == .regular }.isEmpty)
        // A saved plan's delete of an entry whose recorded mtime is young is refused: the list includes mtime.
        var forged = p
        forged.actions = [Action(kind: .delete, path: path("tmp/x"), rule: "e", reason: "forged",
                                 identity: EntryIdentity(device: 1, inode: 2, size: 0, modificationTimeNs: Planner.currentTimeNs()),
                                 type: .regular)]
        #expect(PlanValidation(policy: list).firstInvalid(in: forged)?.reason == "its mtime is not older than 1d: rule 'e' does not expire it")
    }

    @Test("explain names the list and the timestamp that decided")
    func explain() throws {
        let tree = try Tree { Dir("tmp") { File("read-lately", age: .days(3), atime: .hours(1)) } }
        defer { tree.remove() }
        let e = try Explainer(policy: Self.policy("{ after: 1d, by: [atime, mtime] }"), root: tree.root).explain(path("tmp/read-lately"))
        #expect(e.rules[0].findings.last?.hasPrefix("newest of atime/mtime (atime) 1h") == true, "\(e.rules[0].findings)")
        #expect(e.rules[0].findings.last?.hasSuffix(" ago <= 1d: keep") == true, "\(e.rules[0].findings)")
    }
}
