// Layout `type: file` and `type: symlink` (tmpfiles' `f` and `L` lines): decoding, the keys each type refuses
// (errors at their line and column), validate --effective's text, and the saved-plan checks of mkfile and symlink.
import Testing
@testable import StoragePolicy
@testable import StoragePolicyModel
@testable import StoragePolicyPlan
@testable import StoragePolicyEvaluation

@Suite("Layout files and symlinks") struct LayoutTypesTests {
    static let head = "version: 1\nname: t\nlayout:\n"

    @Test("type: file with content, type: symlink with target")
    func decodes() throws {
        let entries = try LayoutAttributesTests.layout("""
          - { path: etc/motd, type: file, content: "hi\\n", mode: "0644" }
          - { path: current, type: symlink, target: ../releases/3 }
          - { path: d, type: directory }

        """)
        #expect(entries.map(\.type) == [.file, .symlink, .directory])
        #expect(entries[0].content == Array("hi\n".utf8) && entries[1].target == Array("../releases/3".utf8))
    }

    @Test("keys a type does not take, a symlink without target and an unknown type are errors at their line and column")
    func errors() {
        #expect(PolicyLoaderTests.errors(Self.head + "  - { path: l, type: symlink }\nrules: []\n")
                == ["4:5: layout entry 'l': a symlink needs 'target:', what it points to"])
        #expect(PolicyLoaderTests.errors(Self.head + "  - { path: l, type: symlink, target: x, mode: \"0644\" }\nrules: []\n")
                == ["4:42: layout entry 'l': a symlink has no 'mode' of its own here (remove it; set it on the target)"])
        #expect(PolicyLoaderTests.errors(Self.head + "  - { path: f, type: file, target: x }\nrules: []\n")
                == ["4:28: layout entry 'f': 'target' is for 'type: symlink' only"])
        #expect(PolicyLoaderTests.errors(Self.head + "  - { path: d, content: x }\nrules: []\n")
                == ["4:16: layout entry 'd': 'content' is for 'type: file' only"])
        #expect(PolicyLoaderTests.errors(Self.head + "  - { path: f, type: file, backup: exclude }\nrules: []\n")
                == ["4:28: layout entry 'f': 'backup' applies to directories only, not a file"])
        #expect(PolicyLoaderTests.errors(Self.head + "  - { path: f, type: fifo }\nrules: []\n")
                == ["4:22: layout entry: invalid type 'fifo' (expected directory, file or symlink)"])
    }

    @Test("validate --effective writes type, target and content back")
    func effective() throws {
        let policy = try PolicyLoader.load(yaml: Self.head + "  - { path: l, type: symlink, target: \"a b\" }\n  - { path: f, type: file, content: \"x\" }\nrules: []\n",
                                           file: "p.yaml").policy
        let text = EffectivePolicyWriter.yaml(policy)
        #expect(text.contains("  - path: \"l\"\n    type: symlink\n    target: \"a b\"\n"), "\(text)")
        #expect(text.contains("  - path: \"f\"\n    type: file\n    content: \"x\"\n"), "\(text)")
    }

    @Test("a saved plan's mkfile and symlink must be exactly the entry's; no mkdir where a file goes")
    func savedPlanChecks() throws {
        let policy = try PolicyLoader.load(yaml: Self.head + "  - { path: d/f, type: file, content: x, mode: \"0600\" }\n  - { path: l, type: symlink, target: t }\nrules: []\n",
                                           file: "p.yaml").policy
        let check = PlanValidation(policy: policy)
        func make(_ kind: Action.Kind, _ path: String, _ type: FileType) -> Action {
            Action(kind: kind, path: RelativePath(path)!, rule: "layout", reason: "r", type: type)
        }
        #expect(check.problem(with: make(.mkfile(content: [0x78], mode: 0o600, owner: nil, group: nil), "d/f", .regular)) == nil)
        #expect(check.problem(with: make(.mkfile(content: [0x79], mode: 0o600, owner: nil, group: nil), "d/f", .regular))
                == "the content is not the layout file's")
        #expect(check.problem(with: make(.mkfile(content: [0x78], mode: 0o666, owner: nil, group: nil), "d/f", .regular))
                == "the mode and owner are not the layout file's")
        #expect(check.problem(with: make(.symlink(target: [0x74]), "l", .symlink)) == nil)
        #expect(check.problem(with: make(.symlink(target: Array("/etc/shadow".utf8)), "l", .symlink)) == "the target is not the layout symlink's")
        #expect(check.problem(with: make(.symlink(target: [0x74]), "d/f", .symlink)) == "no layout symlink is at d/f")
        #expect(check.problem(with: make(.mkdir, "d", .directory)) == nil)
        #expect(check.problem(with: make(.mkdir, "d/f", .directory)) == "the layout creates only its directories and the directories leading to them")
    }
}
