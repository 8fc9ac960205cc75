import Testing
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyModel

@Suite("Policy loading") struct PolicyLoaderTests {
    static let header = "version: 1\nname: t\n"

    /// The errors of a policy as `line:col: message`, or [] when it loads.
    static func errors(_ yaml: String) -> [String] {
        do {
            _ = try PolicyLoader.load(yaml: yaml, file: "p.yaml")
            return []
        } catch {
            return error.diagnostics.filter { $0.severity == .error }.map {
                "\($0.location.map { "\($0.line):\($0.column)" } ?? "-"): \($0.message)"
            }
        }
    }

    static func warnings(_ yaml: String) throws -> [String] {
        try PolicyLoader.load(yaml: yaml, file: "p.yaml").warnings.map(\.message)
    }

    @Test("the design's example policy decodes into the exact model") func designExample() throws {
        let yaml = Self.header + """
        layout:
          - path: Documents/UserFiles
          - path: Library/Caches/Thumbnails
            backup: exclude
        rules:
          - name: tmp-expiry
            path: tmp
            expire: { after: 24h }
          - name: download-residue
            path: Documents
            match: ["**/*.tmp"]
            expire: { after: 1h, by: newest }
          - name: trash-retention
            path: Documents/UserFiles/.Trash
            trash: { retain: 30d }
          - name: thumbnail-quota
            path: Library/Caches/Thumbnails
            quota: { max: 512MiB, target: 90%, evict: oldest }
          - name: lowercase-names
            path: Documents/UserFiles
            match: ["**/*.txt"]
            exclude: [".Trash/**"]
            naming: { case: lower }
          - name: no-private-data
            path: Documents/UserFiles
            forbid: ["**/*.sqlite", "**/*.sqlite-wal"]
            mode: audit
        """
        let policy = try PolicyLoader.load(yaml: yaml).policy
        #expect(policy.name == "t")
        #expect(policy.layout.map(\.path.string) == ["Documents/UserFiles", "Library/Caches/Thumbnails"])
        #expect(policy.layout.map(\.excludeFromBackup) == [false, true])
        #expect(policy.rules.map(\.name) == ["tmp-expiry", "download-residue", "trash-retention", "thumbnail-quota", "lowercase-names", "no-private-data"])
        #expect(policy.rules[0].kind == .expire(Expire(after: .hours(24), by: .mtime)))
        #expect(policy.rules[1].kind == .expire(Expire(after: .hours(1), by: .newest)))
        #expect(policy.rules[1].match.map(\.pattern) == ["**/*.tmp"])
        #expect(policy.rules[2].kind == .trash(TrashRetention(retain: .days(30))))
        #expect(policy.rules[3].kind == .quota(Quota(max: ByteSize(bytes: 512 << 20), target: .percent(90), evict: .oldest)))
        #expect(policy.rules[4].kind == .naming(Naming(letterCase: .lower)))
        #expect(policy.rules[5].mode == .audit)
        #expect(policy.rules[5].location == PolicyLocation(file: "<policy>", line: 26, column: 5))
        #expect(policy.trashFolder?.string == "Documents/UserFiles/.Trash")
        #expect(policy.sourceBytes == Array(yaml.utf8))
    }

