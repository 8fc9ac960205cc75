// The journal keeps what it promises (issue 50), through the binary: a journal past 16 MiB is never rewritten by
// `undo --dry-run`, `journal`, `journal show` or `recover` (byte for byte the same file); the next apply moves the
// older transactions into a gzip history file that `journal show` and `undo` still read, every path listed. And
// the acceptance run: an apply of 80,000 quarantined deletes, `undo --dry-run`, another apply, then `journal show`
// lists every path and `undo` puts all 80,000 back, byte for byte.
import TreeFixture
import Foundation
import StoragePolicy
import Testing

/// A journal line for `body` as the engine frames it (CRC-32 of the body, 8 hex digits).
func framedRecord(_ body: String) -> String {
    var crc: UInt32 = 0xFFFF_FFFF
    for byte in body.utf8 {
        crc ^= UInt32(byte)
        for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
    }
    let hex = String(crc ^ 0xFFFF_FFFF, radix: 16)
    return #"{"crc":""# + String(repeating: "0", count: 8 - hex.count) + hex + #"","rec":"# + body + "}\n"
}

@Suite("The journal keeps what it promises (binary)", .serialized)
struct JournalKeepsTests {
    /// A committed transaction of `deletes` file deletes (roll-forward `unlink` intents), as an apply of an older
    /// build left it, in about 240 bytes a record.
    static func transaction(_ id: String, deletes: Int, root: String) -> String {
        var out = framedRecord(#"{"tx":"\#(id)","seq":1,"type":"begin","time":"2026-01-01T00:00:00Z","kind":"apply","policy":"big","root":"\#(root)","rootDev":1,"rootIno":2,"staging":".policyctl/staging/\#(id)","actions":\#(deletes),"pid":1}"#)
        for n in 1...deletes {
            out += framedRecord(#"{"tx":"\#(id)","seq":\#(n + 1),"type":"intent","op":\#(n),"action":\#(n - 1),"change":"unlink","path":"tmp/d\#(n / 1000)/file-\#(n).dat","entryType":"file","dev":2049,"ino":\#(1_000_000 + n),"size":4096,"mtimeNs":1700000000000000000}"#)
        }
        out += framedRecord(#"{"tx":"\#(id)","seq":\#(deletes + 2),"type":"commit","counts":{"delete":\#(deletes)},"bytesFreed":\#(deletes * 4096),"skipped":0}"#)
        out += framedRecord(#"{"tx":"\#(id)","seq":\#(deletes + 3),"type":"end","outcome":"committed","time":"2026-01-01T00:00:01Z"}"#)
        return out
    }

    @Test("a 17 MiB journal is left byte for byte by undo --dry-run, journal, journal show and recover; the next apply rotates it and show still lists every path")
    func readsNeverCompact() throws {
        let scratch = ScratchDirectory("journal-keeps")
        let root = scratch.sub("root")
        try buildTree(at: root, [.dir("tmp")])
        let policy = scratch.path + "/p.yaml"
        try writePolicy(policy, "version: 1\nname: big\njournal: { keep: 1 }\nrules:\n  - name: t\n    path: tmp\n    expire: 1d\n")
        // Two older transactions of 36,000 deletes each: 17 MiB.
        let old = "20260101T000000Z-0000000a", older = "20260101T000001Z-0000000b"
        mkdir(root + "/.policyctl", 0o700)
        let journalPath = root + "/.policyctl/journal.jsonl"
        try Data((Self.transaction(old, deletes: 36_000, root: root) + Self.transaction(older, deletes: 36_000, root: root)).utf8)
            .write(to: URL(fileURLWithPath: journalPath))
        chmod(journalPath, 0o600)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: journalPath))
        #expect(bytes.count > 16 << 20)

        for run in [["undo", "--root", root, "--dry-run", old], ["journal", "--root", root], ["journal", "show", "--root", root, old],
                    ["journal", "show", "--root", root, "last"], ["recover", "--root", root], ["undo", "--root", root, "--dry-run", "last"]] {
            let r = try policyctl(run)
            #expect([0, 1].contains(r.status), "\(run): \(r.stderr)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: journalPath)) == bytes, "\(run) rewrote the journal")
        }
        let shown = try policyctl(["journal", "show", "--root", root, "last"])
        #expect(shown.stdout.hasPrefix(older), "\(shown.stdout.prefix(200))")

        // An apply (with nothing to do) rotates: the older transaction moves, the newest (keep: 1) stays whole.
        let applied = try policyctl(["apply", "--policy", policy, "--root", root, "--yes"])
        #expect(applied.status == 0, "\(applied)")
        #expect(applied.stdout.contains("journal: moved the records of 1 older transaction to .policyctl/journal.\(old).\(old).jsonl.gz"), "\(applied.stdout)")
        let live = try Data(contentsOf: URL(fileURLWithPath: journalPath))
        #expect(live.count < bytes.count / 2 + 4096)
        let history = try policyctl(["journal", "show", "--root", root, old, "--format", "json"])
        let paths = try JSONDecoder().decode(TransactionPaths.self, from: Data(history.stdout.utf8))
        #expect(paths.paths.count == 36_000 && !paths.compacted)
        #expect(paths.historyFile == ".policyctl/journal.\(old).\(old).jsonl.gz")
        #expect(paths.paths.last?.path == "tmp/d36/file-36000.dat")
        // The history file is plain gzip: what an operator's zcat reads.
        let zcat = try ChildProcess.run("/bin/sh", ["-c", "zcat '\(root)/.policyctl/journal.\(old).\(old).jsonl.gz' | wc -l"])
        #expect(zcat.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "36003", "\(zcat)")
        // The summary stays in the live journal: the list is whole.
        let list = try JSONDecoder().decode([TransactionSummary].self,
                                            from: Data(try policyctl(["journal", "--root", root, "--format", "json"]).stdout.utf8))
        #expect(list.map(\.id) == [old, older])
    }

    @Test("80,000 quarantined deletes, undo --dry-run, another apply: journal show lists every path and undo puts all back, byte for byte")
    func eightyThousand() throws {
        let scratch = ScratchDirectory("journal-80k")
        let root = scratch.sub("root")
        mkdir(root + "/tmp", 0o755)
        let count = 80_000
        let old = Int(treeEpoch) - 48 * 3600
        for d in 0..<80 {
            let folder = root + "/tmp/d\(d)"
            mkdir(folder, 0o755)
            for f in 0..<(count / 80) {
                let path = folder + "/f\(f).dat"
                let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
                let text = Array("\(d)-\(f)\n".utf8)
                _ = text.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                var times = [timespec(tv_sec: old, tv_nsec: 0), timespec(tv_sec: old, tv_nsec: 0)]
                futimens(fd, &times)
                close(fd)
            }
        }
        // The folders are recent: only the files expire, each its own delete.
        let policy = scratch.path + "/p.yaml"
        try writePolicy(policy, "version: 1\nname: big\nquarantine: 7d\nrules:\n  - name: old\n    path: tmp\n    match: [\"**/*.dat\"]\n    expire: 1d\n")
        let before = try strictManifest(root)
        #expect(before.count == count + 81)

        let applied = try policyctl(["apply", "--policy", policy, "--root", root, "--yes", "--max-delete", "none"])
        #expect(applied.status == 0, "\(applied.stderr)")
        let id = try #require(transactionID(applied))
        #expect(applied.stdout.contains("\(count) deletes"), "\(applied.stdout)")
        let dry = try policyctl(["undo", "--root", root, "--dry-run", id])
        #expect(dry.stdout.contains("dry run: \(count) changes would undo \(id)"), "\(dry.stdout.suffix(300))")
        // Another apply: nothing left to delete; the journal (over 16 MiB) is rotated, the held transaction kept whole.
        let again = try policyctl(["apply", "--policy", policy, "--root", root, "--yes"])
        #expect(again.status == 0, "\(again)")
        let shown = try policyctl(["journal", "show", "--root", root, id, "--format", "json"])
        let paths = try JSONDecoder().decode(TransactionPaths.self, from: Data(shown.stdout.utf8))
        #expect(paths.paths.count == count && paths.paths.allSatisfy { $0.status == .changed && $0.change == "delete" })
        let undone = try policyctl(["undo", "--root", root, "--yes", id])
        #expect(undone.status == 0, "\(undone.stderr)")
        #expect(try strictManifest(root) == before)
    }
}
