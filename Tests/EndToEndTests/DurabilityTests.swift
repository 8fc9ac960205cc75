// The journal's fsyncs, seen from outside: a SIGKILL cannot tell a missing fsync (written data survives a dead
// process), so these tests fail the fsyncs themselves and check that an intent group is durable before any change.
import Foundation
import Testing

@Suite("Journal durability (fsync failures)")
struct DurabilityTests {
    /// The changes a failed apply says it undid, from `(N changes undone)`; nil when it says nothing of the kind.
    static func undone(_ stderr: String) -> Int? {
        guard let range = stderr.range(of: #"\((\d+) changes? undone\)"#, options: .regularExpression) else { return nil }
        return Int(stderr[range].dropFirst().prefix { $0.isNumber })
    }

    @Test("every fsync of the journal is made, and the one after the first intent group comes before any change")
    func intentGroupIsDurableBeforeItsChanges() throws {
        var journalFailures: [(n: Int, undone: Int?)] = []
        var n = 1
        var cleanInARow = 0
        while n <= 60 {
            let s = try CrashScenario()
            let before = try s.manifest()
            let run = try policyctl(["apply", s.planFile, "--yes"], environment: ["POLICYCTL_FAULTS": "fsync:\(n):EIO"])
            #expect(run.signal == nil, "fsync:\(n): the process died\n\(run)")
            // Some fsyncs are allowed to fail quietly (the journal's space reserve): only three clean runs in a
            // row mean the sweep is past the last fsync.
            if run.status == 0 {
                cleanInARow += 1
                if cleanInARow == 3 { break }
                n += 1
                continue
            }
            cleanInARow = 0
            if run.stderr.contains(".policyctl/journal.jsonl") {
                journalFailures.append((n, Self.undone(run.stderr)))
                if journalFailures.count == 2 {
                    // The intents' own fsync failed: not a single change may have been made, so nothing was
                    // undone, and the tree is as it was even before any recovery runs.
                    #expect(try s.manifest() == before, "fsync:\(n) failed on the intents, yet the tree changed\n\(run)")
                    #expect(Self.undone(run.stderr) ?? 0 == 0, "fsync:\(n): changes were made before their intents were durable\n\(run)")
                }
            }
            n += 1
        }
        // The begin record's fsync and the first intent group's fsync both fail on the journal itself.
        #expect(journalFailures.count >= 2, "failed fsyncs naming .policyctl/journal.jsonl: \(journalFailures)")
        #expect(journalFailures.first?.undone ?? 0 == 0)
    }
}
