// apply's report gives bytes freed per rule and per volume: a line after the summary line (which stays the first)
// in text, `bytesFreedByRule` and `volumes` in the JSON summary event. Nothing freed: no extra line.
import Foundation
import Testing
import StoragePolicy

@Suite("apply: bytes freed per rule and per volume (binary)")
struct ApplyFreedTests {
    static let policy = """
        version: 1
        name: freed
        rules:
          - name: tmp
            path: tmp
            expire: 1d
          - name: logs
            path: logs
            expire: 1d

        """

    static func tree() throws -> (scratch: ScratchDirectory, root: String, policy: String) {
        let scratch = ScratchDirectory("apply-freed")
        let root = scratch.sub("root")
        try buildTree(at: root, [.dir("tmp"), .file("tmp/a", size: 8192), .file("tmp/b", size: 8192),
                                 .dir("logs"), .file("logs/x", size: 4096), .file("logs/new", size: 4096, ageHours: 1)])
        try writePolicy(scratch.path + "/p.yaml", policy)
        return (scratch, root, scratch.path + "/p.yaml")
    }

    @Test("text: the line after the summary (before it in a plain log) names each rule's bytes and the root's volume")
    func text() throws {
        let t = try Self.tree()
        var st = stat()
        #expect(stat(t.root, &st) == 0)
        let device = PlanRenderer.device(UInt64(st.st_dev))
        let r = try policyctl(["apply", "--policy", t.policy, "--root", t.root, "--yes"])
        #expect(r.status == 0, "\(r)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("applied: 3 delete; ") == true, "\(r)")
        #expect(lines.count == 2 && lines[1].hasPrefix("freed per rule: tmp ") && lines[1].contains(", logs ")
                && lines[1].contains("; on the root's volume (device \(device)): "), "\(r)")
        let plain = try Self.tree()
        let log = try policyctl(["apply", "--policy", plain.policy, "--root", plain.root, "--yes", "--log-format", "plain"])
        let logLines = log.stdout.split(separator: "\n").map(String.init)
        #expect(logLines.last?.hasPrefix("applied: 3 delete; ") == true && logLines.dropLast().last?.hasPrefix("freed per rule: tmp ") == true, "\(log)")
        let again = try policyctl(["apply", "--policy", t.policy, "--root", t.root, "--yes"])
        #expect(!again.stdout.contains("freed per rule"), "\(again)")
    }

    @Test("JSON: the summary event carries bytesFreedByRule and the root's volume")
    func json() throws {
        let t = try Self.tree()
        var st = stat()
        #expect(stat(t.root, &st) == 0)
        let r = try policyctl(["apply", "--policy", t.policy, "--root", t.root, "--yes", "--log-format", "json"])
        #expect(r.status == 0, "\(r)")
        let last = try #require(r.stdout.split(separator: "\n").last)
        let event = try #require(try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any])
        #expect(event["event"] as? String == "summary")
        let freed = try #require(event["bytesFreed"] as? Int64)
        let byRule = try #require(event["bytesFreedByRule"] as? [String: Int64])
        #expect(byRule.keys.sorted() == ["logs", "tmp"] && byRule.values.reduce(0, +) == freed, "\(event)")
        let volumes = try #require(event["volumes"] as? [[String: Int64]])
        #expect(volumes == [["device": Int64(st.st_dev), "bytesFreed": freed]], "\(event)")
    }
}
