import Testing
import TreeFixture
@testable import StoragePolicy
@testable import StoragePolicyModel

@Suite("Policy DSL") struct PolicyBuilderTests {
    /// Rules and layout without source locations, for comparing a DSL policy with a loaded one.
    static func normalized(_ p: Policy) -> Policy {
        var copy = p
        copy.source = nil
        copy.sourceBytes = nil
        copy.rules = copy.rules.map { var r = $0; r.location = nil; return r }
        copy.layout = copy.layout.map { var l = $0; l.location = nil; return l }
        return copy
    }

    @Test("the DSL's .percent(25) has the YAML 25%'s floor of 10: one file among two entries is not refused")
    func percentFloor() throws {
        let built = try Policy("p", maxDelete: .percent(25)) { Rule.expire("tmp", in: "tmp", after: .hours(1)) }
        let loaded = try PolicyLoader.load(yaml: "version: 1\nname: p\nmax-delete: 25%\nrules:\n  - {name: tmp, path: tmp, expire: {after: 1h}}\n").policy
        #expect(built.maxDelete == loaded.maxDelete)
        #expect(built.maxDelete == .percent(25, atLeast: 10))
        #expect(built.maxDelete?.allowed(outOf: 2) == 10)
        // An explicit floor of 0 is still there for who wants exactly the percentage.
        #expect(DeleteLimit.percent(25, atLeast: 0).allowed(outOf: 2) == 0)
    }

    @Test("an app's launch cleanup with maxDelete: .percent(25) applies on a small container instead of being refused")
    func percentFloorApplies() throws {
        let tree = try Tree { Dir("tmp") { File("old", age: .days(2)) } }
        defer { tree.remove() }
        let policy = try Policy("app", maxDelete: .percent(25)) { Rule.expire("tmp", in: "tmp", after: .hours(1)) }
        // 1 delete out of 2 entries scanned is 50%: the bare percentage refuses it (nothing changes)...
        let bare = try Policy("app", maxDelete: .percent(25, atLeast: 0)) { Rule.expire("tmp", in: "tmp", after: .hours(1)) }
        do {
            _ = try StorageEngine(policy: bare, root: tree.root, planOptions: tree.options()).apply()
            Issue.record("expected the max-delete refusal")
        } catch {
            guard case .apply(.refused(let message)) = error else { Issue.record("\(error)"); return }
            #expect(message.contains("max-delete"), "\(message)")
        }
        // ...while .percent(25), like YAML's 25%, is within its floor of 10.
        let result = try StorageEngine(policy: policy, root: tree.root, planOptions: tree.options()).apply()
        #expect(result.counts[.delete] == 1, "\(result.counts)")
    }

    @Test("a policy built in Swift equals the same policy loaded from YAML") func sameAsYAML() throws {
        let built = try Policy("app-sandbox", maxDelete: .percent(25, atLeast: 10)) {
            LayoutDirectory("Documents/UserFiles")
            LayoutDirectory("Library/Caches/Thumbnails", excludeFromBackup: true, cacheTag: true)
            Rule.expire("tmp-expiry", in: "tmp", after: .hours(24), by: .newest)
            Rule.expire("download-residue", in: "Documents", after: .hours(1)).matching("**/*.tmp")
            Rule.trash("trash-retention", in: "Documents/UserFiles/.Trash", retain: .days(30))
            Rule.quota("thumbnail-quota", in: "Library/Caches/Thumbnails", max: .mebibytes(512), target: .percent(90))
            Rule.naming("lowercase-names", in: "Documents/UserFiles", case: .lower).matching("**/*.txt").excluding(".Trash/**")
            Rule.forbid("no-db", in: "Documents/UserFiles", "**/*.sqlite").audit().severity(.error)
            Rule.excludeFromBackup("caches", in: "Library/Caches", cacheTag: true)
        }
        let yaml = """
        version: 1
        name: app-sandbox
        max-delete: 25%
        layout:
          - path: Documents/UserFiles
          - {path: Library/Caches/Thumbnails, backup: exclude, cacheTag: true}
        rules:
          - {name: tmp-expiry, path: tmp, expire: {after: 24h, by: newest}}
          - {name: download-residue, path: Documents, match: ["**/*.tmp"], expire: {after: 1h}}
          - {name: trash-retention, path: Documents/UserFiles/.Trash, trash: {retain: 30d}}
          - {name: thumbnail-quota, path: Library/Caches/Thumbnails, quota: {max: 512MiB, target: 90%}}
          - {name: lowercase-names, path: Documents/UserFiles, match: ["**/*.txt"], exclude: [".Trash/**"], naming: {case: lower}}
          - {name: no-db, path: Documents/UserFiles, forbid: ["**/*.sqlite"], mode: audit, severity: error}
          - {name: caches, path: Library/Caches, backup: {exclude: true, cacheTag: true}}
        """
        let loaded = try PolicyLoader.load(yaml: yaml).policy
        #expect(Self.normalized(built) == Self.normalized(loaded))
    }

    @Test("invalid DSL policies throw every problem, as the loader does") func invalid() {
        do {
            _ = try Policy("x") {
                Rule.expire("a", in: "../up", after: .hours(1))
                Rule.expire("b", in: "ok", after: .hours(1)).matching("[oops")
                Rule.expire("c", in: "ok", after: .hours(1))
                Rule.expire("c", in: "ok2", after: .hours(1))
            }
            Issue.record("expected the policy to be refused")
        } catch {
            #expect(error.diagnostics.map(\.message) == [
                "rule 'a': path '../up' could reach outside the root (absolute paths and '..' are not allowed)",
                "rule 'b': invalid pattern '[oops': unclosed '[' (close it with ']')",
                "duplicate rule name 'c'; rule names identify findings and journal entries",
            ])
        }
    }
}
