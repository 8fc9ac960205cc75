// Docs/policy.schema.json against the policy loader: both accept every reference policy and every valid
// form, both reject every invalid case, and each known difference is listed here. Never edits the schema.
import Foundation
import Testing
@testable import StoragePolicy
@testable import StoragePolicyModel
@testable import StoragePolicyPlan

/// The schema, the reference policies and a policy's JSON view, located from this file's path.
enum SchemaFixture {
    /// The package root: this file is Tests/StoragePolicyTests/Schema/SchemaTests.swift.
    static let packageRoot: String = {
        var parts = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(4)
        return parts.joined(separator: "/")
    }()

    static let schemaPath = packageRoot + "/Docs/policy.schema.json"
    static let policiesDirectory = packageRoot + "/Policies"

    /// The `.yaml` files in Policies/, sorted.
    static let policyFiles: [String] = {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: policiesDirectory)) ?? []
        return names.filter { $0.hasSuffix(".yaml") }.sorted()
    }()

    static func read(_ path: String) throws -> String {
        try String(contentsOfFile: path, encoding: .utf8)
    }

    static func schema() throws -> JSONValue { try JSONValue(json: read(schemaPath)) }
    static func validator() throws -> SchemaValidator { try SchemaValidator(schema: schema()) }

    /// The schema's violations for a YAML policy, read as an editor's YAML language server reads it.
    static func violations(_ yaml: String) throws -> [SchemaValidator.Violation] {
        try validator().validate(JSONValue(yaml: yaml))
    }

    /// The loader's error diagnostics for a policy; empty when it loads (warnings are not errors).
    static func loaderErrors(_ yaml: String) -> [Diagnostic] {
        do {
            _ = try PolicyLoader.load(yaml: yaml, file: "policy.yaml")
            return []
        } catch {
            return error.diagnostics.filter { $0.severity == .error }
        }
    }

    /// A policy with a header and the given body lines (already indented as they sit in the file).
    static func policy(_ body: String) -> String { "version: 1\nname: p\n" + body + "\n" }

    /// A policy holding one rule whose extra keys (after name and path) are `keys`.
    static func rule(_ keys: String, path: String = "tmp") -> String {
        policy("rules:\n  - name: r\n    path: \(path)\n" + keys.split(separator: "\n").map { "    " + $0 }.joined(separator: "\n"))
    }
}

/// A policy both the schema and the loader must refuse, with where and why each does.
struct InvalidPolicy: Sendable, CustomTestStringConvertible {
    var name: String
    var yaml: String
    /// The JSON pointer of a schema violation the case must produce (the case is rejected for this reason).
    var pointer: String
    /// Text one of the loader's error messages must contain.
    var loaderMessage: String
    /// Set while a decoder bug makes the loader accept this case: the loader check is a known issue.
    var loaderBug: String? = nil
    var testDescription: String { name }
}

/// A policy both the schema and the loader must accept.
struct ValidPolicy: Sendable, CustomTestStringConvertible {
    var name: String
    var yaml: String
    var testDescription: String { name }
}

@Suite("Policy schema") struct SchemaTests {
    typealias F = SchemaFixture

    // MARK: The schema itself

    @Test("is valid JSON, declares draft-07 and uses only keywords the validator checks") func wellFormed() throws {
        let schema = try F.schema()
        #expect(schema["$schema"] == .string(SchemaValidator.draft07))
        #expect(schema["type"] == .string("object"))
        #expect(throws: Never.self) { try SchemaValidator(schema: schema) }
    }

    @Test("every property has a description and every object is closed") func describedAndClosed() throws {
        var undescribed: [String] = [], open: [String] = []
        func walk(_ node: JSONValue, _ path: String) {
            switch node {
            case .object(let members):
                if members["properties"] != nil, members["additionalProperties"] != .bool(false) { open.append(path) }
                for (property, schema) in members["properties"]?.object ?? [:] {
                    if (schema["description"]?.string ?? "").isEmpty { undescribed.append(path + "/properties/" + property) }
                }
                for (name, schema) in members["definitions"]?.object ?? [:] {
                    if (schema["description"]?.string ?? "").isEmpty { undescribed.append(path + "/definitions/" + name) }
                }
                for (key, child) in members where key != "enum" && key != "const" && key != "examples" && key != "default" {
                    walk(child, path + "/" + key)
                }
            case .array(let items):
                for (i, item) in items.enumerated() { walk(item, path + "/\(i)") }
            default:
                break
            }
        }
        walk(try F.schema(), "")
        #expect(undescribed == [])
        #expect(open == [])
    }

