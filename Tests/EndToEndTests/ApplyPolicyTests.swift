// Plan then apply through the CLI with the real planner, on generated app-container trees (hostile names
// included): apply converges (planning again finds nothing), a second apply does nothing, crashes recover.
import TreeFixture
import Foundation
import StoragePolicy
import Testing

@Suite("policyctl apply --policy (planner and apply together)")
struct ApplyPolicyTests {
    static let packageRoot = String(#filePath).components(separatedBy: "/Tests/")[0]
    static let policy = packageRoot + "/Policies/ios-app-sandbox.yaml"

    /// A generated tree of about `entries` entries under a fresh scratch directory.
    static func generated(_ entries: Int, hostile: Bool = true, seed: Int = 7) throws -> (ScratchDirectory, String) {
        let scratch = ScratchDirectory("policy")
        let root = scratch.path + "/tree"
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["python3", packageRoot + "/Benchmarks/generate-tree.py", root, "\(entries)", "--seed", "\(seed)"] + (hostile ? ["--hostile"] : [])
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        p.waitUntilExit()
        #expect(p.terminationStatus == 0, "generate-tree.py failed")
        return (scratch, root)
    }

    @Test("apply --policy plans and applies; planning again finds nothing; a second apply does nothing")
    func converges() throws {
        let (scratch, root) = try Self.generated(2000)
        let plan = try policyctl(["plan", "--policy", Self.policy, "--root", root, "--format", "json"])
        #expect(plan.status == 0, "\(plan)")
        let planned = try Plan.decode(json: Data(plan.stdout.utf8))
        #expect(planned.actions.count > 50)
        #expect(planned.actions.contains { $0.isDelete })
        #expect(planned.actions.contains { if case .rename = $0.kind { true } else { false } })

        let apply = try policyctl(["apply", "--policy", Self.policy, "--root", root, "--yes"])
        #expect(apply.status == 0, "\(apply)")
        #expect(apply.stdout.contains("applied: "))
        #expect(!apply.stdout.contains("skipped"), "nothing changed between plan and apply: \(apply)")

        let again = try policyctl(["plan", "--policy", Self.policy, "--root", root, "--detailed-exitcode", "--format", "json"])
        #expect(again.status == 0, "changes still pending after apply: \(again)")
        #expect(try Plan.decode(json: Data(again.stdout.utf8)).actions.isEmpty)

        let second = try policyctl(["apply", "--policy", Self.policy, "--root", root, "--yes"])
        #expect(second.status == 0)
        #expect(second.stdout.hasPrefix("Nothing to do: "))
        let journal = try policyctl(["journal", "--root", root, "--format", "json"])
        let history = try JSONDecoder().decode([TransactionSummary].self, from: Data(journal.stdout.utf8))
        #expect(history.count == 1)
        #expect(history.first?.outcome == .committed)
        #expect(history.first?.policy == "ios-app-sandbox")
        #expect(history.first?.counts[.delete] == planned.actions.filter(\.isDelete).count)
        _ = scratch
    }

    @Test("a saved plan applies exactly what plan printed, then is harmless")
    func savedPlan() throws {
        let (scratch, root) = try Self.generated(800, seed: 11)
        let planFile = scratch.path + "/plan.json"
        let plan = try policyctl(["plan", "--policy", Self.policy, "--root", root, "--out", planFile])
        #expect(plan.status == 0, "\(plan)")
        let saved = try Plan.decode(json: Data(contentsOf: URL(fileURLWithPath: planFile)))
        let apply = try policyctl(["apply", planFile, "--yes", "--log-format", "json"])
        #expect(apply.status == 0, "\(apply)")
        let events = apply.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(events.filter { $0["event"] as? String == "action" }.count == saved.actions.count)
        #expect(events.last?["outcome"] as? String == "committed")
        let again = try policyctl(["plan", "--policy", Self.policy, "--root", root, "--detailed-exitcode"])
        #expect(again.status == 0, "\(again)")
    }

    @Test("each --log-format json line has the bytes JSONSerialization writes for its fields (sorted keys, escapes, seconds)")
    func jsonLogLines() throws {
        let (scratch, root) = try Self.generated(600, seed: 13)
        // Names a line must escape: a newline, controls, a quote, a backslash, a slash-free non-ASCII name.
        let old = Date(timeIntervalSinceNow: -3 * 86_400)
        for name in ["a\nb", "c\u{1}\u{1f}d", #"q"uote\back"#, "é\u{7f}"] {
            let path = root + "/tmp/" + name
            #expect(FileManager.default.createFile(atPath: path, contents: Data("x".utf8)))
            try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: path)
        }
        let apply = try policyctl(["apply", "--policy", Self.policy, "--root", root, "--yes", "--log-format", "json", "--verbose"])
        #expect(apply.status == 0, "\(apply)")
        let lines = apply.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(lines.count > 20)
        for line in lines {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8))
            let again = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
            #expect(String(decoding: again, as: UTF8.self) == String(line))
        }
        #expect(lines.contains { $0.contains(#""path":"tmp/a\nb""#) })
        #expect(lines.contains { $0.contains(#""path":"tmp/c\u0001\u001fd""#) })
        #expect(lines.contains { $0.contains(#""path":"tmp/q\"uote\\back""#) })
        #expect(lines.last?.hasPrefix(#"{"bytesFreed":"#) == true && lines.last?.contains(#""seconds":"#) == true)
        _ = scratch
    }

    @Test("the policy's max-delete refuses a large apply (exit 3); --max-delete overrides it")
    func policyMaxDelete() throws {
        let scratch = ScratchDirectory("policy")
        let root = scratch.sub("tree")
        var nodes: [TreeNode] = [.dir("tmp", ageHours: 48)]
        for i in 0..<10 { nodes.append(.file("tmp/old\(i)")) }
        nodes.append(.file("tmp/fresh", ageHours: 1))
        try buildTree(at: root, nodes)
        let policy = scratch.path + "/p.yaml"
        try writePolicy(policy, """
            version: 1
            name: capped
            max-delete: 5
            rules:
              - name: tmp-expiry
                path: tmp
                expire: { after: 24h, by: mtime }
            """)
        let refused = try policyctl(["apply", "--policy", policy, "--root", root, "--yes"])
        #expect(refused.status == 3, "\(refused)")
        #expect(refused.stderr.contains("apply refused: would delete 10 entries, more than the policy's max-delete 5; nothing was changed"))
        #expect(FileManager.default.fileExists(atPath: root + "/tmp/old0"))
        let forced = try policyctl(["apply", "--policy", policy, "--root", root, "--yes", "--max-delete", "10"])
        #expect(forced.status == 0, "\(forced)")
        #expect(try manifest(of: root) == ["tmp directory", "tmp/fresh file size=10 mtime=\(manifestTime(ageHours: 1))"])
    }

    @Test("an apply of a generated tree (hostile names) killed at several points recovers to the before-manifest but for the durable roll-forward deletes")
    func crashOnGeneratedTree() throws {
        let (probeScratch, probeRoot) = try Self.generated(600, seed: 21)
        let probe = try policyctl(["plan", "--policy", Self.policy, "--root", probeRoot, "--format", "json"])
        let actions = try Plan.decode(json: Data(probe.stdout.utf8)).actions.count
        #expect(actions > 20)
        _ = probeScratch
        // Each action makes at least one change: every n below falls inside the run.
        for n in [1, 2, actions / 8, actions / 4, actions / 2] {
            let (scratch, root) = try Self.generated(600, seed: 21)
            let before = try manifest(of: root, createdAfter: Int64.max)
            let run = try policyctl(["apply", "--policy", Self.policy, "--root", root, "--yes"],
                                    environment: ["POLICYCTL_CRASH_AFTER_CHANGES": "\(n)"])
            #expect(run.signal == SIGKILL, "\(run)")
            #expect(try policyctl(["recover", "--root", root]).status == 0)
            let expected = try rolledBackManifest(before: before, root: root)
            #expect(try manifest(of: root, createdAfter: Int64.max) == expected, "crash after change \(n): not the before-manifest but for the roll-forward deletes")
            _ = scratch
        }
    }
}
