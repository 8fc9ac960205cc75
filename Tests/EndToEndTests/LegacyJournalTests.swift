// Journals written before records carried a CRC-32 (the `sum` frame: the first 16 hex digits of the body's
// SHA-256) are still read: a transaction an older build left open is recovered exactly as a new one would be,
// and a line whose old checksum is wrong is still refused.
import Foundation
import StoragePolicy
import Testing

@Suite("Journals in the older SHA-256 frame (binary)")
struct LegacyJournalTests {
    /// Rewrites every `{"crc":"…","rec":BODY}` line as `{"sum":"<SHA-256 prefix>","rec":BODY}`.
    static func toLegacyFrame(_ root: String, corruptLine: Int? = nil) throws {
        let path = root + "/.policyctl/journal.jsonl"
        var out = ""
        for (n, line) in try journalLines(root).enumerated() {
            let start = line.range(of: #","rec":"#)!.upperBound
            let body = String(line[start..<line.index(before: line.endIndex)])
            var sum = String(SHA256.hex(Array(body.utf8)).prefix(16))
            if n + 1 == corruptLine { sum = String(sum.reversed()) }
            out += #"{"sum":""# + sum + #"","rec":"# + body + "}\n"
        }
        try Data(out.utf8).write(to: URL(fileURLWithPath: path))
    }

    static func crashedApply(_ name: String) throws -> (ScratchDirectory, String) {
        let scratch = ScratchDirectory(name)
        let root = scratch.sub("root")
        let policy = scratch.path + "/policy.yaml"
        try writePolicy(policy, "version: 1\nname: legacy\nrules:\n  - name: tmp-expiry\n    path: tmp\n    expire: 24h\n")
        try buildTree(at: root, [.dir("tmp", ageHours: 48), .file("tmp/a.dat"), .file("tmp/b.dat"), .file("tmp/c.dat"),
                                 .file("tmp/new.dat", ageHours: 1)])
        // Killed once the three unlink intents are durable, before any of them was made.
        let crashed = try policyctl(["apply", "--policy", policy, "--root", root, "--yes"], environment: ["POLICYCTL_CRASH_AFTER_RECORDS": "2"])
        #expect(crashed.signal == SIGKILL, "\(crashed)")
        #expect(FileManager.default.fileExists(atPath: root + "/tmp/a.dat"))
        return (scratch, root)
    }

    @Test("an open transaction journaled in the sum frame is recovered: its durable roll-forward deletes are finished")
    func recoversOldFrame() throws {
        let (scratch, root) = try Self.crashedApply("legacy-journal")
        _ = scratch
        try Self.toLegacyFrame(root)
        #expect(try journalLines(root).allSatisfy { $0.hasPrefix(#"{"sum":""#) })
        let recover = try policyctl(["recover", "--root", root])
        #expect(recover.status == 0, "\(recover)")
        #expect(recover.stdout.contains("(0 changes undone, 3 roll-forward deletes finished)"), "\(recover)")
        for name in ["a", "b", "c"] { #expect(!FileManager.default.fileExists(atPath: root + "/tmp/\(name).dat")) }
        #expect(FileManager.default.fileExists(atPath: root + "/tmp/new.dat"))
        // The end record recovery wrote is in the new frame, after the old lines; the journal reads as closed.
        #expect(try journalLines(root).last?.hasPrefix(#"{"crc":""#) == true)
        #expect(try policyctl(["recover", "--root", root]).stdout.contains("Nothing to recover"))
    }

    @Test("a sum-frame intent whose checksum is wrong is not trusted: its delete is not finished")
    func refusesBadOldChecksum() throws {
        let (scratch, root) = try Self.crashedApply("legacy-journal-bad")
        _ = scratch
        // Line 1 is begin; lines 2 to 4 are the intents (deepest path first: c, b, a). Line 3 is b's.
        let intent = try journalLines(root)[2]
        #expect(intent.contains(#""path":"tmp/b.dat""#), "\(intent)")
        try Self.toLegacyFrame(root, corruptLine: 3)
        let recover = try policyctl(["recover", "--root", root])
        #expect((recover.stdout + recover.stderr).contains("journal.jsonl:3: checksum or framing mismatch; ignored"), "\(recover)")
        #expect(recover.stdout.contains("2 roll-forward deletes finished"), "\(recover)")
        #expect(FileManager.default.fileExists(atPath: root + "/tmp/b.dat"))
        #expect(!FileManager.default.fileExists(atPath: root + "/tmp/a.dat") && !FileManager.default.fileExists(atPath: root + "/tmp/c.dat"))
    }
}