    @Test("names exactly the keys the decoder reads") func keysMatchDecoder() throws {
        let schema = try F.schema()
        func keys(_ node: JSONValue?) -> Set<String> { Set(node?["properties"]?.object.map { Array($0.keys) } ?? []) }
        let definitions = schema["definitions"]
        let layoutObject = definitions?["layoutEntry"]?["anyOf"]?.array?.first { $0["type"] == .string("object") }
        #expect(keys(schema) == Set(PolicyDecoder.topLevelKeys))
        #expect(keys(definitions?["rule"]) == Set(PolicyDecoder.ruleKeys))
        #expect(keys(layoutObject) == Set(PolicyDecoder.layoutKeys))
        #expect(schema["required"] == .array([.string("version"), .string("name")]))
        let kinds = definitions?["rule"]?["oneOf"]?.array?.compactMap { $0["required"]?.array?.first?.string }
        // The last alternative is a rule that only drops an inherited one (`enabled: false`, no kind).
        #expect(kinds == PolicyDecoder.kindKeys + ["enabled"])
    }

    @Test("enumerates exactly the model's values") func enumsMatchModel() throws {
        let d = try F.schema()["definitions"]
        func values(_ node: JSONValue?) -> [String] { node?["enum"]?.array?.compactMap(\.string) ?? [] }
        func object(_ name: String) -> JSONValue? {
            let node = d?[name]
            return node?["type"] == .string("object") ? node : node?["anyOf"]?.array?.first { $0["type"] == .string("object") }
        }
        let rule = d?["rule"]?["properties"]
        #expect(values(rule?["type"]) == EntryTypeFilter.allCases.map(\.rawValue))
        #expect(values(rule?["mode"]) == Rule.Mode.allCases.map(\.rawValue))
        #expect(values(rule?["severity"]) == Rule.Severity.allCases.map(\.rawValue))
        // `by` is one timestamp, or a list of them without `newest` (which is already all of them).
        let by = object("expire")?["properties"]?["by"]?["anyOf"]?.array
        #expect(values(by?.first) == Expire.Timestamp.allCases.map(\.rawValue))
        #expect(values(by?.last?["items"]) == Expire.Timestamp.allCases.filter { $0 != .newest }.map(\.rawValue))
        #expect(values(object("trash")?["properties"]?["layout"]) == TrashRetention.Layout.allCases.map(\.rawValue))
        #expect(values(object("quota")?["properties"]?["evict"]) == Quota.Eviction.allCases.map(\.rawValue))
        #expect(values(object("naming")?["properties"]?["case"]) == Naming.LetterCase.allCases.map(\.rawValue))
        #expect(values(object("layoutEntry")?["properties"]?["backup"]) == ["exclude", "include"])
    }

    // MARK: Reference policies

    @Test("Policies/ holds the five reference policies, each pointing editors at the schema") func referencePolicies() throws {
        #expect(F.policyFiles == ["ci-layout-audit.yaml", "download-manager.yaml", "ios-app-sandbox.yaml", "ios-photo-app.yaml", "linux-user-cache.yaml"])
        for file in F.policyFiles {
            let firstLine = try F.read(F.policiesDirectory + "/" + file).split(separator: "\n").first.map(String.init)
            #expect(firstLine == "# yaml-language-server: $schema=../Docs/policy.schema.json", "\(file)")
        }
        #expect(FileManager.default.fileExists(atPath: F.policiesDirectory + "/../Docs/policy.schema.json"))
    }

    @Test("accepts every reference policy, as the loader does", arguments: SchemaFixture.policyFiles)
    func acceptsReferencePolicy(file: String) throws {
        let path = F.policiesDirectory + "/" + file
        #expect(try F.violations(F.read(path)).map(\.description) == [])
        #expect(throws: Never.self) { try PolicyLoader.load(contentsOf: path) }
    }

    // MARK: Valid forms

