// The registry of rule kinds (Policy/Kinds/RuleKindRegistry.swift) is the one list: the decoder's keys, the
// inUse kinds, the effective YAML and the schema's kind parts all come from it, and each kind's language side
// and walk side agree on its keyword. Reads only Docs/policy.schema.json.
import Foundation
import Testing
@testable import StoragePolicy
@testable import StoragePolicyModel

@Suite("Rule kind registry") struct RuleKindRegistryTests {
    @Test("every Rule.Kind case has one language side and one behaviour, agreeing on the keyword")
    func oneSidePerCase() {
        let keywords = RuleKindsTests.samples.map(\.keyword)
        #expect(Set(keywords).count == keywords.count)
        #expect(RuleKindsTests.samples.map { type(of: $0.syntax).keyword } == keywords)
        #expect(RuleKindsTests.samples.map { $0.syntaxType.keyword } == keywords)
        #expect(RuleKindsTests.samples.map { type(of: $0.behavior).keyword } == keywords)
        #expect(Rule.Kind.syntaxes.map { $0.keyword } == keywords)
    }

    @Test("the decoder's kind keys, rule keys and inUse kinds are the registry's, in its order")
    func decoderListsAreDerived() {
        #expect(PolicyDecoder.kindKeys == ["expire", "trash", "quota", "naming", "backup", "forbid"])
        #expect(PolicyDecoder.kindKeys == Rule.Kind.yamlKeywords)
        #expect(Array(PolicyDecoder.ruleKeys.suffix(PolicyDecoder.kindKeys.count)) == PolicyDecoder.kindKeys)
        #expect(PolicyDecoder.inUseKinds == ["expire", "trash", "quota"])
        #expect(PolicyDecoder.inUseKindsText == "expire, quota and trash")
        #expect(Rule.Kind.syntax(forKeyword: "custom") == nil)
    }

    @Test("a rule's default severity is its kind's: error for forbid and backup, warning for the rest")
    func defaultSeverities() {
        let severities = RuleKindsTests.samples.map { RuleKindsTests.rule($0).effectiveSeverity }
        #expect(severities == [.warning, .warning, .warning, .warning, .error, .error, .warning])
    }

    @Test("each YAML kind's effective line loads back to the same kind")
    func effectiveYAMLRoundTrips() throws {
        for kind in RuleKindsTests.samples where type(of: kind.syntax).writtenInYAML {
            let yaml = "version: 1\nname: t\nrules:\n  - name: r\n    path: tmp\n    \(kind.syntax.effectiveYAML)\n"
            let loaded = try PolicyLoader.load(yaml: yaml, file: "t.yaml").policy
            #expect(loaded.rules.map(\.kind) == [kind], "\(yaml)")
        }
    }

    @Test("the schema's kind parts are made from the registry and stand verbatim in Docs/policy.schema.json")
    func schemaPartsComeFromTheKinds() throws {
        let file = try String(contentsOfFile: SchemaFixture.schemaPath, encoding: .utf8)
        for part in [RuleKindSchema.properties, RuleKindSchema.alternatives, RuleKindSchema.definitions] {
            #expect(file.contains(part + "\n"))
        }
        #expect(file.contains("exactly one kind: \(RuleKindSchema.kindList)."))
        #expect(RuleKindSchema.kindList == "expire, trash, quota, naming, backup or forbid")
        let definitions = try #require(try JSONSerialization.jsonObject(with: Data(("{" + RuleKindSchema.definitions + "}").utf8)) as? [String: Any])
        #expect(Set(definitions.keys) == Set(Rule.Kind.yamlKeywords))
    }

    @Test("the DSL's forbid checks its patterns when the policy is built, naming the rule")
    func dslForbidIsChecked() {
        #expect(throws: PolicyLoadError.self) { try Policy("p") { Rule.forbid("none", in: "tmp") } }
        do {
            _ = try Policy("p") { Rule.forbid("bad", in: "tmp", "[a").matching("[b") }
            Issue.record("an invalid pattern was accepted")
        } catch {
            let messages = error.diagnostics.map(\.message)
            #expect(messages.count == 2)
            #expect(messages.first?.hasPrefix("rule 'bad': invalid pattern '[a'") == true)
            #expect(messages.last?.hasPrefix("rule 'bad': invalid pattern '[b'") == true)
        }
    }
}
