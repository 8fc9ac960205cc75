// `policyctl journal show TX` (binary): a committed apply path by path, a step skipped because its file changed
// since the plan, a rollback (a change undone, one never made), the JSON form, usage errors, and a co-tenant's
// forged `.policyctl` refused before one of its records is printed.
import TreeFixture
import Foundation
import StoragePolicy
import Testing

@Suite("policyctl journal show (binary)", .serialized)
struct JournalShowTests {
    static let policyText = """
        version: 1
        name: show
        rules:
          - name: expire
            path: tmp
            expire: 1h
          - name: naming
            path: docs
            naming: { case: lower }

        """

    struct Setup {
        let scratch = ScratchDirectory("journal-show")
        let root: String
        let policy: String

        init() throws {
            root = scratch.sub("root")
            policy = scratch.path + "/policy.yaml"
            try writePolicy(policy, JournalShowTests.policyText)
            try buildTree(at: root, [
                .dir("docs"), .file("docs/README.TXT"), .file("docs/NOTES.MD"),
                .dir("tmp", ageHours: 0.1), .file("tmp/old.log", size: 10, ageHours: 3), .file("tmp/new.log", ageHours: 0.1),
            ])
        }

        /// The newest transaction's id and start time, from `journal --format json`.
        func newest() throws -> (id: String, time: String) {
            let json = try policyctl(["journal", "--root", root, "--format", "json"])
            let history = try JSONDecoder().decode([TransactionSummary].self, from: Data(json.stdout.utf8))
            let t = try #require(history.last)
            return (t.id, t.time)
        }
    }

