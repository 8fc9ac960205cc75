// Crash tests of units of change against the built binary (Docs/journal.md, "Units of change"): a container with
// a FreeDesktop trash whose items include folders, an app trash item recorded in the index, quota `unit:
// directory` evictions, forbid moves and plain roll-forward file deletes. Killed after every journal record and
// after every change (recovery too), then recovered: no unit is split, the journal says which file deletes stayed
// done, and a re-apply reaches exactly what an uninterrupted apply reaches on a copy.
import TreeFixture
import Foundation
import StoragePolicy
import Testing

/// One copy of the container, its policy, and what its units are.
struct UnitScenario {
    let scratch: ScratchDirectory
    let root: String
    let policy: String

    static let policyText = """
        version: 1
        name: units
        rules:
          - name: trash
            path: Trash
            trash: { retain: 30d }
          - name: apptrash
            path: app/.trash
            trash: { retain: 30d, layout: app }
          - name: tmp
            path: tmp
            expire: 1h
          - name: builds
            path: builds
            quota: { max: 1B, minAge: 1d, unit: directory }
          - name: no-databases
            path: work
            forbid: ["**/*.sqlite"]

        """

    static let tree: [TreeNode] = [
        .dir("tmp", ageHours: 48), .file("tmp/a"), .file("tmp/b", size: 100), .file("tmp/c", size: 0),
        .dir("Trash"), .dir("Trash/files"), .dir("Trash/info"),
        .dir("Trash/files/dir1", ageHours: 48), .file("Trash/files/dir1/a"), .dir("Trash/files/dir1/sub", ageHours: 48),
        .file("Trash/files/dir1/sub/b"), .dir("Trash/files/dir2", ageHours: 48), .file("Trash/files/dir2/c", size: 3),
        .file("Trash/files/f1", size: 4),
        .dir("app"), .dir("app/.trash"), .dir("app/.trash/.policyctl-info"), .symlink("app/.trash/link", target: "/etc"),
        .dir("builds"), .dir("builds/job1", ageHours: 720), .file("builds/job1/o", ageHours: 720),
        .dir("builds/job2", ageHours: 720), .file("builds/job2/o", size: 20, ageHours: 720),
        .dir("builds/job3"), .file("builds/job3/n", ageHours: 0.01),
        .dir("work"), .file("work/x.sqlite", size: 7), .dir("work/sub"), .file("work/sub/y.sqlite", size: 8),
    ]

    /// Trash items and the record that dates each: never one without the other after a recovery.
    static let trashUnits: [(item: String, record: String)] = [
        ("Trash/files/dir1", "Trash/info/dir1.trashinfo"), ("Trash/files/dir2", "Trash/info/dir2.trashinfo"),
        ("Trash/files/f1", "Trash/info/f1.trashinfo"), ("app/.trash/link", "app/.trash/.policyctl-info/link.trashinfo"),
        // Forbid moves land here with the record they write.
        ("Trash/files/x.sqlite", "Trash/info/x.sqlite.trashinfo"), ("Trash/files/y.sqlite", "Trash/info/y.sqlite.trashinfo"),
    ]

    init() throws {
        scratch = ScratchDirectory("units")
        root = scratch.sub("root")
        try buildTree(at: root, Self.tree)
        for (name, folder) in [("dir1", "Trash/info"), ("dir2", "Trash/info"), ("f1", "Trash/info")] {
            try Data("[Trash Info]\nPath=\(root)/x/\(name)\nDeletionDate=2020-01-01T00:00:00\n".utf8)
                .write(to: URL(fileURLWithPath: "\(root)/\(folder)/\(name).trashinfo"))
        }
        try Data("[Trash Info]\nPath=elsewhere/link\nDeletionDate=2020-01-01T00:00:00Z\n".utf8)
            .write(to: URL(fileURLWithPath: "\(root)/app/.trash/.policyctl-info/link.trashinfo"))
        policy = scratch.path + "/p.yaml"
        try writePolicy(policy, Self.policyText)
    }

    func apply(_ environment: [String: String] = [:]) throws -> RunResult {
        try policyctl(["apply", "--policy", policy, "--root", root, "--yes"], environment: environment)
    }

