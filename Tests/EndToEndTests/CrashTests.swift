// Real crash tests: the built binary is SIGKILLed after every journal record, after every change and at
// random times, then `policyctl recover` runs; the tree must equal the after-manifest exactly, or (uncommitted)
// the before-manifest with exactly the roll-forward deletes whose intents were durable done (Docs/journal.md).
import TreeFixture
import Foundation
import StoragePolicy
import Testing

@Suite("Crash and recovery of the real binary")
struct CrashTests {
    @Test("the reference run changes what the plan says, and nothing else")
    func referenceRun() throws {
        let ref = try CrashReference.make()
        #expect(ref.before != ref.after)
        #expect(ref.commitRecord > 2)
        // The plan's effects, spelled out: deleted, renamed, trashed, created, stamped.
        #expect(!ref.after.contains { $0.hasPrefix("tmp/old1 ") })
        #expect(!ref.after.contains { $0.hasPrefix("tmp/tree") })
        #expect(!ref.after.contains { $0.hasPrefix("tmp/sub") })
        #expect(ref.after.contains { $0.hasPrefix("tmp/fresh file size=10") })
        #expect(ref.after.contains { $0.hasPrefix("docs/up.txt file size=3") })
        #expect(ref.after.contains { $0.hasPrefix("docs/.Trash/files/Notes.sqlite file size=4") && $0.contains("user.keep=yes") })
        #expect(ref.after.contains { $0.hasPrefix("docs/.Trash/info/Notes.sqlite.trashinfo file") })
        #expect(ref.after.contains { $0.hasPrefix("docs/.Trash/files/private.db file size=5") })
        #expect(ref.after.contains { $0.hasPrefix("docs/.Trash/info/private.db.trashinfo file") })
        #expect(ref.after.contains("cache directory user.xdg.robots.backup=false"))
        #expect(ref.after.contains { $0.hasPrefix("cache/CACHEDIR.TAG file size=") })
        #expect(ref.after.contains("cache/sub directory"))
        #expect(ref.after.contains("lib directory user.test=1 user.xdg.robots.backup=false"))
    }

    @Test("SIGKILL after each journal record, then recover: uncommitted is before but for the durable roll-forward deletes, committed is after")
    func crashAfterEveryRecord() throws {
        let ref = try CrashReference.make()
        for n in 1...ref.records {
            let s = try CrashScenario()
            let run = try policyctl(["apply", s.planFile, "--yes"], environment: ["POLICYCTL_CRASH_AFTER_RECORDS": "\(n)"])
            #expect(run.signal == SIGKILL, "record \(n): \(run)")
            let recover = try policyctl(["recover", "--root", s.root])
            #expect(recover.status == 0, "record \(n): \(recover)")
            let expected = n < ref.commitRecord ? try s.rolledBack(ref) : ref.after
            #expect(try s.manifest() == expected, "crash after record \(n) of \(ref.records) (commit is \(ref.commitRecord))")
            // The deletes go in one journal group: none of their intents is durable yet, or all of them are.
            let finished = try rolledForwardDeletes(s.root)
            #expect(finished.isEmpty || finished == CrashScenario.rollForwardDeletes, "record \(n): \(finished.sorted())")
            try s.expectStagingEmpty()
            try s.expectOutsideUntouched()
            // Recovery is idempotent: again changes nothing.
            #expect(try policyctl(["recover", "--root", s.root]).stdout.contains("Nothing to recover"))
            #expect(try s.manifest() == expected)
        }
    }

    @Test("SIGKILL after each change to the tree, then recover: the before-manifest but for the durable roll-forward deletes, which are done")
    func crashAfterEveryChange() throws {
        let ref = try CrashReference.make()
        var n = 1
        var rolledForward = 0
        while n < 200 {
            let s = try CrashScenario()
            let run = try policyctl(["apply", s.planFile, "--yes"], environment: ["POLICYCTL_CRASH_AFTER_CHANGES": "\(n)"])
            if run.signal == nil {
                // Past the last change: the run completed.
                #expect(run.status == 0, "\(run)")
                #expect(try s.manifest() == ref.after)
                break
            }
            let recover = try policyctl(["recover", "--root", s.root])
            #expect(recover.status == 0, "change \(n): \(recover)")
            #expect(recover.stdout.contains("rolled back interrupted transaction"), "change \(n): \(recover)")
            #expect(try s.manifest() == s.rolledBack(ref), "crash after change \(n)")
            let finished = try rolledForwardDeletes(s.root)
            #expect(finished.isEmpty || finished == CrashScenario.rollForwardDeletes, "change \(n): \(finished.sorted())")
            if !finished.isEmpty { rolledForward += 1 }
            try s.expectStagingEmpty()
            try s.expectOutsideUntouched()
            n += 1
        }
        #expect(n > 15, "the scenario makes more than 15 changes")
        #expect(rolledForward >= 5, "crashes among the deletes finish the roll-forward ones")
    }

