import Foundation
import Testing
import TreeFixture
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyModel

@Suite("extends: policies that build on each other") struct PolicyInheritanceTests {
    /// A fresh folder with `files` written into it; removed by the caller's defer.
    static func folder(_ files: [String: String]) throws -> String {
        let dir = TestScratch.path("extends")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        for (name, text) in files {
            let path = dir + "/" + name
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent,
                                                    withIntermediateDirectories: true)
            try text.write(toFile: path, atomically: false, encoding: .utf8)
        }
        return dir
    }

    static func errors(_ path: String) -> [String] {
        do {
            _ = try PolicyLoader.load(contentsOf: path)
            return []
        } catch {
            return error.diagnostics.filter { $0.severity == .error }.map { $0.description }
        }
    }

    @Test("inherited rules come first in order; same name replaces in place; enabled: false drops; max-delete overrides")
    func merge() throws {
        let dir = try Self.folder([
            "team.yaml": """
            version: 1
            name: team
            max-delete: 40
            layout:
              - path: Logs
            rules:
              - name: logs
                path: Logs
                expire: 30d
              - name: tmp-expiry
                path: tmp
                expire: 1h
            """,
            "app/policy.yaml": """
            version: 1
            name: my-app
            extends: [ios-app-sandbox, ../team.yaml]
            max-delete: { percent: 10%, atLeast: 100 }
            rules:
              - name: tmp-expiry
                path: tmp
                expire: { after: 48h }
              - name: export-staging
                enabled: false
              - name: mine
                path: Documents/Mine
                expire: 1d
            """,
        ])
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let policy = try PolicyLoader.load(contentsOf: dir + "/app/policy.yaml").policy
        #expect(policy.name == "my-app")
        #expect(policy.rules.map(\.name) == ["tmp-expiry", "download-residue", "trash-retention", "thumbnail-quota",
                                             "stale-partial-downloads", "lowercase-names", "no-private-data-in-user-files",
                                             "logs", "mine"])
        #expect(policy.rules[0].kind == .expire(Expire(after: .hours(48))))
        #expect(policy.rules[0].location?.file == dir + "/app/policy.yaml")
        #expect(policy.rules[1].location?.file == "bundled:ios-app-sandbox")
        #expect(policy.rules[7].location?.file == dir + "/app/../team.yaml")
        #expect(policy.maxDelete == .percent(10, atLeast: 100))
        #expect(policy.layout.last?.path == RelativePath("Logs"))
        #expect(policy.inherited.map(\.name) == ["bundled:ios-app-sandbox", dir + "/app/../team.yaml"])
    }

    @Test("without its own max-delete a policy inherits the last one written")
    func inheritedMaxDelete() throws {
        let dir = try Self.folder(["p.yaml": "version: 1\nname: p\nextends: ios-app-sandbox\n"])
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(try PolicyLoader.load(contentsOf: dir + "/p.yaml").policy.maxDelete == .percent(25, atLeast: 10))
    }

    @Test("a cycle, an unknown name and a missing file are errors at the extends entry")
    func errorsAtTheLine() throws {
        let dir = try Self.folder([
            "a.yaml": "version: 1\nname: a\nextends: [./b.yaml]\n",
            "b.yaml": "version: 1\nname: b\nextends:\n  - ./a.yaml\n",
            "c.yaml": "version: 1\nname: c\nextends: [ios-app-sandbx, ./gone.yaml]\n",
        ])
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let cycle = Self.errors(dir + "/a.yaml")
        #expect(cycle.count == 1)
        #expect(cycle.first?.hasPrefix(dir + "/./b.yaml:4:5: error: extends './a.yaml': extends cycle: ") == true)
        let c = Self.errors(dir + "/c.yaml")
        #expect(c.count == 2)
        #expect(c.first?.hasPrefix(dir + "/c.yaml:3:11: error: extends 'ios-app-sandbx': no bundled policy has this name (did you mean 'ios-app-sandbox'?") == true)
        #expect(c.last == dir + "/c.yaml:3:27: error: extends './gone.yaml': cannot read '\(dir)/./gone.yaml': No such file or directory (ENOENT)")
    }

    @Test("an error inside an inherited file is located in that file")
    func errorInParent() throws {
        let dir = try Self.folder([
            "base.yaml": "version: 1\nname: base\nrules:\n  - name: x\n    path: tmp\n    expire: { afterr: 1d }\n",
            "p.yaml": "version: 1\nname: p\nextends: [base.yaml]\n",
        ])
        defer { try? FileManager.default.removeItem(atPath: dir) }
        do {
            _ = try PolicyLoader.load(contentsOf: dir + "/p.yaml")
            Issue.record("expected an error")
        } catch {
            let e = error.diagnostics.filter { $0.severity == .error }
            #expect(e.map(\.location?.file) == [dir + "/base.yaml"])
            #expect(e.first?.location?.line == 6)
            #expect(error.diagnostics.contains { $0.severity == .note && $0.location == PolicyLocation(file: dir + "/p.yaml", line: 3, column: 11) })
        }
    }

    @Test("enabled: false naming no inherited rule is an error; a chain deeper than the limit is refused")
    func disabledAndDepth() throws {
        var files = ["p.yaml": "version: 1\nname: p\nrules:\n  - name: ghost\n    enabled: false\n"]
        for i in 0...9 { files["d\(i).yaml"] = "version: 1\nname: d\(i)\nextends: [d\(i + 1).yaml]\n" }
        files["d10.yaml"] = "version: 1\nname: d10\n"
        let dir = try Self.folder(files)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(Self.errors(dir + "/p.yaml") == [dir + "/p.yaml:4:5: error: rule 'ghost': 'enabled: false' drops an inherited rule, but no policy this one extends has a rule named 'ghost'"])
        let deep = Self.errors(dir + "/d0.yaml")
        #expect(deep.count == 1)
        #expect(deep.first?.hasSuffix("error: extends 'd8.yaml': the extends chain is more than 8 policies deep") == true)
        #expect(Self.errors(dir + "/d3.yaml") == [])
    }

    @Test("the fingerprint covers every file in the chain: changing a parent changes it")
    func fingerprintCoversChain() throws {
        let dir = try Self.folder([
            "base.yaml": "version: 1\nname: base\nrules:\n  - name: x\n    path: tmp\n    expire: 1d\n",
            "p.yaml": "version: 1\nname: p\nextends: [base.yaml]\n",
        ])
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let own = Array("version: 1\nname: p\nextends: [base.yaml]\n".utf8)
        let before = SHA256.hex(PolicyLoader.fingerprintBytes(own, file: dir + "/p.yaml"))
        #expect(before == SHA256.hex(try PolicyLoader.load(contentsOf: dir + "/p.yaml").policy.fingerprintBytes!))
        #expect(before != SHA256.hex(own))
        try "version: 1\nname: base\nrules:\n  - name: x\n    path: tmp\n    expire: 2d\n".write(toFile: dir + "/base.yaml", atomically: false, encoding: .utf8)
        #expect(SHA256.hex(PolicyLoader.fingerprintBytes(own, file: dir + "/p.yaml")) != before)
        // A policy without extends is fingerprinted by its bytes alone, as before.
        let plain = Array("version: 1\nname: q\n".utf8)
        #expect(PolicyLoader.fingerprintBytes(plain, file: "<policy>") == plain)
    }

    @Test("the effective policy is YAML that loads back to the same rules, each commented with its file")
    func effectiveRoundTrip() throws {
        let dir = try Self.folder(["p.yaml": "version: 1\nname: p\nextends: [ios-app-sandbox]\nrules:\n  - name: mine\n    path: tmp\n    match: [\"we\\\"ird*\"]\n    expire: { after: 1d12h, by: newest }\n"])
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let policy = try PolicyLoader.load(contentsOf: dir + "/p.yaml").policy
        let text = EffectivePolicyWriter.yaml(policy)
        #expect(text.contains("  # from bundled:ios-app-sandbox:31\n  - name: \"tmp-expiry\"\n"))
        let again = try PolicyLoader.load(yaml: text, file: "effective.yaml").policy
        #expect(again.rules.map(\.name) == policy.rules.map(\.name))
        #expect(again.rules.map(\.kind) == policy.rules.map(\.kind))
        #expect(again.rules.map(\.path) == policy.rules.map(\.path))
        #expect(again.rules.map(\.match) == policy.rules.map(\.match))
        #expect(again.layout.map(\.path) == policy.layout.map(\.path))
        #expect(again.maxDelete == policy.maxDelete)
    }
}