    static let validPolicies: [ValidPolicy] = [
        ValidPolicy(name: "only version and name", yaml: F.policy("")),
        ValidPolicy(name: "empty layout and rules", yaml: F.policy("layout:\nrules: []")),
        ValidPolicy(name: "description and max-delete count", yaml: F.policy("description: Keeps tmp clean.\nmax-delete: 500")),
        ValidPolicy(name: "max-delete zero", yaml: F.policy("max-delete: 0")),
        ValidPolicy(name: "max-delete quoted count", yaml: F.policy("max-delete: \"500\"")),
        ValidPolicy(name: "max-delete percentages", yaml: F.policy("max-delete: 2.5%")),
        ValidPolicy(name: "max-delete 100%", yaml: F.policy("max-delete: 100%")),
        ValidPolicy(name: "layout: strings and mappings", yaml: F.policy("""
            layout:
              - tmp
              - ./Documents/UserFiles/
              - path: Library/Caches
                backup: exclude
                cacheTag: true
              - path: Library/Keep
                backup: include
                cacheTag: false
            """)),
        ValidPolicy(name: "layout: numeric folder name", yaml: F.policy("layout:\n  - 2024\n  - path: 2025")),
        ValidPolicy(name: "layout: cacheTag spelled True", yaml: F.policy("layout:\n  - path: c\n    backup: exclude\n    cacheTag: True")),
        ValidPolicy(name: "expire shorthand", yaml: F.rule("expire: 24h")),
        ValidPolicy(name: "expire with every by", yaml: F.policy("""
            rules:
              - { name: a, path: a, expire: { after: 90s, by: mtime } }
              - { name: b, path: b, expire: { after: 1d12h, by: atime } }
              - { name: c, path: c, expire: { after: 2w, by: ctime } }
              - { name: d, path: d, expire: { after: 12h1d, by: newest } }
            """)),
        ValidPolicy(name: "expire after 0s (a warning, not an error)", yaml: F.rule("expire: 0s")),
        ValidPolicy(name: "trash shorthand", yaml: F.rule("trash: 30d", path: ".Trash")),
        ValidPolicy(name: "trash with layout", yaml: F.rule("trash: { retain: 30d, layout: freedesktop }", path: ".local/share/Trash")),
        ValidPolicy(name: "quota with every option", yaml: F.rule("quota: { max: 512MiB, target: 90%, evict: lru }")),
        ValidPolicy(name: "quota in bytes", yaml: F.rule("quota: { max: 1048576, target: 1000 }")),
        ValidPolicy(name: "quota sizes with a space and fraction", yaml: F.rule("quota: { max: 512 MiB, target: .5KiB, evict: oldest }")),
        ValidPolicy(name: "quota SI and binary units", yaml: F.rule("quota: { max: 1.5GB, target: 1KiB }")),
        ValidPolicy(name: "quota target a fraction of a percent", yaml: F.rule("quota: { max: 4GiB, target: 0.5% }")),
        ValidPolicy(name: "quota target zero bytes", yaml: F.rule("quota: { max: 4GiB, target: 0B }")),
        ValidPolicy(name: "naming case", yaml: F.rule("naming: { case: lower }")),
        ValidPolicy(name: "naming pattern", yaml: F.rule("naming: { pattern: '^[a-z0-9_]+\\.txt$' }")),
        ValidPolicy(name: "naming case and pattern", yaml: F.rule("naming: { case: lower, pattern: '^[a-z]+$' }")),
        ValidPolicy(name: "backup shorthand", yaml: F.rule("backup: exclude")),
        ValidPolicy(name: "backup mapping", yaml: F.rule("backup: { exclude: true, cacheTag: true }")),
        ValidPolicy(name: "backup empty mapping", yaml: F.rule("backup: {}")),
        ValidPolicy(name: "backup flags as strings", yaml: F.rule("backup: { exclude: \"true\", cacheTag: \"False\" }")),
        ValidPolicy(name: "forbid one pattern", yaml: F.rule("forbid: \"**/*.sqlite\"")),
        ValidPolicy(name: "forbid list", yaml: F.rule("forbid: [\"**/*.sqlite\", \"**/*.sqlite-{wal,shm}\"]\nmode: audit")),
        ValidPolicy(name: "match and exclude, string or list", yaml: F.rule("match: \"**/*.tmp\"\nexclude: [keep/**, \"[!a-z]*\"]\nexpire: 1h")),
        ValidPolicy(name: "match left empty", yaml: F.rule("match:\nexpire: 1h")),
        ValidPolicy(name: "every common key", yaml: F.rule("""
            description: Everything at once.
            match: ["**/*.{jpg,png}", "?[0-9].txt", "dir/"]
            exclude: ["a\\\\*b"]
            type: file
            mode: audit
            severity: note
            forbid: x
            """)),
        ValidPolicy(name: "each type, mode and severity", yaml: F.policy("""
            rules:
              - { name: a, path: a, type: any, mode: enforce, severity: error, expire: 1d }
              - { name: b, path: b, type: directory, severity: warning, expire: 1d }
              - { name: c, path: c, type: symlink, expire: 1d }
            """)),
        ValidPolicy(name: "root scope, dotted scopes", yaml: F.policy("""
            rules:
              - { name: root, path: ., match: "*.core", expire: 7d }
              - { name: dots, path: ./a/./b/, expire: 7d }
              - { name: state-like, path: .policyctl-old, expire: 7d }
              - { name: "2024", path: 2024, expire: 7d }
            """)),
    ]