    @Test("SIGKILL at arbitrary times, then recover: after, or before but for the durable roll-forward deletes")
    func crashByTime() throws {
        let ref = try CrashReference.make()
        for delay in [0.005, 0.02, 0.04, 0.06, 0.08, 0.1, 0.13, 0.16, 0.2, 0.25, 0.3, 0.4] {
            let s = try CrashScenario()
            _ = try policyctl(["apply", s.planFile, "--yes"], environment: ["POLICYCTL_DELAY_PER_CHANGE_MS": "8"], killAfter: delay)
            let recover = try policyctl(["recover", "--root", s.root])
            #expect(recover.status == 0, "\(recover)")
            let m = try s.manifest()
            #expect(try m == s.rolledBack(ref) || m == ref.after, "killed after \(delay)s: neither rolled back nor after")
            try s.expectOutsideUntouched()
        }
    }

    @Test("a crash during recovery, then recovery again, still converges", arguments: ["RECORDS", "CHANGES"])
    func crashDuringRecovery(counter: String) throws {
        let ref = try CrashReference.make()
        for applyCrash in [6, 12] {
            for recoverCrash in 1...14 {
                let s = try CrashScenario()
                let run = try policyctl(["apply", s.planFile, "--yes"], environment: ["POLICYCTL_CRASH_AFTER_CHANGES": "\(applyCrash)"])
                #expect(run.signal == SIGKILL)
                _ = try policyctl(["recover", "--root", s.root], environment: ["POLICYCTL_CRASH_AFTER_\(counter)": "\(recoverCrash)"])
                // A second interrupted recovery on top of the first.
                _ = try policyctl(["recover", "--root", s.root], environment: ["POLICYCTL_CRASH_AFTER_\(counter)": "2"])
                let final = try policyctl(["recover", "--root", s.root])
                #expect(final.status == 0, "\(final)")
                #expect(try s.manifest() == s.rolledBack(ref), "apply crashed after change \(applyCrash), recovery after \(counter.lowercased()) \(recoverCrash)")
                try s.expectStagingEmpty()
            }
        }
    }

    @Test("a crash after the commit record: recovery finishes the purge and the apply stands")
    func crashAfterCommit() throws {
        let ref = try CrashReference.make()
        let s = try CrashScenario()
        let run = try policyctl(["apply", s.planFile, "--yes"], environment: ["POLICYCTL_CRASH_AFTER_RECORDS": "\(ref.commitRecord)"])
        #expect(run.signal == SIGKILL)
        // Staged entries are still there until recovery purges them.
        let staged = try FileManager.default.contentsOfDirectory(atPath: s.root + "/.policyctl/staging")
        #expect(staged.count == 1)
        let recover = try policyctl(["recover", "--root", s.root])
        #expect(recover.stdout.contains("finished the purge of committed transaction"), "\(recover)")
        #expect(try s.manifest() == ref.after)
        try s.expectStagingEmpty()
        let journal = try policyctl(["journal", "--root", s.root, "--format", "json"])
        let summaries = try JSONDecoder().decode([TransactionSummary].self, from: Data(journal.stdout.utf8))
        #expect(summaries.count == 1)
        #expect(summaries.first?.outcome == .committed)
        #expect(summaries.first?.recovered == true)
    }

    @Test("the next apply recovers first, then applies")
    func applyRecoversFirst() throws {
        let ref = try CrashReference.make()
        let s = try CrashScenario()
        _ = try policyctl(["apply", s.planFile, "--yes"], environment: ["POLICYCTL_CRASH_AFTER_CHANGES": "9"])
        let run = try policyctl(["apply", s.planFile, "--yes"])
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.contains("recover: rolled back interrupted transaction"))
        #expect(try s.manifest() == ref.after)
        try s.expectStagingEmpty()
    }

    @Test("a torn last journal line is ignored and cut off")
    func tornJournalLine() throws {
        let ref = try CrashReference.make()
        let s = try CrashScenario()
        _ = try policyctl(["apply", s.planFile, "--yes"], environment: ["POLICYCTL_CRASH_AFTER_CHANGES": "5"])
        let journal = s.root + "/.policyctl/journal.jsonl"
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: journal))
        handle.seekToEndOfFile()
        handle.write(Data(#"{"sum":"0000000000000000","rec":{"tx":"x","seq":99,"ty"#.utf8))
        try handle.close()
        let recover = try policyctl(["recover", "--root", s.root])
        #expect(recover.status == 0, "\(recover)")
        #expect(recover.stdout.contains("torn line"))
        #expect(try s.manifest() == s.rolledBack(ref))
        let text = try String(contentsOfFile: journal, encoding: .utf8)
        #expect(text.hasSuffix("}\n"))
        #expect(!text.contains(#""seq":99"#))
    }
}
