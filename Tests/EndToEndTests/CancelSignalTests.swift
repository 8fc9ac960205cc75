// SIGTERM and SIGINT to the built binary: an apply slowed per change stops between groups, exits 3 saying
// "cancelled", keeps the file deletes it made, puts back every staged directory and leaves nothing for recover;
// a plan signalled mid-walk exits 3 and writes no --out file. Trees of a few hundred entries under /tmp.
import Foundation
import Testing
import StoragePolicy
import TreeFixture

@Suite("policyctl: SIGTERM and SIGINT cancel (binary)") struct CancelSignalTests {
    static let policy = """
        version: 1
        name: cancel
        rules:
          - name: tmp-expiry
            path: tmp
            type: any
            expire: { after: 24h }
        """

    /// 960 old files (roll-forward unlinks, made by the unlink workers) and, every 25th name, an old directory
    /// (a staged rename): the run waits for the workers before each directory, so it keeps their pace.
    static func tree() throws -> (Tree, String) {
        let tree = try Tree {
            Dir("tmp") {
                for i in 0..<1000 {
                    if i % 25 == 0 { Dir(String(format: "e%04d", i), age: .days(2)) { File("inside", age: .days(2)) } }
                    else { File(String(format: "e%04d", i), age: .days(2), size: 0) }
                }
            }
        }
        let policy = tree.root + ".policy.yaml"
        try Self.policy.write(toFile: policy, atomically: false, encoding: .utf8)
        return (tree, policy)
    }

    static func names(_ root: String) -> Set<String> {
        Set(Manifest.take(root).map { String(decoding: $0.path, as: UTF8.self) }.filter { !$0.hasPrefix(".policyctl") })
    }

    @Test("SIGTERM mid-apply: exit 3, 'cancelled', the first group's file deletes made, every directory back, nothing to recover",
          .enabled(if: FaultInjection.isCompiledIn))
    func sigtermApply() throws {
        let (tree, policy) = try Self.tree()
        defer { tree.remove(); unlink(policy) }
        // 5 ms per change: the first group (256 steps) takes over half a second, all 1,000 steps seconds.
        let run = try policyctl(["apply", "--policy", policy, "--root", tree.root, "--yes", "--max-delete", "none"],
                                environment: ["POLICYCTL_DELAY_PER_CHANGE_MS": "5"], killAfter: 0.3, killSignal: SIGTERM)
        #expect(run.signal == nil, "\(run)")
        #expect(run.status == 3, "\(run)")
        #expect(run.stderr.contains("cancelled"), "\(run)")
        let after = Self.names(tree.root)
        let directories = stride(from: 0, to: 1000, by: 25).map { String(format: "tmp/e%04d/inside", $0) }
        for inside in directories { #expect(after.contains(inside), "\(inside): its folder was put back whole") }
        let files = (0..<1000).filter { $0 % 25 != 0 }.map { String(format: "tmp/e%04d", $0) }
        let kept = files.filter(after.contains)
        // Stopped between groups: some deletes made (they stay), not all of them.
        #expect(!kept.isEmpty && kept.count < files.count, "\(kept.count) files left")
        let recover = try policyctl(["recover", "--root", tree.root])
        #expect(recover.status == 0, "\(recover)")
        #expect(recover.stdout.contains("Nothing to recover"), "\(recover)")
        #expect(Self.names(tree.root) == after)
        let journal = try policyctl(["journal", "--root", tree.root, "--format", "json"])
        #expect(journal.stdout.contains("\"reason\" : \"cancelled\"") || journal.stdout.contains("\"reason\":\"cancelled\""), "\(journal)")
    }

    @Test("SIGINT mid-plan: exit 3 and no --out file", .enabled(if: FaultInjection.isCompiledIn))
    func sigintPlan() throws {
        let tree = try Tree { Dir("tmp") { for d in 0..<300 { Dir("d\(d)") { File("old", age: .days(2)) } } } }
        let policy = tree.root + ".policy.yaml"
        // No in-use look (its read of /proc opens many files, each slowed too): the walk is what is slow.
        try (Self.policy + "\n    inUse: ignore\n").write(toFile: policy, atomically: false, encoding: .utf8)
        defer { tree.remove(); unlink(policy) }
        let out = tree.root + ".plan.json"
        defer { unlink(out) }
        // Every open slowed by 15 ms: the walk of 300 directories takes 4.5 s of opens (over 2 s on the walker's
        // threads); the signal comes at 0.8 s, well after the handler is in place even on a loaded machine.
        let started = ContinuousClock.now
        let run = try policyctl(["plan", "--policy", policy, "--root", tree.root, "--out", out],
                                environment: ["POLICYCTL_SLOW_CALLS": "open:15000"], killAfter: 0.8, killSignal: SIGINT)
        #expect(ContinuousClock.now - started < .milliseconds(1_800), "the walk went on after the signal")
        #expect(run.signal == nil, "\(run)")
        #expect(run.status == 3, "\(run)")
        #expect(run.stderr.contains("cancelled"), "\(run)")
        #expect(!FileManager.default.fileExists(atPath: out))
    }
}