    @Test("accepts every valid form the loader accepts", arguments: validPolicies)
    func acceptsValid(_ policy: ValidPolicy) throws {
        #expect(try F.violations(policy.yaml).map(\.description) == [])
        #expect(F.loaderErrors(policy.yaml).map(\.description) == [])
    }

    // MARK: Invalid forms

    static let invalidPolicies: [InvalidPolicy] = [
        // Structure
        InvalidPolicy(name: "empty file", yaml: "", pointer: "", loaderMessage: "the policy is empty"),
        InvalidPolicy(name: "not a mapping", yaml: "- version: 1\n", pointer: "", loaderMessage: "expected a mapping, found a list"),
        InvalidPolicy(name: "unknown top-level key", yaml: F.policy("rulez: []"), pointer: "", loaderMessage: "unknown key 'rulez' (did you mean 'rules'?)"),
        InvalidPolicy(name: "missing name", yaml: "version: 1\n", pointer: "", loaderMessage: "missing 'name'"),
        InvalidPolicy(name: "missing version", yaml: "name: p\n", pointer: "", loaderMessage: "missing 'version'"),
        InvalidPolicy(name: "version 2", yaml: "version: 2\nname: p\n", pointer: "/version", loaderMessage: "unsupported policy version '2'"),
        InvalidPolicy(name: "version as text", yaml: "version: one\nname: p\n", pointer: "/version", loaderMessage: "unsupported policy version 'one'"),
        InvalidPolicy(name: "policy name with a space", yaml: "version: 1\nname: app sandbox\n", pointer: "/name", loaderMessage: "policy name 'app sandbox' must be"),
        InvalidPolicy(name: "policy name too long", yaml: "version: 1\nname: " + String(repeating: "a", count: 129) + "\n", pointer: "/name", loaderMessage: "must be letters"),
        InvalidPolicy(name: "description left empty", yaml: F.policy("description:"), pointer: "/description", loaderMessage: "'description': expected a value, found null"),
        InvalidPolicy(name: "rules is a mapping", yaml: F.policy("rules: { a: 1 }"), pointer: "/rules", loaderMessage: "'rules': expected a list, found a mapping"),
        InvalidPolicy(name: "layout is a string", yaml: F.policy("layout: tmp"), pointer: "/layout", loaderMessage: "'layout': expected a list, found a string"),
        // max-delete
        InvalidPolicy(name: "max-delete above 100%", yaml: F.policy("max-delete: 101%"), pointer: "/max-delete", loaderMessage: "invalid max-delete '101%'"),
        InvalidPolicy(name: "max-delete negative", yaml: F.policy("max-delete: -1"), pointer: "/max-delete", loaderMessage: "invalid max-delete '-1'"),
        InvalidPolicy(name: "max-delete in words", yaml: F.policy("max-delete: lots"), pointer: "/max-delete", loaderMessage: "invalid max-delete 'lots'"),
        InvalidPolicy(name: "max-delete a fraction", yaml: F.policy("max-delete: 2.5"), pointer: "/max-delete", loaderMessage: "invalid max-delete '2.5'"),
        // Layout
        InvalidPolicy(name: "layout: unknown key", yaml: F.policy("layout:\n  - path: a\n    backups: exclude"), pointer: "/layout/0", loaderMessage: "unknown key 'backups' (did you mean 'backup'?)"),
        InvalidPolicy(name: "layout: missing path", yaml: F.policy("layout:\n  - backup: exclude"), pointer: "/layout/0", loaderMessage: "layout entry: missing 'path'"),
        InvalidPolicy(name: "layout: bad backup value", yaml: F.policy("layout:\n  - path: a\n    backup: never"), pointer: "/layout/0", loaderMessage: "invalid backup 'never'"),
        InvalidPolicy(name: "layout: cacheTag not a boolean", yaml: F.policy("layout:\n  - path: a\n    cacheTag: on"), pointer: "/layout/0", loaderMessage: "'cacheTag': expected true or false, found 'on'"),
        InvalidPolicy(name: "layout: the root itself", yaml: F.policy("layout:\n  - path: ."), pointer: "/layout/0", loaderMessage: "path must name a directory below the root"),
        InvalidPolicy(name: "layout: the root itself, short form", yaml: F.policy("layout:\n  - ."), pointer: "/layout/0", loaderMessage: "path must name a directory below the root"),
        InvalidPolicy(name: "layout: absolute", yaml: F.policy("layout:\n  - /var/cache"), pointer: "/layout/0", loaderMessage: "is absolute"),
        InvalidPolicy(name: "layout: escapes the root", yaml: F.policy("layout:\n  - path: a/../../b"), pointer: "/layout/0", loaderMessage: "could reach outside the root"),
        InvalidPolicy(name: "layout: empty entry", yaml: F.policy("layout:\n  -"), pointer: "/layout/0", loaderMessage: "a layout entry: expected a mapping, found null"),
        // Rule structure
        InvalidPolicy(name: "rule is not a mapping", yaml: F.policy("rules:\n  - tmp"), pointer: "/rules/0", loaderMessage: "a rule: expected a mapping, found a string"),
        InvalidPolicy(name: "unknown rule key", yaml: F.rule("matches: [\"*.tmp\"]\nexpire: 1d"), pointer: "/rules/0", loaderMessage: "rule 'r': unknown key 'matches' (did you mean 'match'?)"),
        InvalidPolicy(name: "rule missing name", yaml: F.policy("rules:\n  - path: tmp\n    expire: 1d"), pointer: "/rules/0", loaderMessage: "rule: missing 'name'"),
        InvalidPolicy(name: "rule missing path", yaml: F.policy("rules:\n  - name: r\n    expire: 1d"), pointer: "/rules/0", loaderMessage: "rule 'r': missing 'path'"),
        InvalidPolicy(name: "rule without a kind", yaml: F.rule("mode: audit"), pointer: "/rules/0", loaderMessage: "rule 'r': no rule kind"),
        InvalidPolicy(name: "two kinds in one rule", yaml: F.rule("expire: 1d\ntrash: 30d"), pointer: "/rules/0", loaderMessage: "this one has 'expire' and 'trash'"),
        InvalidPolicy(name: "three kinds in one rule", yaml: F.rule("expire: 1d\nbackup: exclude\nforbid: x"), pointer: "/rules/0", loaderMessage: "split it into 3 rules"),
        InvalidPolicy(name: "rule name with a slash", yaml: F.policy("rules:\n  - name: tmp/expiry\n    path: tmp\n    expire: 1d"), pointer: "/rules/0/name", loaderMessage: "rule name 'tmp/expiry' must be"),
        // Scopes
        InvalidPolicy(name: "absolute scope", yaml: F.rule("expire: 1d", path: "/var/tmp"), pointer: "/rules/0/path", loaderMessage: "path '/var/tmp' is absolute"),
        InvalidPolicy(name: "home-relative scope", yaml: F.rule("expire: 1d", path: "~/tmp"), pointer: "/rules/0/path", loaderMessage: "path '~/tmp' is absolute"),
        InvalidPolicy(name: "scope starting with ..", yaml: F.rule("expire: 1d", path: "../tmp"), pointer: "/rules/0/path", loaderMessage: "could reach outside the root ('..' is not allowed)"),
        InvalidPolicy(name: "scope with .. inside", yaml: F.rule("expire: 1d", path: "a/b/../../.."), pointer: "/rules/0/path", loaderMessage: "could reach outside the root"),
        InvalidPolicy(name: "scope inside .policyctl", yaml: F.rule("expire: 1d", path: "./.policyctl/journal"), pointer: "/rules/0/path", loaderMessage: "inside policyctl's own state folder"),
        // Enumerations
        InvalidPolicy(name: "bad mode", yaml: F.rule("expire: 1d\nmode: dry-run"), pointer: "/rules/0/mode", loaderMessage: "'mode': invalid value 'dry-run'"),
        InvalidPolicy(name: "bad type", yaml: F.rule("expire: 1d\ntype: dir"), pointer: "/rules/0/type", loaderMessage: "'type': invalid value 'dir'"),
        InvalidPolicy(name: "bad severity", yaml: F.rule("expire: 1d\nseverity: critical"), pointer: "/rules/0/severity", loaderMessage: "'severity': invalid value 'critical'"),
        InvalidPolicy(name: "enum values are case-sensitive", yaml: F.rule("expire: 1d\nmode: Audit"), pointer: "/rules/0/mode", loaderMessage: "invalid value 'Audit' (did you mean 'audit'?"),
        InvalidPolicy(name: "bad expire by", yaml: F.rule("expire: { after: 1d, by: birthtime }"), pointer: "/rules/0/expire", loaderMessage: "'by': invalid value 'birthtime'"),
        InvalidPolicy(name: "bad trash layout", yaml: F.rule("trash: { retain: 1d, layout: macos }"), pointer: "/rules/0/trash", loaderMessage: "'layout': invalid value 'macos'"),
        InvalidPolicy(name: "bad quota evict", yaml: F.rule("quota: { max: 1GiB, evict: newest }"), pointer: "/rules/0/quota/evict", loaderMessage: "'evict': invalid value 'newest'"),
        InvalidPolicy(name: "bad naming case", yaml: F.rule("naming: { case: title }"), pointer: "/rules/0/naming/case", loaderMessage: "'case': invalid value 'title'"),
        // Durations
        InvalidPolicy(name: "duration in words", yaml: F.rule("expire: { after: 24 hours }"), pointer: "/rules/0/expire", loaderMessage: "invalid duration '24 hours' (expected a number followed by a unit"),
        InvalidPolicy(name: "duration shorthand in words", yaml: F.rule("trash: 30 days"), pointer: "/rules/0/trash", loaderMessage: "invalid duration '30 days'"),
        InvalidPolicy(name: "duration without a unit", yaml: F.rule("expire: 24"), pointer: "/rules/0/expire", loaderMessage: "invalid duration '24'"),
        InvalidPolicy(name: "duration repeating a unit", yaml: F.rule("expire: 1h30m1h"), pointer: "/rules/0/expire", loaderMessage: "invalid duration '1h30m1h'"),
        InvalidPolicy(name: "duration with a fraction", yaml: F.rule("expire: 1.5h"), pointer: "/rules/0/expire", loaderMessage: "invalid duration '1.5h'"),
        InvalidPolicy(name: "duration with an unknown unit", yaml: F.rule("expire: 1y"), pointer: "/rules/0/expire", loaderMessage: "invalid duration '1y'"),
        InvalidPolicy(name: "misspelled after", yaml: F.rule("expire: { afer: 24h }"), pointer: "/rules/0/expire", loaderMessage: "unknown key 'afer' (did you mean 'after'?)"),
        InvalidPolicy(name: "expire left empty", yaml: F.rule("expire:"), pointer: "/rules/0/expire", loaderMessage: "'expire': expected a mapping, found null"),
        InvalidPolicy(name: "trash without retain", yaml: F.rule("trash: { layout: app }"), pointer: "/rules/0/trash", loaderMessage: "missing 'retain'"),
        // Sizes and targets
        InvalidPolicy(name: "size in words", yaml: F.rule("quota: { max: 12 parsecs }"), pointer: "/rules/0/quota/max", loaderMessage: "invalid size '12 parsecs' (expected a number with a unit"),
        InvalidPolicy(name: "size zero", yaml: F.rule("quota: { max: 0MiB }"), pointer: "/rules/0/quota/max", loaderMessage: "must be above zero, but '0MiB' is 0 bytes"),
        InvalidPolicy(name: "size a fraction of a byte", yaml: F.rule("quota: { max: 1.5 }"), pointer: "/rules/0/quota/max", loaderMessage: "invalid size '1.5'"),
        InvalidPolicy(name: "size with lowercase unit", yaml: F.rule("quota: { max: 5mb }"), pointer: "/rules/0/quota/max", loaderMessage: "invalid size '5mb'"),
        InvalidPolicy(name: "size negative", yaml: F.rule("quota: { max: -1GiB }"), pointer: "/rules/0/quota/max", loaderMessage: "invalid size '-1GiB'"),
        InvalidPolicy(name: "target 0%", yaml: F.rule("quota: { max: 1GiB, target: 0% }"), pointer: "/rules/0/quota/target", loaderMessage: "invalid target '0%'"),
        InvalidPolicy(name: "target above 100%", yaml: F.rule("quota: { max: 1GiB, target: 150% }"), pointer: "/rules/0/quota/target", loaderMessage: "invalid target '150%'"),
        InvalidPolicy(name: "quota without max", yaml: F.rule("quota: { target: 90% }"), pointer: "/rules/0/quota", loaderMessage: "missing 'max'"),
        InvalidPolicy(name: "quota shorthand", yaml: F.rule("quota: 1GiB"), pointer: "/rules/0/quota", loaderMessage: "'quota': expected a mapping, found a string"),
        // Naming, backup, forbid
        InvalidPolicy(name: "naming with nothing", yaml: F.rule("naming: {}"), pointer: "/rules/0/naming", loaderMessage: "give 'case: lower', a 'pattern', or both"),
        InvalidPolicy(name: "naming shorthand", yaml: F.rule("naming: lower"), pointer: "/rules/0/naming", loaderMessage: "'naming': expected a mapping, found a string"),
        InvalidPolicy(name: "backup include on a rule", yaml: F.rule("backup: include"), pointer: "/rules/0/backup", loaderMessage: "'backup': invalid value 'include'"),
        InvalidPolicy(name: "backup exclude false", yaml: F.rule("backup: { exclude: false }"), pointer: "/rules/0/backup", loaderMessage: "'exclude: false' makes the rule do nothing"),
        InvalidPolicy(name: "backup unknown key", yaml: F.rule("backup: { cachetag: true }"), pointer: "/rules/0/backup", loaderMessage: "unknown key 'cachetag' (did you mean 'cacheTag'?)"),
        InvalidPolicy(name: "forbid empty list", yaml: F.rule("forbid: []"), pointer: "/rules/0/forbid", loaderMessage: "'forbid': list at least one pattern"),
        InvalidPolicy(name: "forbid left empty", yaml: F.rule("forbid:"), pointer: "/rules/0/forbid", loaderMessage: "'forbid': list at least one pattern"),
        // Globs
        InvalidPolicy(name: "absolute glob", yaml: F.rule("match: [\"/etc/*\"]\nexpire: 1d"), pointer: "/rules/0/match", loaderMessage: "pattern is absolute"),
        InvalidPolicy(name: "glob leaving the scope", yaml: F.rule("match: [\"../*.tmp\"]\nexpire: 1d"), pointer: "/rules/0/match", loaderMessage: "patterns cannot leave the rule's path"),
        InvalidPolicy(name: "glob with a . component", yaml: F.rule("exclude: \"a/./b\"\nexpire: 1d"), pointer: "/rules/0/exclude", loaderMessage: "'.' component"),
        InvalidPolicy(name: "empty glob", yaml: F.rule("forbid: [\"\"]"), pointer: "/rules/0/forbid", loaderMessage: "empty pattern"),
        InvalidPolicy(name: "glob with //", yaml: F.rule("match: \"a//b\"\nexpire: 1d"), pointer: "/rules/0/match", loaderMessage: "empty path component"),
        InvalidPolicy(name: "glob list holding a list", yaml: F.rule("match: [[\"*.tmp\"]]\nexpire: 1d"), pointer: "/rules/0/match", loaderMessage: "'match': expected a value, found a list"),
    ]

