// Regression cases for the libFuzzer target (Fuzz/run.sh): the seed corpus and every input it ever flagged.
// Each one loads, or fails with diagnostics that all carry file:line:col; none crashes, hangs or balloons.
import Foundation
import Testing
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyModel

@Suite("Policy loader fuzz regressions", .timeLimit(.minutes(10)))
struct FuzzRegressionTests {
    /// The repository, found from this file's path (Tests/StoragePolicyTests/Policy/).
    static let repository: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<4 { url.deleteLastPathComponent() }
        return url.path
    }()

    /// The seed corpus Fuzz/run.sh starts from: the reference policies, the benchmark policy, Fuzz/Corpus.
    static let seeds: [String] = {
        var files: [String] = []
        for folder in ["Policies", "Fuzz/Corpus", "Fuzz/Regressions", "Benchmarks"] {
            let dir = repository + "/" + folder
            let names = (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
            for name in names.sorted() where !name.hasPrefix(".") && (folder.hasPrefix("Fuzz") || name.hasSuffix(".yaml")) {
                files.append(folder + "/" + name)
            }
        }
        return files
    }()

    /// What the fuzz target checks, as a test: a policy, or located diagnostics that render.
    static func expectLoadsOrLocated(_ bytes: [UInt8], _ label: String, sourceLocation: SourceLocation = #_sourceLocation) -> LoadedPolicy? {
        do {
            let loaded = try PolicyLoader.load(bytes: bytes, file: "fuzz.yaml")
            for rule in loaded.policy.rules {
                for glob in rule.match + rule.exclude {
                    _ = glob.matches(RelativePath("a/b.tmp")!)
                    _ = glob.couldMatchBelow(RelativePath("a")!)
                }
            }
            return loaded
        } catch {
            #expect(!error.diagnostics.isEmpty, "\(label): a failure without a diagnostic", sourceLocation: sourceLocation)
            for d in error.diagnostics {
                #expect(d.location != nil, "\(label): unlocated diagnostic '\(d.message)'", sourceLocation: sourceLocation)
                #expect(d.rendered(source: error.source).hasPrefix("fuzz.yaml:"), "\(label)", sourceLocation: sourceLocation)
            }
            return nil
        }
    }

    @Test("the seed corpus is there and every seed loads or fails located")
    func seedCorpus() throws {
        #expect(Self.seeds.filter { $0.hasPrefix("Policies/") }.count >= 4, "\(Self.seeds)")
        for seed in Self.seeds {
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: Self.repository + "/" + seed)))
            let loaded = Self.expectLoadsOrLocated(bytes, seed)
            if seed.hasPrefix("Policies/") { #expect(loaded != nil, "\(seed): a reference policy must load") }
        }
    }

    static func laughs(levels: Int, width: Int) -> String {
        var text = "version: 1\nname: lol\nx0: &a0 [\"lol\"]\n"
        for level in 1...levels {
            text += "x\(level): &a\(level) [" + Array(repeating: "*a\(level - 1)", count: width).joined(separator: ", ") + "]\n"
        }
        return text + "rules: []\n"
    }

    @Test("alias bombs (billion laughs) are refused with a located error, quickly and in bounded memory",
          arguments: [(9, 10), (30, 2), (5, 1000)])
    func aliasBombs(levels: Int, width: Int) {
        let bomb = Self.laughs(levels: levels, width: width)
        let clock = ContinuousClock()
        let started = clock.now
        let loaded = Self.expectLoadsOrLocated(Array(bomb.utf8), "laughs \(levels)x\(width)")
        #expect(loaded == nil, "an expansion of \(width)^\(levels) nodes must be refused")
        #expect(clock.now - started < .seconds(20))
        do {
            _ = try PolicyLoader.load(yaml: bomb, file: "fuzz.yaml")
        } catch {
            #expect(error.diagnostics.contains { $0.message.contains("alias") }, "\(error)")
        }
    }

    /// Inputs found by fuzzing or written to probe the same corners; each must load or fail located.
    static let hostile: [(String, String)] = [
        ("deep flow nesting", String(repeating: "[", count: 5000) + String(repeating: "]", count: 5000)),
        ("deep block nesting", (0..<600).map { String(repeating: " ", count: $0) + "k\($0):" }.joined(separator: "\n")),
        ("self-referencing alias", "version: 1\nname: &a x\nrules: *a\n"),
        ("alias to an undefined anchor", "version: 1\nname: *nope\n"),
        ("merge key of an alias", "a: &a {b: 1}\nversion: 1\nname: m\n<<: *a\nrules: []\n"),
        ("tag on everything", "!!map {version: !!int 1, name: !!str x, rules: !!seq []}\n"),
        ("unknown tag", "version: !custom 1\nname: x\nrules: []\n"),
        ("huge integer", "version: 99999999999999999999999999999999\nname: x\nrules: []\n"),
        ("huge duration", "version: 1\nname: x\nrules:\n  - name: r\n    path: tmp\n    expire: { after: 99999999999999999999w }\n"),
        ("duration overflow by sum", "version: 1\nname: x\nrules:\n  - name: r\n    path: tmp\n    expire: { after: 9223372036854775807s1w }\n"),
        ("huge size", "version: 1\nname: x\nrules:\n  - name: r\n    path: tmp\n    quota: { max: 99999999999999999TiB }\n"),
        ("negative percent", "version: 1\nname: x\nrules:\n  - name: r\n    path: tmp\n    quota: { max: 1MiB, target: -5% }\n"),
        ("NaN percent", "version: 1\nname: x\nrules:\n  - name: r\n    path: tmp\n    quota: { max: 1MiB, target: .nan% }\n"),
        ("glob of braces", "version: 1\nname: x\nrules:\n  - name: r\n    path: tmp\n    match: ['" + String(repeating: "{a,", count: 200) + String(repeating: "}", count: 200) + "']\n    expire: { after: 1h }\n"),
        ("glob of stars", "version: 1\nname: x\nrules:\n  - name: r\n    path: tmp\n    match: ['" + String(repeating: "**/*", count: 300) + "']\n    expire: { after: 1h }\n"),
        ("unclosed class", "version: 1\nname: x\nrules:\n  - name: r\n    path: tmp\n    match: ['[a-']\n    expire: { after: 1h }\n"),
        ("path escaping the root", "version: 1\nname: x\nrules:\n  - name: r\n    path: a/../../etc\n    expire: { after: 1h }\n"),
        ("absolute path", "version: 1\nname: x\nrules:\n  - name: r\n    path: /etc\n    expire: { after: 1h }\n"),
        ("NUL in a path", "version: 1\nname: x\nrules:\n  - name: r\n    path: \"a\\0b\"\n    expire: { after: 1h }\n"),
        ("invalid pattern regex", "version: 1\nname: x\nrules:\n  - name: r\n    path: tmp\n    naming: { pattern: '(((' }\n"),
        ("documents after the first", "version: 1\nname: x\nrules: []\n---\nversion: 2\n"),
        ("empty document", ""),
        ("only a comment", "# nothing\n"),
        ("a scalar", "hello"),
        ("duplicate keys", "version: 1\nversion: 1\nname: x\nrules: []\n"),
        ("non-scalar key", "? [a, b]\n: 1\nversion: 1\nname: x\nrules: []\n"),
        ("long line", "version: 1\nname: " + String(repeating: "x", count: 200_000) + "\nrules: []\n"),
        ("many rules", "version: 1\nname: x\nrules:\n" + (0..<3000).map { "  - {name: r\($0), path: t\($0), expire: {after: 1h}}\n" }.joined()),
    ]

    @Test("hostile inputs load or fail located", arguments: hostile.map(\.0))
    func hostileInput(name: String) {
        let text = Self.hostile.first { $0.0 == name }!.1
        _ = Self.expectLoadsOrLocated(Array(text.utf8), name)
    }

    @Test("paths that would leave the root are refused at load time, with a location")
    func escapingPaths() {
        for name in ["path escaping the root", "absolute path"] {
            let text = Self.hostile.first { $0.0 == name }!.1
            #expect(Self.expectLoadsOrLocated(Array(text.utf8), name) == nil, "\(name) must be refused")
        }
    }
}
