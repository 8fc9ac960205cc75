// Naming styles beyond lowercase: case kebab, snake and upper, spaces dash or underscore, unicode nfc or nfd,
// onCollision: report; the same free numbered names and NAME_MAX check as lowercase, on ugly names.
import Testing
@testable import StoragePolicy
@testable import StoragePolicyModel
@testable import StoragePolicyPlan
@testable import StoragePolicyEvaluation
import TreeFixture

@Suite("Naming styles") struct NamingStyleTests {
    static func policy(_ naming: String) throws -> Policy {
        try PolicyLoader.load(yaml: "version: 1\nname: t\nrules:\n  - { name: n, path: docs, naming: \(naming) }\n", file: "p.yaml").policy
    }

    static func plan(_ tree: Tree, _ naming: String) throws -> Plan {
        let policy = try policy(naming)
        return try Planner(policy: policy, root: tree.root, options: tree.options(threads: 2, budget: nil)).plan()
    }

    /// `from -> to` of each rename, the names as raw text (no escaping).
    static func renames(_ p: Plan) -> [String] {
        p.actions.compactMap { a in
            guard case .rename(let to) = a.kind else { return nil }
            return String(decoding: a.path.bytes, as: UTF8.self) + " -> " + String(decoding: to.bytes, as: UTF8.self)
        }
    }

    static func style(_ naming: Naming) -> (String) -> String? {
        { name in
            switch NameStyle(naming: naming).form(Array(name.utf8)[...]) {
            case .unchanged: name
            case .changed(let b): String(decoding: b, as: UTF8.self)
            case .notUTF8: nil
            }
        }
    }

    @Test("each style's form of a name: the issue's examples, runs of separators, the extension kept")
    func forms() {
        let kebab = Self.style(Naming(letterCase: .kebab)), snake = Self.style(Naming(letterCase: .snake))
        #expect(kebab("My File.TXT") == "my-file.txt")
        #expect(snake("My File.TXT") == "my_file.txt")
        #expect(kebab("a  b__c-d.tar.GZ") == "a-b-c-d.tar.gz")
        #expect(snake("a - b.txt") == "a_b.txt")
        #expect(kebab(".Hidden File") == ".hidden-file")
        #expect(Self.style(Naming(letterCase: .upper))("readme.md") == "README.MD")
        var spaces = Naming(); spaces.spaces = .underscore
        #expect(Self.style(spaces)("My File.txt") == "My_File.txt")
        var nfc = Naming(); nfc.unicode = .nfc
        var nfd = Naming(); nfd.unicode = .nfd
        #expect(Array(Self.style(nfc)("Cafe\u{301}.txt")!.utf8) == Array("Caf\u{E9}.txt".utf8))
        #expect(Array(Self.style(nfd)("Caf\u{E9}.txt")!.utf8) == Array("Cafe\u{301}.txt".utf8))
        if case .notUTF8 = NameStyle(naming: Naming(letterCase: .kebab)).form([0xFF, 0x41][...]) {} else { Issue.record("restyled a name that is not UTF-8") }
    }