    func manifest() throws -> [String] { try EndToEndTests.manifest(of: root) }

    func exists(_ rel: String) -> Bool {
        var s = stat()
        return lstat(root + "/" + rel, &s) == 0
    }

    /// Every unit exactly before or exactly after: an item and its record together; a forbid move with its record
    /// or not at all (and the source back where it was); a quota unit whole or gone; nothing left in staging.
    func expectUnitsWhole(_ before: [String], _ label: String, sourceLocation: Testing.SourceLocation = #_sourceLocation) throws {
        for (item, record) in Self.trashUnits {
            #expect(exists(item) == exists(record), "\(label): \(item) \(exists(item) ? "without" : "gone, but not") \(record)", sourceLocation: sourceLocation)
        }
        for (source, moved) in [("work/x.sqlite", "Trash/files/x.sqlite"), ("work/sub/y.sqlite", "Trash/files/y.sqlite")] {
            #expect(exists(source) != exists(moved), "\(label): \(source) and \(moved)", sourceLocation: sourceLocation)
        }
        let now = try manifest()
        for unit in ["builds/job1", "builds/job2", "Trash/files/dir1", "Trash/files/dir2"] {
            let inside = now.filter { $0.hasPrefix(unit + "/") || $0.hasPrefix(unit + " ") }
            let was = before.filter { $0.hasPrefix(unit + "/") || $0.hasPrefix(unit + " ") }
            #expect(inside.isEmpty || inside == was, "\(label): \(unit) is half there: \(inside)", sourceLocation: sourceLocation)
        }
        let left = (try? FileManager.default.contentsOfDirectory(atPath: root + "/.policyctl/staging")) ?? []
        #expect(left.isEmpty, "\(label): staging still holds \(left)", sourceLocation: sourceLocation)
    }

    /// The journal tells what stayed done: the last transaction's file deletes made or finished, by count.
    func expectJournalTruth(_ label: String, sourceLocation: Testing.SourceLocation = #_sourceLocation) throws {
        let journal = try policyctl(["journal", "--root", root, "--format", "json"])
        let summaries = try JSONDecoder().decode([TransactionSummary].self, from: Data(journal.stdout.utf8))
        guard let last = summaries.last, last.outcome != .committed else { return }
        let done = try rolledForwardDeletes(root).count
        if done == 0 {
            #expect(last.outcome == .rolledBack, "\(label): \(last)", sourceLocation: sourceLocation)
        } else {
            #expect(last.outcome == .partiallyRolledBack, "\(label): \(last)", sourceLocation: sourceLocation)
            #expect(last.counts[.delete] == done, "\(label): \(last.counts) for \(done) roll-forward deletes", sourceLocation: sourceLocation)
            #expect(last.bytesFreed == 110, "\(label): tmp/a, b and c hold 110 bytes", sourceLocation: sourceLocation)
        }
    }
}

@Suite("Crash and recovery of units of change (binary)")
struct UnitCrashTests {
    /// What an uninterrupted apply leaves, and how many journal records it writes.
    struct Reference {
        var before: [String]
        var after: [String]
        var records: Int
        var commitRecord: Int

