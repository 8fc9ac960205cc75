// Every rule kind has one behaviour (Evaluation/Kinds/) and every place that names the kinds is in step with
// it: Rule.Kind, RuleKinds.all, the report and explain texts, and Docs/policy.schema.json. Reads only the schema.
import Testing
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyModel
@testable import StoragePolicyEvaluation
@testable import StoragePolicyReports

@Suite("Rule kinds") struct RuleKindsTests {
    /// One of each kind. `position` has no default case: a new Rule.Kind case does not compile until it is here.
    static let samples: [Rule.Kind] = [
        .expire(Expire(after: .hours(24))),
        .trash(TrashRetention(retain: .days(30))),
        .quota(Quota(max: ByteSize(bytes: 1 << 20))),
        .naming(Naming(letterCase: .lower, pattern: "^[a-z]+$")),
        .backup(BackupExclusion()),
        .forbid([try! Glob("**/*.sqlite")]),
        .custom(AnyCustomRule(ClosureCustomRule(summary: "Empty files are reported.") { _ in [] })),
    ]

    static func position(_ kind: Rule.Kind) -> Int {
        switch kind {
        case .expire: 0
        case .trash: 1
        case .quota: 2
        case .naming: 3
        case .backup: 4
        case .forbid: 5
        case .custom: 6
        }
    }

    static func rule(_ kind: Rule.Kind, mode: Rule.Mode = .enforce) -> Rule {
        Rule(name: "r-\(kind.keyword)", path: RelativePath("tmp")!, mode: mode, kind: kind)
    }

    @Test("the samples hold every Rule.Kind case once, and RuleKinds.all lists exactly their behaviours")
    func everyKindHasOneBehavior() {
        #expect(Self.samples.map(Self.position) == Array(0..<7))
        let behaviors = Self.samples.map { type(of: $0.behavior).keyword }
        #expect(behaviors == Self.samples.map(\.keyword))
        #expect(Set(RuleKinds.all.map { $0.keyword }) == Set(behaviors))
        #expect(RuleKinds.all.count == Self.samples.count)
    }

    @Test("resolution runs trash and expire before deletes are settled, forbid then quota after")
    func resolutionOrder() {
        #expect(RuleKinds.all.filter { !$0.resolvesAfterSettledDeletes }.map { $0.keyword }.prefix(2) == ["trash", "expire"])
        #expect(RuleKinds.all.filter { $0.resolvesAfterSettledDeletes }.map { $0.keyword } == ["forbid", "quota"])
    }

    @Test("each kind's report summary and help are non-empty, and no two kinds share one", arguments: [Rule.Mode.enforce, .audit])
    func reportTexts(mode: Rule.Mode) {
        let reports = Self.samples.map { ReportRule(Self.rule($0, mode: mode)) }
        #expect(reports.allSatisfy { !$0.summary.isEmpty && !$0.help.isEmpty })
        #expect(Set(reports.map(\.summary)).count == reports.count)
        #expect(Set(reports.map(\.help)).count == reports.count)
        #expect(reports.map(\.kind) == Self.samples.map(\.keyword))
    }

    @Test("each kind explains a selected regular file in its scope with its own words")
    func explanations() {
        let now: Int64 = 1_800_000_000 * 1_000_000_000
        let status = FileStatus(device: 1, inode: 2, type: .regular, size: 10, allocatedSize: 4096, accessTimeNs: now,
                                modificationTimeNs: now - 86_400 * 2 * 1_000_000_000, changeTimeNs: now)
        let found = Self.samples.map { kind in
            let compiled = CompiledRule(index: 0, rule: Self.rule(kind))
            return kind.behavior.explain(ExplainedEntry(rule: compiled, directory: [], name: Array("A.sqlite".utf8)[...],
                                                        status: status, now: now, hasTrashFolder: true))
        }
        #expect(found.allSatisfy { !$0.isEmpty && $0.allSatisfy { !$0.isEmpty } })
        #expect(Set(found.map { $0.joined(separator: "\n") }).count == found.count)
    }

    @Test("Docs/policy.schema.json and the decoder offer exactly the YAML kinds (every kind but custom)")
    func schemaNamesTheKinds() throws {
        let schema = try SchemaFixture.schema()
        let rule = try #require(schema["definitions"]?["rule"])
        let yamlKinds = Set(Self.samples.map(\.keyword)).subtracting(["custom"])
        let properties = try #require(rule["properties"]?.object)
        let referenced = Set(properties.compactMap { key, value in
            value["$ref"]?.string == "#/definitions/\(key)" ? key : nil
        })
        #expect(referenced == yamlKinds)
        let alternatives = try #require(rule["oneOf"]?.array)
        let required = Set(alternatives.compactMap { $0["required"]?.array?.compactMap(\.string) }
            .filter { $0.contains("path") }.flatMap { $0.filter { $0 != "path" } })
        #expect(required == yamlKinds)
        // The decoder's list of kind keys (its "no rule kind" message and its suggestions) says the same.
        #expect(Set(PolicyDecoder.kindKeys) == yamlKinds)
        #expect(PolicyDecoder.kindKeys.count == yamlKinds.count)
    }
}
