import Testing
@testable import StoragePolicy
@testable import StoragePolicyModel

@Suite("YAML first-mistake hints") struct YAMLHintTests {
    @Test("an unquoted value starting with an indicator gets its line back quoted", arguments: [
        ("    match: *.tmp", "quote the glob: match: \"*.tmp\""),
        ("      - **/*.db   # comment", "quote the glob: - \"**/*.db\""),
        ("  - path: &x", "quote the value: - path: \"&x\""),
        ("    forbid: *\"odd\\", "quote the glob: forbid: \"*\\\"odd\\\\\""),
    ])
    func quoted(line: String, fix: String) {
        #expect(YAMLHint.quoteFix(line) == fix)
    }

    @Test("lines without that mistake get no quote fix", arguments: ["    match: \"*.tmp\"", "    match: '*.tmp'", "name: app", "*alias", ""])
    func none(line: String) {
        #expect(YAMLHint.quoteFix(line) == nil)
    }

    @Test("the loader puts the fix first and keeps the parser's words; tabs still get their hint")
    func loader() throws {
        #expect(throws: PolicyLoadError.self) { try PolicyLoader.load(yaml: "version: 1\nname: p\nrules:\n  - {name: t, path: tmp, expire: {after: 1h}, match: *.tmp}\n") }
        do {
            _ = try PolicyLoader.load(yaml: "version: 1\nname: p\nrules:\n  - name: t\n    path: tmp\n    match: *.tmp\n")
            Issue.record("expected an error")
        } catch {
            let message = error.diagnostics.first?.message ?? ""
            #expect(message.hasPrefix("invalid YAML: quote the glob: match: \"*.tmp\" (the parser said: "), "\(message)")
        }
        do {
            _ = try PolicyLoader.load(yaml: "version: 1\nname: p\n\trules: []\n")
            Issue.record("expected an error")
        } catch {
            #expect(error.diagnostics.first?.message.hasSuffix("; YAML indents with spaces, never tabs") == true, "\(error)")
        }
    }
}