        static func make() throws -> Reference {
            let s = try UnitScenario()
            let before = try s.manifest()
            let run = try s.apply()
            #expect([0, 1].contains(run.status), "\(run)")
            let lines = try journalLines(s.root)
            let commit = (lines.firstIndex { $0.contains(#""type":"commit""#) } ?? -1) + 1
            return Reference(before: before, after: try s.manifest(), records: lines.count, commitRecord: commit)
        }
    }

    @Test("the uninterrupted apply deletes every trash item with its record, evicts the old units whole and moves the databases")
    func reference() throws {
        let ref = try Reference.make()
        for gone in ["Trash/files/dir1 ", "Trash/info/dir1.trashinfo ", "Trash/files/f1 ", "app/.trash/link ",
                     "app/.trash/.policyctl-info/link.trashinfo ", "builds/job1 ", "builds/job2 ", "tmp/a ", "work/x.sqlite "] {
            #expect(!ref.after.contains { $0.hasPrefix(gone) }, "\(gone) is still there")
        }
        for stays in ["builds/job3/n ", "Trash/files/x.sqlite ", "Trash/info/x.sqlite.trashinfo ", "Trash/files/y.sqlite "] {
            #expect(ref.after.contains { $0.hasPrefix(stays) }, "\(stays) is missing")
        }
        #expect(ref.commitRecord > 10)
    }

    /// Recover, check the units and the journal, re-apply, compare with the reference.
    private func converge(_ s: UnitScenario, _ ref: Reference, _ label: String) throws {
        let recover = try policyctl(["recover", "--root", s.root])
        #expect(recover.status == 0, "\(label): \(recover)")
        try s.expectUnitsWhole(ref.before, label)
        try s.expectJournalTruth(label)
        let again = try s.apply()
        #expect([0, 1].contains(again.status), "\(label): \(again)")
        let final = try s.manifest()
        #expect(final == ref.after, "\(label): a re-apply did not reach the uninterrupted result: \(Set(final).symmetricDifference(ref.after).sorted())")
    }

    @Test("SIGKILL after each journal record: recover leaves every unit whole, the journal says what stayed done, a re-apply converges")
    func crashAfterEveryRecord() throws {
        let ref = try Reference.make()
        for n in 1..<ref.records {
            let s = try UnitScenario()
            let run = try s.apply(["POLICYCTL_CRASH_AFTER_RECORDS": "\(n)"])
            #expect(run.signal == SIGKILL, "record \(n): \(run)")
            try converge(s, ref, "crash after record \(n) of \(ref.records)")
        }
    }

    @Test("SIGKILL after each change to the tree: the same")
    func crashAfterEveryChange() throws {
        let ref = try Reference.make()
        var n = 1
        while n < 120 {
            let s = try UnitScenario()
            let run = try s.apply(["POLICYCTL_CRASH_AFTER_CHANGES": "\(n)"])
            if run.signal == nil {
                #expect(try s.manifest() == ref.after, "\(run)")
                break
            }
            try converge(s, ref, "crash after change \(n)")
            n += 1
        }
        #expect(n > 12, "the scenario makes more than 12 changes")
    }

    @Test("after a crash and recover, journal says in words and in JSON which file deletes stayed done")
    func journalNamesWhatWasFinished() throws {
        let ref = try Reference.make()
        let s = try UnitScenario()
        // Everything journaled and made, the commit not written: the units go back, the file deletes stay.
        let run = try s.apply(["POLICYCTL_CRASH_AFTER_RECORDS": "\(ref.commitRecord - 1)"])
        #expect(run.signal == SIGKILL, "\(run)")
        #expect(try policyctl(["recover", "--root", s.root]).status == 0)
        let text = try policyctl(["journal", "--root", s.root])
        #expect(text.stdout.contains("partially rolled back"), "\(text)")
        #expect(text.stdout.contains("rolled back after an interruption; 3 file deletes were finished (110 B freed)"), "\(text)")
        let json = try policyctl(["journal", "--root", s.root, "--format", "json"])
        #expect(json.stdout.contains(#""outcome" : "partially rolled back""#), "\(json)")
        #expect(json.stdout.contains(#""bytesFreed" : 110"#), "\(json)")
        #expect(json.stdout.contains(#""delete" : 3"#), "\(json)")
    }

    @Test("a crash during recovery of a crashed apply, then recovery again: units whole, and a re-apply converges")
    func crashDuringRecovery() throws {
        let ref = try Reference.make()
        for (applyCrash, recoverCrash) in [(8, 1), (8, 3), (14, 2), (14, 5)] {
            let s = try UnitScenario()
            let run = try s.apply(["POLICYCTL_CRASH_AFTER_CHANGES": "\(applyCrash)"])
            #expect(run.signal == SIGKILL)
            _ = try policyctl(["recover", "--root", s.root], environment: ["POLICYCTL_CRASH_AFTER_CHANGES": "\(recoverCrash)"])
            try converge(s, ref, "apply crashed after change \(applyCrash), recovery after change \(recoverCrash)")
        }
    }
}