    @Test("each invalid policy is rejected with the exact location and message", arguments: [
        ("rules:\n  - name: a\n    path: tmp\n    expire: { afer: 24h }\n",
         "6:15: rule 'a': 'expire': unknown key 'afer' (did you mean 'after'?)"),
        ("rules:\n  - name: a\n    path: tmp\n    expire: { after: 24 hours }\n",
         "6:22: rule 'a': 'expire': 'after': invalid duration '24 hours' (expected \(PolicyDuration.acceptedForms))"),
        ("rules:\n  - name: a\n    path: ../etc\n    expire: 1h\n",
         "5:11: rule 'a': path '../etc' could reach outside the root ('..' is not allowed)"),
        ("rules:\n  - name: a\n    path: /var/tmp\n    expire: 1h\n",
         "5:11: rule 'a': path '/var/tmp' is absolute; rule and layout paths are relative to --root"),
        ("rules:\n  - name: a\n    path: x\n    expire: 1h\n    trash: 2d\n",
         "7:12: rule 'a': one rule has one kind, but this one has 'expire' and 'trash'; split it into 2 rules"),
        ("rules:\n  - name: a\n    path: x\n", "4:5: rule 'a': no rule kind; add exactly one of expire, trash, quota, naming, backup, forbid"),
        ("rules:\n  - name: a\n    path: x\n    expire: 1h\n  - name: a\n    path: y\n    expire: 2h\n",
         "7:5: duplicate rule name 'a' (first defined at 4:5); rule names identify findings and journal entries"),
        ("rules:\n  - name: a\n    path: x\n    match: ['*.db']\n    exclude: ['*.db']\n    expire: 1h\n",
         "4:5: rule 'a': match '*.db' is also excluded, so it can never match"),
        ("rules:\n  - name: a\n    path: x\n    match: [abc]\n    exclude: ['**']\n    expire: 1h\n",
         "4:5: rule 'a': exclude '**' removes every entry, so the rule can never match"),
        ("rules:\n  - name: a\n    path: x\n    match: 'a/[bc'\n    expire: 1h\n",
         "6:12: rule 'a': 'match': invalid pattern 'a/[bc': unclosed '[' (close it with ']')"),
        ("rules:\n  - name: a\n    path: x\n    quota: { max: 1GB, target: 2GB }\n",
         "6:32: rule 'a': 'quota': target 2GB is above max 1GB; eviction stops at the target, so it must be at or below max"),
        ("rules:\n  - name: a\n    path: x\n    quota: { max: lots }\n",
         "6:19: rule 'a': 'quota': 'max': invalid size 'lots' (expected \(ByteSize.acceptedForms))"),
        ("rules:\n  - name: a\n    path: x\n    mode: enforcee\n    expire: 1h\n",
         "6:11: rule 'a': 'mode': invalid value 'enforcee' (did you mean 'enforce'? expected one of: enforce, audit)"),
        ("rules:\n  - name: a\n    path: x\n    naming: { pattern: '([a-z' }\n", nil),
        ("rules:\n  - name: a\n    path: .policyctl/x\n    expire: 1h\n",
         "5:11: rule 'a': path '.policyctl/x' is inside policyctl's own state folder '.policyctl'"),
        ("rulez: []\n", "3:1: the policy: unknown key 'rulez' (did you mean 'rules'?)"),
        ("rules: {a: 1}\n", "3:8: 'rules': expected a list, found a mapping"),
        ("rules:\n  - name: a\n    path: .Trash\n    trash: {}\n", "6:12: rule 'a': 'trash': missing 'retain' (e.g. retain: 30d)"),
    ] as [(String, String?)])
    func invalid(body: String, expected: String?) {
        let errors = Self.errors(Self.header + body)
        if let expected {
            #expect(errors == [expected])
        } else {
            #expect(errors.count == 1)
            #expect(errors.first?.hasPrefix("6:24: rule 'a': 'naming': invalid pattern '([a-z'") == true)
        }
    }

    @Test("all errors are collected, not just the first") func collectsAll() {
        let errors = Self.errors(Self.header + "rules:\n  - name: a\n    path: ../x\n    expire: 1d\n  - name: b\n    path: y\n    expire: 1 day\nbogus: 1\n")
        #expect(errors.count == 3)
        #expect(errors.map { $0.prefix(4) } == ["5:11", "9:13", "10:1"])
    }

    @Test("version and name are required; other versions are refused") func header() {
        // Without `version:` the file is no policy: one error, nothing else of it read or quoted.
        #expect(Self.errors("rules: []\n") == ["1:1: missing 'version' (add 'version: 1'); a file without it is not a policy, and nothing of it is shown or read further"])
        #expect(Self.errors("version: 2\nname: x\n") == ["1:10: unsupported policy version '2' (this policyctl reads version 1)"])
        #expect(Self.errors("") == ["1:1: the policy is empty; it needs at least 'version: 1' and 'name'"])
    }

    @Test("YAML errors carry their location; tabs get a hint") func yamlErrors() {
        let errors = Self.errors("version: 1\nname: x\nrules:\n\t- a\n")
        #expect(errors.count == 1)
        #expect(errors.first?.hasPrefix("4:1: invalid YAML: ") == true)
        #expect(errors.first?.hasSuffix("YAML indents with spaces, never tabs") == true)
    }

    @Test("overlapping rules that fight are warned about") func overlapWarning() throws {
        let w = try Self.warnings(Self.header + "rules:\n  - name: n\n    path: Docs\n    naming: { case: lower }\n  - name: e\n    path: Docs/old\n    expire: 7d\n")
        #expect(w == ["rule 'n' renames inside 'Docs/old', where rule 'e' deletes; an entry both would touch is deleted, not renamed"])
    }

    @Test("a forbid rule that fights a naming rule is said to move entries to the trash, not to delete them")
    func overlapWarningForbid() throws {
        let w = try Self.warnings(Self.header + "rules:\n  - name: n\n    path: Docs\n    naming: { case: lower }\n  - name: f\n    path: Docs\n    forbid: ['**/*.sqlite']\n  - name: bin\n    path: Trash\n    trash: 30d\n")
        #expect(w == ["rule 'n' renames inside 'Docs', where rule 'f' moves entries to the trash; an entry both would touch is moved to the trash, not renamed"])
    }

