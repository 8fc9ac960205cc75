// `apply --metrics-file`: the built binary writes the node_exporter textfile format after each run, atomically
// (no temporary file left beside it). Checked against the exposition format's grammar line by line (HELP, TYPE,
// then samples of that family: name{label="value",...} number), and for the numbers this run must give.
import TreeFixture
import Foundation
import Testing

@Suite("apply --metrics-file (binary)")
struct MetricsFileTests {
    /// Problems with `text` as Prometheus text exposition 0.0.4 (empty when it is well formed).
    static func grammarProblems(_ text: String) -> [String] {
        let name = #"[a-zA-Z_:][a-zA-Z0-9_:]*"#
        let label = #"[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\\\|\\"|\\n)*""#
        let number = #"(?:[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?Inf|NaN)"#
        let sample = try! NSRegularExpression(pattern: "^(\(name))(?:\\{(?:\(label))(?:,\(label))*\\})? \(number)(?: -?[0-9]+)?$")
        let help = try! NSRegularExpression(pattern: "^# HELP (\(name)) .*$")
        let type = try! NSRegularExpression(pattern: "^# TYPE (\(name)) (counter|gauge|histogram|summary|untyped)$")
        func first(_ r: NSRegularExpression, _ s: String) -> String? {
            guard let m = r.firstMatch(in: s, range: NSRange(s.startIndex..., in: s)), let g = Range(m.range(at: 1), in: s) else { return nil }
            return String(s[g])
        }
        var problems: [String] = []
        var family: String? = nil
        var typed = Set<String>()
        guard text.hasSuffix("\n") else { return ["no final newline"] }
        for line in text.dropLast().split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if let n = first(help, line) { family = n; continue }
            if let n = first(type, line) {
                if n != family || !typed.insert(n).inserted { problems.append("TYPE out of place: \(line)") }
                continue
            }
            guard let n = first(sample, line) else { problems.append("not a sample: \(line)"); continue }
            if n != family || !typed.contains(n) { problems.append("sample outside its family: \(line)") }
        }
        return problems
    }

    @Test("the grammar check refuses what the format does not allow (so the test below can fail)")
    func grammarRefuses() {
        #expect(Self.grammarProblems("# HELP a b\n# TYPE a gauge\na{x=\"1\"} 2\n") == [])
        #expect(!Self.grammarProblems("# HELP a b\n# TYPE a gauge\na{x=1} 2\n").isEmpty)
        #expect(!Self.grammarProblems("# HELP a b\n# TYPE a gauge\nb 2\n").isEmpty)
        #expect(!Self.grammarProblems("# HELP a b\n# TYPE a gauge\na two\n").isEmpty)
        #expect(!Self.grammarProblems("# HELP a b\n# TYPE a gauge\na 2").isEmpty)
    }

    @Test("after an apply the file holds the run's exit code, time and bytes freed per rule, written atomically")
    func written() throws {
        let scratch = ScratchDirectory("metrics")
        chmod(scratch.path, 0o755)
        let root = scratch.sub("root")
        try buildTree(at: root, [.dir("cache"), .file("cache/a", size: 20_000, ageHours: 48), .file("cache/b", size: 20_000, ageHours: 24)])
        var s = stat()
        lstat(root + "/cache/a", &s)
        let a = Int64(s.st_blocks) * 512
        let policy = scratch.path + "/p.yaml"
        try writePolicy(policy, "version: 1\nname: m\nrules:\n  - name: cache-q\n    path: cache\n    quota: { max: \(a)B }\n")
        let metrics = scratch.sub("textfile") + "/policyctl.prom"
        let before = Int64(Date().timeIntervalSince1970)
        let r = try policyctl(["apply", "--policy", policy, "--root", root, "--yes", "--metrics-file", metrics])
        #expect(r.status == 0, "\(r)")
        let text = try String(contentsOfFile: metrics, encoding: .utf8)
        #expect(Self.grammarProblems(text) == [], "\(text)")
        let labels = "policy=\"\(policy)\",root=\"\(root)\""
        #expect(text.contains("policyctl_last_apply_exit_code{\(labels)} 0\n"), "\(text)")
        #expect(text.contains("policyctl_last_apply_bytes_freed{\(labels),rule=\"cache-q\"} \(a)\n"), "\(text)")
        #expect(text.contains("policyctl_last_apply_actions{\(labels),rule=\"cache-q\"} 1\n"), "\(text)")
        let stamp = text.split(separator: "\n").first { $0.hasPrefix("policyctl_last_apply_timestamp_seconds{") }
        let seconds = stamp.flatMap { Double($0.split(separator: " ").last!) } ?? 0
        #expect(Int64(seconds) >= before && Int64(seconds) <= before + 60, "\(text)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path + "/textfile") == ["policyctl.prom"])
        // A second run with nothing to do replaces the file: exit code 0, no bytes freed.
        let again = try policyctl(["apply", "--policy", policy, "--root", root, "--yes", "--metrics-file", metrics])
        #expect(again.status == 0, "\(again)")
        let second = try String(contentsOfFile: metrics, encoding: .utf8)
        #expect(Self.grammarProblems(second) == [] && !second.contains("rule="), "\(second)")
        // A directory where the file should be is a warning naming the path; the apply still stands.
        let folder = scratch.sub("adir")
        let refused = try policyctl(["apply", "--policy", policy, "--root", root, "--yes", "--metrics-file", folder])
        #expect(refused.status == 0 && refused.stderr.contains("--metrics-file \(folder) was not written: it is not a regular file"), "\(refused)")
    }
}
