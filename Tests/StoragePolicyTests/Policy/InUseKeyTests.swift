// The per-rule `inUse` key: skip by default, ignore on request, only on expire, quota and trash rules.
import Testing
@testable import StoragePolicy
@testable import StoragePolicyModel
@testable import StoragePolicyEvaluation

@Suite("Policy inUse key") struct InUseKeyTests {
    static func rules(_ body: String) throws -> [Rule] {
        try PolicyLoader.load(yaml: "version: 1\nname: t\nrules:\n" + body, file: "p.yaml").policy.rules
    }

    @Test("skip by default; ignore when the rule says so")
    func values() throws {
        let rules = try Self.rules("""
          - { name: a, path: tmp, expire: 1d }
          - { name: b, path: tmp, expire: 1d, inUse: ignore }
          - { name: c, path: big, quota: { max: 1GB }, inUse: skip }

        """)
        #expect(rules.map(\.inUse) == [.skip, .ignore, .skip])
        #expect(InUseCheck.checkedRules(rules) == ["a", "c"])
    }

    @Test("a bad value, and inUse on a rule that deletes nothing, are errors")
    func errors() {
        #expect(PolicyLoaderTests.errors("version: 1\nname: t\nrules:\n  - { name: a, path: tmp, expire: 1d, inUse: never }\n")
                == ["4:46: rule 'a': 'inUse': invalid value 'never' (expected one of: skip, ignore)"])
        #expect(PolicyLoaderTests.errors("version: 1\nname: t\nrules:\n  - { name: a, path: docs, naming: { case: lower }, inUse: skip }\n")
                == ["4:60: rule 'a': 'inUse' applies to expire, quota and trash rules only"])
    }
}
