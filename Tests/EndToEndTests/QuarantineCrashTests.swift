// Crash tests of the quarantine through the binary (issue 50's crash contract): a quarantining apply, an undo
// and a purge, each killed (SIGKILL) after every journal record and after every change, then recovered. The apply
// is then exactly before (rolled back: everything back in place) or after (committed: everything held); an undo
// after recovery always gives back the tree from before the apply; an interrupted undo is finished by another;
// an interrupted purge is rolled forward (the quarantine empty, the tree untouched) and its transaction closed.
import TreeFixture
import Foundation
import StoragePolicy
import Testing

@Suite("Crash and recovery of the quarantine (binary)", .serialized)
struct QuarantineCrashTests {
    /// What an uninterrupted quarantining apply writes: its records and changes.
    struct Reference {
        var before: [String]
        var records: Int
        var changes: Int

        static func make() throws -> Reference {
            let s = try QuarantineTests.scenario()
            let before = try manifest(of: s.root)
            let run = try s.apply()
            #expect(run.status == 0, "\(run)")
            return Reference(before: before, records: try journalLines(s.root).count, changes: 0)
        }
    }

    /// Nothing of the transaction is left half-done: no staging, and the quarantine holds the committed
    /// transactions' entries only (a rolled-back one's folder is gone).
    private func expectClosed(_ s: UnitScenario, _ label: String, sourceLocation: Testing.SourceLocation = #_sourceLocation) throws {
        let journal = try policyctl(["journal", "--root", s.root, "--format", "json"])
        let summaries = try JSONDecoder().decode([TransactionSummary].self, from: Data(journal.stdout.utf8))
        #expect(!summaries.contains { $0.outcome == .open }, "\(label): \(summaries)", sourceLocation: sourceLocation)
        let staged = (try? FileManager.default.contentsOfDirectory(atPath: s.root + "/.policyctl/staging")) ?? []
        #expect(staged.isEmpty, "\(label): staging holds \(staged)", sourceLocation: sourceLocation)
        let committed = Set(summaries.filter { $0.outcome == .committed }.map(\.id))
        let held = (try? FileManager.default.contentsOfDirectory(atPath: s.root + "/.policyctl/quarantine")) ?? []
        #expect(held.allSatisfy(committed.contains), "\(label): quarantine folders \(held) of transactions that did not commit", sourceLocation: sourceLocation)
    }

    /// Recover, then check the apply is before or after, then undo and check the tree is the one from before.
    private func recoverAndUndo(_ s: UnitScenario, _ ref: Reference, _ label: String) throws {
        let recover = try policyctl(["recover", "--root", s.root])
        #expect(recover.status == 0, "\(label): \(recover)")
        try expectClosed(s, label)
        let now = try manifest(of: s.root)
        let summaries = try JSONDecoder().decode([TransactionSummary].self,
                                                 from: Data(try policyctl(["journal", "--root", s.root, "--format", "json"]).stdout.utf8))
        let apply = try #require(summaries.first { $0.kind == .apply }, "\(label)")
        if apply.outcome == .committed {
            // After: every delete is held, nothing of it is in the tree.
            #expect(!now.contains { $0.hasPrefix("tmp/a ") || $0.hasPrefix("Trash/files/dir1") }, "\(label)")
            let undo = try policyctl(["undo", "--root", s.root, "--yes", apply.id])
            #expect(undo.status == 0, "\(label): \(undo)")
        } else {
            // Before: rolled back whole (no delete of a quarantining run rolls forward).
            #expect(now == ref.before, "\(label): rolled back but not before: \(Set(now).symmetricDifference(ref.before).sorted())")
        }
        let final = try manifest(of: s.root)
        #expect(final == ref.before, "\(label): \(Set(final).symmetricDifference(ref.before).sorted())")
        try expectClosed(s, label + ", after the undo")
    }

    @Test("an apply killed after each journal record: recover, then undo, gives back the tree from before")
    func applyKilledAfterEveryRecord() throws {
        let ref = try Reference.make()
        for n in 1..<ref.records {
            let s = try QuarantineTests.scenario()
            let run = try s.apply(["POLICYCTL_CRASH_AFTER_RECORDS": "\(n)"])
            #expect(run.signal == SIGKILL, "record \(n): \(run)")
            try recoverAndUndo(s, ref, "apply killed after record \(n) of \(ref.records)")
        }
    }