    @Test("a committed apply: every change, in the order made, with the journal's first line and a tally")
    func committed() throws {
        let s = try Setup()
        #expect(try policyctl(["apply", "--yes", "--policy", s.policy, "--root", s.root]).status == 0)
        let (id, time) = try s.newest()
        let shown = try policyctl(["journal", "show", "--root", s.root, id])
        #expect(shown.status == 0, "\(shown)")
        #expect(shown.stderr == "")
        #expect(shown.stdout == """
            \(id)  \(time)  apply  policy show  committed
              root \(s.root)
              changed     rename docs/README.TXT -> docs/readme.txt
              changed     rename docs/NOTES.MD -> docs/notes.md
              changed     delete tmp/old.log
              3 changed

            """, "\(shown.stdout)")

        let json = try policyctl(["journal", "show", "--root", s.root, "--format", "json", id])
        #expect(json.status == 0, "\(json)")
        let decoded = try JSONDecoder().decode(TransactionPaths.self, from: Data(json.stdout.utf8))
        #expect(decoded.transaction.id == id && decoded.transaction.outcome == .committed && !decoded.compacted)
        #expect(decoded.paths.map { "\($0.status.rawValue) \($0.change ?? "-") \($0.path) \($0.to ?? "-") \($0.size.map(String.init) ?? "-")" } == [
            "changed rename docs/README.TXT docs/readme.txt -",
            "changed rename docs/NOTES.MD docs/notes.md -",
            "changed delete tmp/old.log - 10",
        ])
    }

    @Test("a file changed between plan and apply is listed as skipped with the reason the apply gave")
    func skipped() throws {
        let s = try Setup()
        let planFile = s.scratch.path + "/plan.json"
        #expect(try policyctl(["plan", "--policy", s.policy, "--root", s.root, "--out", planFile]).status == 0)
        let fd = open(s.root + "/tmp/old.log", O_WRONLY | O_APPEND)
        #expect(write(fd, "more", 4) == 4)
        close(fd)
        let apply = try policyctl(["apply", planFile, "--yes"])
        #expect(apply.status == 0, "\(apply)")
        let (id, _) = try s.newest()
        let shown = try policyctl(["journal", "show", "--root", s.root, id])
        #expect(shown.status == 0, "\(shown)")
        let lines = shown.stdout.split(separator: "\n").dropFirst(2).map(String.init)
        #expect(lines == [
            "  changed     rename docs/README.TXT -> docs/readme.txt",
            "  changed     rename docs/NOTES.MD -> docs/notes.md",
            "  skipped     delete tmp/old.log: modified since the plan (size 10 -> 14); kept",
            "  2 changed, 1 skipped",
        ], "\(shown.stdout)")
        let json = try policyctl(["journal", "show", "--root", s.root, "--format", "json", id])
        let decoded = try JSONDecoder().decode(TransactionPaths.self, from: Data(json.stdout.utf8))
        #expect(decoded.paths.last?.status == .skipped && decoded.paths.last?.change == "delete")
        #expect(decoded.paths.last?.reason == "modified since the plan (size 10 -> 14); kept")
    }

    @Test("a run that failed midway: the change it made is rolled back, the one it journaled and never made is not made")
    func rolledBack() throws {
        let s = try Setup()
        let apply = try policyctl(["apply", "--yes", "--policy", s.policy, "--root", s.root],
                                  environment: ["POLICYCTL_FAULTS": "rename:2:EIO"])
        #expect(apply.status == 3, "\(apply)")
        let (id, time) = try s.newest()
        let shown = try policyctl(["journal", "show", "--root", s.root, id])
        #expect(shown.status == 0, "\(shown)")
        #expect(shown.stdout == """
            \(id)  \(time)  apply  policy show  rolled back
              root \(s.root)
              rolled back rename docs/README.TXT -> docs/readme.txt
              not made    rename docs/NOTES.MD -> docs/notes.md
              1 rolled back, 1 not made

            """, "\(shown.stdout)")
        #expect(FileManager.default.fileExists(atPath: s.root + "/docs/README.TXT"))
    }

    @Test("a journal compacted since (its intent records gone): said so, with the counts; the skips are still listed")
    func compacted() throws {
        let s = try Setup()
        let planFile = s.scratch.path + "/plan.json"
        #expect(try policyctl(["plan", "--policy", s.policy, "--root", s.root, "--out", planFile]).status == 0)
        let fd = open(s.root + "/tmp/old.log", O_WRONLY | O_APPEND)
        #expect(write(fd, "more", 4) == 4)
        close(fd)
        #expect(try policyctl(["apply", planFile, "--yes"]).status == 0)
        let (id, _) = try s.newest()
        // What compaction keeps: every record but the intents, byte for byte (each line carries its own checksum).
        let kept = try journalLines(s.root).filter { !$0.contains(#""type":"intent""#) }
        try Data((kept.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: s.root + "/.policyctl/journal.jsonl"))
        let shown = try policyctl(["journal", "show", "--root", s.root, id])
        #expect(shown.status == 0, "\(shown)")
        #expect(shown.stdout.split(separator: "\n").dropFirst(2).map(String.init) == [
            "  skipped     delete tmp/old.log: modified since the plan (size 10 -> 14); kept",
            "  the journal no longer lists this run's changes (its history file was removed past the policy's journal: { history } limit, or an older policyctl compacted the journal): only what it skipped and kept (2 rename)",
            "  1 skipped",
        ], "\(shown.stdout)")
    }

    @Test("a name with a newline is escaped in the text (it cannot forge a line) and exact in the JSON")
    func hostileName() throws {
        let s = try Setup()
        try buildTree(at: s.root, [.file("tmp/a\nb", ageHours: 3)])
        #expect(try policyctl(["apply", "--yes", "--policy", s.policy, "--root", s.root]).status == 0)
        let (id, _) = try s.newest()
        let shown = try policyctl(["journal", "show", "--root", s.root, id])
        #expect(shown.stdout.contains("\n  changed     delete tmp/a\\nb\n"), "\(shown.stdout)")
        let json = try policyctl(["journal", "show", "--root", s.root, "--format", "json", id])
        let decoded = try JSONDecoder().decode(TransactionPaths.self, from: Data(json.stdout.utf8))
        #expect(decoded.paths.contains { $0.path == "tmp/a\nb" && $0.change == "delete" })
    }

    @Test("usage: no id, an id the journal does not have, a word other than show, --last with show: exit 64")
    func usage() throws {
        let s = try Setup()
        #expect(try policyctl(["apply", "--yes", "--policy", s.policy, "--root", s.root]).status == 0)
        let missing = try policyctl(["journal", "show", "--root", s.root])
        #expect(missing.status == 64)
        #expect(missing.stderr.hasPrefix("Error: 'journal show' needs the transaction id ('policyctl journal --root \(s.root)' lists them)\n"), "\(missing)")
        let unknown = try policyctl(["journal", "show", "--root", s.root, "20200101T000000Z-00000000"])
        #expect(unknown.status == 64)
        #expect(unknown.stdout == "")
        #expect(unknown.stderr.hasPrefix("Error: the journal under \(s.root) has no transaction '20200101T000000Z-00000000'; 'policyctl journal --root \(s.root)' lists them\n"), "\(unknown)")
        let word = try policyctl(["journal", "list", "--root", s.root])
        #expect(word.status == 64)
        #expect(word.stderr.hasPrefix("Error: Unexpected argument 'list': the one word 'journal' takes is 'show'"), "\(word)")
        let (id, _) = try s.newest()
        #expect(try policyctl(["journal", "show", "--root", s.root, "--last", "1", id]).status == 64)
    }

    @Test("a co-tenant's .policyctl with a forged transaction is refused (74, naming it) and none of it is printed",
          .enabled(if: CoTenant.isAvailable))
    func forgedStateRefused() throws {
        let w = try CoTenantStateTests.World()
        try w.plantJournal([try w.begin(),
            #"{"tx":"\#(CoTenantStateTests.transaction)","seq":2,"type":"intent","op":1,"action":0,"change":"mkdir","path":"forged-by-12345"}"#,
            #"{"tx":"\#(CoTenantStateTests.transaction)","seq":3,"type":"commit","counts":{"mkdir":1}}"#,
            #"{"tx":"\#(CoTenantStateTests.transaction)","seq":4,"type":"end","outcome":"committed"}"#])
        let before = w.journalBytes
        let shown = try policyctl(["journal", "show", "--root", w.root, CoTenantStateTests.transaction])
        #expect(shown.status == 74, "\(shown)")
        #expect(shown.stdout == "")
        #expect(shown.stderr.hasPrefix("Error: \(w.root)/.policyctl: is owned by uid 12345, not by uid 0 that runs policyctl; refused: "), "\(shown)")
        #expect(shown.stderr.contains("--state-dir"), "the fix is named: \(shown)")
        #expect(w.journalBytes == before, "the journal is only read")
        #expect(!FileManager.default.fileExists(atPath: w.root + "/forged-by-12345"))
    }
}