    @Test("rejects invalid policies for the expected reason", arguments: invalidPolicies)
    func rejectsInvalid(_ policy: InvalidPolicy) throws {
        let violations = try F.violations(policy.yaml)
        #expect(violations.contains { $0.instancePath == policy.pointer },
                "expected a violation at '\(policy.pointer)', got \(violations.map(\.description))")
    }

    @Test("the loader rejects every policy the schema rejects", arguments: invalidPolicies)
    func loaderRejectsInvalid(_ policy: InvalidPolicy) {
        let check = {
            let errors = F.loaderErrors(policy.yaml)
            #expect(errors.contains { $0.message.contains(policy.loaderMessage) },
                    "expected an error containing \"\(policy.loaderMessage)\", got \(errors.map(\.description))")
        }
        if let bug = policy.loaderBug { withKnownIssue(Comment(rawValue: bug)) { check() } } else { check() }
    }

    // MARK: The reference document

    @Test("Docs/policy-reference.md: its full examples load, and it documents every key the decoder reads")
    func referenceDocument() throws {
        let text = try F.read(F.packageRoot + "/Docs/policy-reference.md")
        let blocks = text.components(separatedBy: "```yaml\n").dropFirst().map { $0.components(separatedBy: "```")[0] }
        let policies = blocks.filter { $0.contains("version: 1\n") }
        #expect(!policies.isEmpty)
        for yaml in policies {
            #expect(try F.violations(yaml).map(\.description) == [])
            #expect(F.loaderErrors(yaml).map(\.description) == [])
        }
        let keys = PolicyDecoder.topLevelKeys + PolicyDecoder.ruleKeys + PolicyDecoder.layoutKeys
            + ["after", "by", "retain", "layout", "max", "target", "evict", "case", "pattern", "exclude", "cacheTag",
               "percent", "atLeast", "keep", "unit", "minAge", "maxSize"]
        let undocumented = keys.filter { !text.contains("| `\($0)` |") && !text.contains("\n### \($0)\n") }
        #expect(undocumented == [], "keys with neither a table row nor a section")
    }

    // MARK: Where schema and loader differ on purpose

    /// Valid to the schema, rejected by the loader: checks that need more than one value at a time.
    static let loaderOnly: [InvalidPolicy] = [
        InvalidPolicy(name: "duplicate rule names", yaml: F.policy("rules:\n  - { name: r, path: a, expire: 1d }\n  - { name: r, path: b, expire: 1d }"),
                      pointer: "", loaderMessage: "duplicate rule name 'r' (first defined at 4:5)"),
        InvalidPolicy(name: "quota target above max", yaml: F.rule("quota: { max: 1GiB, target: 2GiB }"), pointer: "", loaderMessage: "target 2GiB is above max 1GiB"),
        InvalidPolicy(name: "a match that is also excluded", yaml: F.rule("match: \"*.tmp\"\nexclude: \"*.tmp\"\nexpire: 1d"), pointer: "", loaderMessage: "is also excluded, so it can never match"),
        InvalidPolicy(name: "exclude everything", yaml: F.rule("exclude: \"**\"\nexpire: 1d"), pointer: "", loaderMessage: "exclude '**' removes every entry"),
        InvalidPolicy(name: "a literal glob inside .policyctl", yaml: F.rule("forbid: .policyctl/journal", path: "."), pointer: "", loaderMessage: "is inside '.policyctl', which is never scanned"),
        InvalidPolicy(name: "trash at the root", yaml: F.rule("trash: 30d", path: "."), pointer: "", loaderMessage: "the trash folder cannot be the root itself"),
        InvalidPolicy(name: "unclosed bracket in a glob", yaml: F.rule("match: \"[abc\"\nexpire: 1d"), pointer: "", loaderMessage: "unclosed '['"),
        InvalidPolicy(name: "unclosed brace in a glob", yaml: F.rule("match: \"*.{jpg,png\"\nexpire: 1d"), pointer: "", loaderMessage: "unclosed '{'"),
        InvalidPolicy(name: "backwards range in a glob", yaml: F.rule("match: \"[z-a]\"\nexpire: 1d"), pointer: "", loaderMessage: "is backwards"),
        InvalidPolicy(name: "invalid naming regex", yaml: F.rule("naming: { pattern: '[a-' }"), pointer: "", loaderMessage: "invalid pattern '[a-'"),
        InvalidPolicy(name: "duration that overflows", yaml: F.rule("expire: 99999999999999999999w"), pointer: "", loaderMessage: "invalid duration"),
    ]

    @Test("semantic and syntax-deep errors are the loader's alone", arguments: loaderOnly)
    func loaderOnlyErrors(_ policy: InvalidPolicy) throws {
        #expect(try F.violations(policy.yaml).map(\.description) == [])
        let errors = F.loaderErrors(policy.yaml)
        #expect(errors.contains { $0.message.contains(policy.loaderMessage) }, "got \(errors.map(\.description))")
    }

    @Test("schema and loader both ask for version: 1 as a number, not the text \"1\"")
    func quotedVersion() throws {
        let yaml = "version: \"1\"\nname: p\n"
        #expect(try F.violations(yaml).map(\.instancePath) == ["/version"])
        #expect(F.loaderErrors(yaml).map(\.message) == ["'version' is the number 1, not the text \"1\" (remove the quotes)"])
    }
}