    @Test("kebab renames with free numbered names, a newline name included; a name not UTF-8 is reported")
    func kebabPlan() throws {
        let tree = try Tree {
            Dir("docs") {
                File("My File.TXT")
                File("my-file.txt")
                File("New\nLine.md")
                File(bytes: [0x41, 0xFF])
                File("ok-name.txt")
            }
        }
        defer { tree.remove() }
        let p = try Self.plan(tree, "{ case: kebab }")
        #expect(Self.renames(p) == ["docs/My File.TXT -> docs/my-file (2).txt", "docs/New\nLine.md -> docs/new\nline.md"])
        #expect(p.actions.first?.reason == "name is not kebab case")
        #expect(p.findings == ["n: docs/A\\xff: name is not valid UTF-8: it cannot be restyled"])
        let policy = try Self.policy("{ case: kebab }")
        #expect(PlanValidation(policy: policy).firstInvalid(in: p) == nil)
        var forged = p
        forged.actions[0].kind = .rename(to: path("docs/elsewhere.txt"))
        #expect(PlanValidation(policy: policy).firstInvalid(in: forged)?.reason
                == "the naming rule renames it to 'my-file.txt' (or a numbered free form), not 'elsewhere.txt'")
    }

    @Test("onCollision: report reports a taken name instead of numbering it; audit says what it would do")
    func collisionReport() throws {
        let tree = try Tree { Dir("docs") { File("My File.txt"); File("my_file.txt"); File("Other One.txt") } }
        defer { tree.remove() }
        let p = try Self.plan(tree, "{ case: snake, onCollision: report }")
        #expect(p.lines == ["rename docs/Other One.txt -> docs/other_one.txt"])
        #expect(p.findings == ["n: docs/My File.txt: name is not snake case, but 'my_file.txt' is taken (onCollision: report); not renamed"])
        let auditPolicy = try PolicyLoader.load(yaml: "version: 1\nname: t\nrules:\n  - { name: n, path: docs, mode: audit, naming: { case: snake } }\n",
                                                file: "p.yaml").policy
        let audit = try Planner(policy: auditPolicy, root: tree.root, options: tree.options(threads: 2, budget: nil)).plan()
        #expect(audit.findings.contains("n: docs/Other One.txt: name is not snake case (would be renamed to 'other_one.txt')"))
    }

    @Test("spaces, upper and unicode rename; a new name over NAME_MAX is reported, never planned")
    func otherStyles() throws {
        let long = String(repeating: "a", count: 119) + " " + String(repeating: "b", count: 120) + ".\u{E9}\u{E9}\u{E9}\u{E9}\u{E9}\u{E9}\u{E9}"
        let tree = try Tree { Dir("docs") { File("two words.txt"); File("Cafe\u{301}"); File(long) } }
        defer { tree.remove() }
        #expect(Self.renames(try Self.plan(tree, "{ spaces: dash }")).contains("docs/two words.txt -> docs/two-words.txt"))
        #expect(Self.renames(try Self.plan(tree, "{ unicode: nfc }")) == ["docs/Cafe\u{301} -> docs/Caf\u{E9}"])
        #expect(Self.renames(try Self.plan(tree, "{ case: upper }")).contains("docs/two words.txt -> docs/TWO WORDS.TXT"))
        // Seven é are 14 bytes in NFC and 21 in NFD: 255 bytes become 262.
        let nfd = try Self.plan(tree, "{ unicode: nfd }")
        #expect(Self.renames(nfd).isEmpty)
        #expect(nfd.findings.contains { $0.contains("name is not NFD, but the new name would be 262 bytes, more than the 255") })
    }

    @Test("the keys decode, validate --effective writes them back, bad values are errors at line:col")
    func decoding() throws {
        let p = try Self.policy("{ case: kebab, spaces: underscore, unicode: nfc, onCollision: report }")
        guard case .naming(let n) = p.rules[0].kind else { Issue.record("not naming"); return }
        #expect(n.letterCase == .kebab && n.spaces == .underscore && n.unicode == .nfc && n.onCollision == .report)
        let text = EffectivePolicyWriter.yaml(p)
        #expect(text.contains("naming: { case: kebab, spaces: underscore, unicode: nfc, onCollision: report }"))
        #expect(try PolicyLoader.load(yaml: text, file: "e.yaml").policy.rules[0].kind == p.rules[0].kind)
        #expect(PolicyLoaderTests.errors("version: 1\nname: t\nrules:\n  - { name: n, path: docs, naming: { unicode: nfkc } }\n")
                == ["4:47: rule 'n': 'naming': 'unicode': invalid value 'nfkc' (did you mean 'nfc'? expected one of: nfc, nfd)"])
    }
}
