// Layout `mode:`, `owner:`, `group:` and `fix:` (tmpfiles' `d` lines): decoding, its errors at file:line:col,
// validate --effective's text, the plan's set-perms action (created, repaired, or drift reported) and the
// saved-plan check that refuses a set-perms the policy could not have planned.
import Foundation
import Testing
@testable import StoragePolicy
@testable import StoragePolicyModel
@testable import StoragePolicyPlan
@testable import StoragePolicyEvaluation

@Suite("Layout mode, owner and group") struct LayoutAttributesTests {
    static func layout(_ body: String) throws -> [LayoutEntry] {
        try PolicyLoader.load(yaml: "version: 1\nname: t\nlayout:\n" + body + "rules: []\n", file: "p.yaml").policy.layout
    }

    @Test("mode as a quoted octal string, owner and group as ids or names, fix")
    func decodes() throws {
        let entries = try Self.layout("""
          - { path: a, mode: "0750", owner: 12345, group: "root", fix: true }
          - { path: b, mode: '700' }
          - b/c

        """)
        #expect(entries[0].mode == 0o750 && entries[0].owner == PrincipalFilter(id: 12345) && entries[0].fix)
        #expect(entries[0].group == PrincipalFilter(id: 0, name: "root"))
        #expect(entries[1].mode == 0o700 && !entries[1].fix && entries[1].owner == nil)
        #expect(!entries[2].hasAttributes)
    }

    @Test("an unquoted mode, a mode that is not octal bits, and an unknown owner are errors at their line and column")
    func errors() {
        let head = "version: 1\nname: t\nlayout:\n"
        #expect(PolicyLoaderTests.errors(head + "  - path: a\n    mode: 0750\nrules: []\n")
                == [#"5:11: layout entry: mode 0750 must be a quoted octal string, e.g. mode: "0750" (unquoted, YAML readers disagree on whether it is octal or decimal)"#])
        #expect(PolicyLoaderTests.errors(head + "  - path: a\n    mode: 750\nrules: []\n")
                == [#"5:11: layout entry: mode 750 must be a quoted octal string, e.g. mode: "0750" (unquoted, YAML readers disagree on whether it is octal or decimal)"#])
        #expect(PolicyLoaderTests.errors(head + "  - { path: a, mode: \"0958\" }\nrules: []\n")
                == [#"4:22: layout entry: invalid mode '0958' (expected 3 or 4 octal digits, e.g. "0750")"#])
        #expect(PolicyLoaderTests.errors(head + "  - { path: a, mode: \"17777\" }\nrules: []\n")
                == [#"4:22: layout entry: invalid mode '17777' (expected 3 or 4 octal digits, e.g. "0750")"#])
        #expect(PolicyLoaderTests.errors(head + "  - { path: a, owner: no-such-user-q7 }\nrules: []\n")
                == ["4:23: layout entry: 'owner': no user named 'no-such-user-q7' on this system (getent passwd lists them; a number is taken as an id)"])
        #expect(PolicyLoaderTests.errors(head + "  - { path: a, fix: maybe }\nrules: []\n").count == 1)
    }

    @Test("fix without mode, owner or group is a warning")
    func fixAlone() throws {
        #expect(try PolicyLoaderTests.warnings("version: 1\nname: t\nlayout:\n  - { path: a, fix: true }\nrules: []\n")
                == ["layout entry 'a': 'fix: true' without mode, owner or group repairs nothing"])
    }

    @Test("validate --effective writes them back, a name as the name")
    func effective() throws {
        let policy = try PolicyLoader.load(yaml: "version: 1\nname: t\nlayout:\n  - { path: a, mode: \"750\", owner: 7, group: root, fix: true }\nrules: []\n",
                                           file: "p.yaml").policy
        let text = EffectivePolicyWriter.yaml(policy)
        #expect(text.contains("  - path: \"a\"\n    mode: \"0750\"\n    owner: 7\n    group: \"root\"\n    fix: true\n"), "\(text)")
    }

    @Test("a saved plan's set-perms must be the entry's own values, and on an existing directory needs fix")
    func savedPlanChecks() throws {
        let policy = try PolicyLoader.load(yaml: "version: 1\nname: t\nlayout:\n  - { path: a, mode: \"0750\", owner: 7 }\n  - { path: b, mode: \"0700\", fix: true }\nrules: []\n",
                                           file: "p.yaml").policy
        let check = PlanValidation(policy: policy)
        let id = EntryIdentity(device: 1, inode: 2, size: 0, modificationTimeNs: 0)
        func action(_ path: String, mode: UInt32?, owner: UInt32? = nil, identity: EntryIdentity? = nil) -> Action {
            Action(kind: .setPermissions(mode: mode, owner: owner, group: nil), path: RelativePath(path)!, rule: "layout",
                   reason: "r", identity: identity, type: .directory)
        }
        #expect(check.problem(with: action("a", mode: 0o750, owner: 7)) == nil)
        #expect(check.problem(with: action("a", mode: 0o777)) == "the layout sets the mode of a to 0750")
        #expect(check.problem(with: action("a", mode: nil, owner: 0)) == "the layout sets the owner of a to 7")
        #expect(check.problem(with: action("a", mode: 0o750, identity: id))
                == "layout directory a has no 'fix: true': an existing directory's mode and owner are never changed")
        #expect(check.problem(with: action("b", mode: 0o700, identity: id)) == nil)
        #expect(check.problem(with: action("c", mode: 0o700)) == "no layout directory with a mode, owner or group is at c")
    }

    @Test("set-perms round-trips through the plan's Codable form, mode as an octal string")
    func codable() throws {
        let a = Action(kind: .setPermissions(mode: 0o2750, owner: 12345, group: nil), path: RelativePath("x")!, rule: "layout",
                       reason: "r", type: .directory)
        let data = try JSONEncoder().encode(a)
        #expect(String(decoding: data, as: UTF8.self).contains(#""mode":"2750""#))
        #expect(try JSONDecoder().decode(Action.self, from: data) == a)
    }
}