    @Test("an apply killed after each change: the same")
    func applyKilledAfterEveryChange() throws {
        let ref = try Reference.make()
        var n = 1
        while n < 60 {
            let s = try QuarantineTests.scenario()
            let run = try s.apply(["POLICYCTL_CRASH_AFTER_CHANGES": "\(n)"])
            if run.signal == nil { break }
            try recoverAndUndo(s, ref, "apply killed after change \(n)")
            n += 1
        }
        #expect(n > 8, "the scenario quarantines more than 8 entries")
    }

    @Test("an undo killed after each record and after each change: recover, undo again, the tree from before")
    func undoKilled() throws {
        let ref = try Reference.make()
        for variable in ["POLICYCTL_CRASH_AFTER_RECORDS", "POLICYCTL_CRASH_AFTER_CHANGES"] {
            var n = 1
            while n < 40 {
                let s = try QuarantineTests.scenario()
                let id = try #require(transactionID(try s.apply()))
                let undo = try policyctl(["undo", "--root", s.root, "--yes", id], environment: [variable: "\(n)"])
                if undo.signal == nil {
                    #expect(try manifest(of: s.root) == ref.before)
                    break
                }
                let label = "undo killed, \(variable)=\(n)"
                #expect(try policyctl(["recover", "--root", s.root]).status == 0, "\(label)")
                try expectClosed(s, label)
                let again = try policyctl(["undo", "--root", s.root, "--yes", id])
                #expect([0, 1].contains(again.status), "\(label): \(again)")
                let final = try manifest(of: s.root)
                #expect(final == ref.before, "\(label): \(Set(final).symmetricDifference(ref.before).sorted())")
                n += 1
            }
            #expect(n > 3, "\(variable): the undo made more than 3 records or changes")
        }
    }

    @Test("a purge killed after each record and change is rolled forward by recovery: the quarantine empty, the tree untouched")
    func purgeKilled() throws {
        for variable in ["POLICYCTL_CRASH_AFTER_RECORDS", "POLICYCTL_CRASH_AFTER_CHANGES"] {
            var n = 1
            while n < 20 {
                let s = try QuarantineTests.scenario()
                _ = try s.apply()
                let after = try manifest(of: s.root)
                let purge = try policyctl(["quarantine", "--root", s.root, "--purge", "--yes"], environment: [variable: "\(n)"])
                let label = "purge killed, \(variable)=\(n)"
                if purge.signal == nil {
                    #expect(purge.status == 0, "\(label): \(purge)")
                    break
                }
                let recover = try policyctl(["recover", "--root", s.root])
                #expect(recover.status == 0, "\(label): \(recover)")
                try expectClosed(s, label)
                let journal = try JSONDecoder().decode([TransactionSummary].self,
                                                       from: Data(try policyctl(["journal", "--root", s.root, "--format", "json"]).stdout.utf8))
                let purgeTx = journal.last { $0.kind == .purge }
                if purgeTx?.outcome == .committed {
                    // The intent was durable: the window is gone for good, whatever the crash cut.
                    #expect(try policyctl(["quarantine", "--root", s.root]).stdout.contains("holds nothing"), "\(label)")
                }
                #expect(try manifest(of: s.root) == after, "\(label): the purge touched the tree")
                n += 1
            }
            // A purge makes one change per window (the window's removal), and writes begin, intent, commit, end.
            #expect(n > (variable == "POLICYCTL_CRASH_AFTER_RECORDS" ? 3 : 1), "\(variable)")
        }
        // Killed in the middle of a window's removal: its intent is durable, part of it is gone (played here by
        // removing one entry by hand), and recovery finishes the rest.
        let s = try QuarantineTests.scenario()
        let id = try #require(transactionID(try s.apply()))
        let after = try manifest(of: s.root)
        let purge = try policyctl(["quarantine", "--root", s.root, "--purge", "--yes"], environment: ["POLICYCTL_CRASH_AFTER_RECORDS": "2"])
        #expect(purge.signal == SIGKILL, "\(purge)")
        let folder = s.root + "/.policyctl/quarantine/\(id)"
        let window = try #require(try FileManager.default.contentsOfDirectory(atPath: folder).first)
        let first = try #require(try FileManager.default.contentsOfDirectory(atPath: folder + "/" + window).sorted().first)
        try FileManager.default.removeItem(atPath: folder + "/" + window + "/" + first)
        #expect(try policyctl(["recover", "--root", s.root]).status == 0)
        #expect(!FileManager.default.fileExists(atPath: folder))
        try expectClosed(s, "purge killed midway")
        #expect(try manifest(of: s.root) == after)
    }
}