    @Test("rules kept apart by globs or excludes do not warn") func overlapNone() throws {
        #expect(try Self.warnings(Self.header + "rules:\n  - name: n\n    path: Docs\n    match: ['**/*.txt']\n    naming: { case: lower }\n  - name: e\n    path: Docs\n    match: ['**/*.tmp']\n    expire: 1h\n").isEmpty)
        #expect(try Self.warnings(Self.header + "rules:\n  - name: n\n    path: Docs\n    exclude: ['.Trash/**']\n    naming: { case: lower }\n  - name: t\n    path: Docs/.Trash\n    trash: 30d\n").isEmpty)
    }

    @Test("shorthand forms: expire: 24h, trash: 30d, backup: exclude, forbid as a string") func shorthands() throws {
        let p = try PolicyLoader.load(yaml: Self.header + "rules:\n  - {name: a, path: t, expire: 24h}\n  - {name: b, path: .T, trash: 30d}\n  - {name: c, path: C, backup: exclude}\n  - {name: d, path: D, forbid: '*.db', mode: audit}\n").policy
        #expect(p.rules.map(\.kind) == [.expire(Expire(after: .hours(24))), .trash(TrashRetention(retain: .days(30))),
                                         .backup(BackupExclusion()), .forbid([try Glob("*.db")])])
    }

    @Test("max-delete takes a count, a percentage (at least 10), or a percentage with its own floor") func maxDelete() throws {
        #expect(try PolicyLoader.load(yaml: Self.header + "max-delete: 500\n").policy.maxDelete == .count(500))
        #expect(try PolicyLoader.load(yaml: Self.header + "max-delete: 10%\n").policy.maxDelete == .percent(10, atLeast: 10))
        #expect(try PolicyLoader.load(yaml: Self.header + "max-delete: { percent: 25%, atLeast: 100 }\n").policy.maxDelete == .percent(25, atLeast: 100))
        #expect(try PolicyLoader.load(yaml: Self.header + "max-delete: { percent: 25% }\n").policy.maxDelete == .percent(25, atLeast: 10))
        #expect(Self.errors(Self.header + "max-delete: lots\n") == ["3:13: invalid max-delete 'lots': expected a count (500), a percentage (10%), or { percent: 10%, atLeast: 100 }"])
        #expect(Self.errors(Self.header + "max-delete: { atLeast: 5 }\n") == ["3:13: 'max-delete': missing 'percent' (e.g. percent: 25%)"])
        #expect(Self.errors(Self.header + "max-delete: { percent: 101%, atLeast: -1 }\n") == ["3:24: 'max-delete': invalid percent '101%' (expected a percentage such as 25%)", "3:39: 'max-delete': 'atLeast': invalid count '-1' (expected a whole number such as 3)"])
    }

    @Test("a percentage cap's floor: the larger of the two, at both ends") func deleteLimitFloor() {
        // The issue's case: one expired file among 2 entries is 50%, over 25%, but within the floor of 10.
        #expect(DeleteLimit.percent(25, atLeast: 10).allowed(outOf: 2) == 10)
        #expect(DeleteLimit.percent(25, atLeast: 100).allowed(outOf: 399) == 100)
        #expect(DeleteLimit.percent(25, atLeast: 100).allowed(outOf: 400) == 100)
        #expect(DeleteLimit.percent(25, atLeast: 100).allowed(outOf: 404) == 101)
        #expect(DeleteLimit.percent(25, atLeast: 10).allowed(outOf: 1000) == 250)
        // `--max-delete 10%` on the command line keeps no floor: the operator said exactly what they meant.
        #expect(DeleteLimit(parsing: "10%") == .percent(10, atLeast: 0))
        #expect(DeleteLimit.percent(10, atLeast: 0).allowed(outOf: 2) == 0)
        #expect(DeleteLimit.percent(25, atLeast: 10).description == "25% (at least 10)")
    }

    @Test("hostile input never crashes the loader", arguments: [
        "\u{0}\u{1}\u{2}", "[[[[[[[[[[", "{a: &x [*x]}", "- - - - -", ": : :", "version: 1\nname: x\nrules: [*nope]\n",
        String(repeating: "[", count: 5000), "version: 1\nname: x\n---\nversion: 1\n",
    ])
    func hostile(yaml: String) {
        #expect(!Self.errors(yaml).isEmpty)
    }

    @Test("every reference policy in Policies/ loads without errors or warnings", arguments: [
        "ios-app-sandbox.yaml", "download-manager.yaml", "linux-user-cache.yaml", "ci-layout-audit.yaml",
    ])
    func referencePolicies(file: String) throws {
        let root = String(#filePath).components(separatedBy: "/Tests/")[0]
        let loaded = try PolicyLoader.load(contentsOf: root + "/Policies/" + file)
        #expect(loaded.warnings.isEmpty)
        #expect(!loaded.policy.rules.isEmpty)
    }
}
