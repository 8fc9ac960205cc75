// Recovery from the journal alone, in process: a transaction abandoned midway (as a crash leaves it) is
// rolled back, one abandoned after its commit is purged, and what cannot go back is kept, never deleted.
import TreeFixture
import Foundation
import Testing
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyApply

@Suite("Recovery")
struct RecoveryTests {
    private func begin(_ f: ApplyFixture, actions: Int) throws -> Transaction {
        let metadata = Transaction.Metadata(kind: .apply, policy: "unit", policySHA256: nil, policyPath: nil,
                                            planFile: nil, rootPath: f.rootPath, actions: actions)
        return try Transaction.begin(metadata, lock: f.lock, journal: try f.lock.state.openJournal())
    }

    /// Journals and makes each change, like a run that is then killed before its commit.
    private func make(_ t: Transaction, _ changes: [(Change, EntryIdentity?)]) throws {
        let intents = changes.enumerated().map { t.intend($0.element.0, action: $0.offset, identity: $0.element.1) }
        try t.makeDurable()
        for intent in intents { try t.perform(intent) }
    }

    @Test("an uncommitted transaction is rolled back from the journal: every kind of change undone")
    func rollsBack() throws {
        let f = try ApplyFixture()
        f.dir("tmp"); f.file("tmp/a"); f.dir("tmp/d"); f.file("tmp/d/x"); f.file("UP"); f.dir("lib")
        try f.root.setExtendedAttribute("user.k", to: Array("old".utf8), of: FileName("lib")!)
        let before = try f.listing()
        let t = try begin(f, actions: 6)
        try make(t, [
            (.mkdir(path: RelativePath("made")!), nil),
            (.setxattr(path: RelativePath("lib")!, attribute: "user.k", value: Array("new".utf8), previous: Array("old".utf8)), try f.status("lib").identity),
            (.create(path: RelativePath("lib/CACHEDIR.TAG")!, temp: t.temporaryName(), contents: Array("tag".utf8)), nil),
            (.rename(from: RelativePath("UP")!, to: RelativePath("up")!), try f.status("UP").identity),
            (.stage(path: RelativePath("tmp/d")!, name: t.stagingName()), try f.status("tmp/d").identity),
            (.stage(path: RelativePath("tmp/a")!, name: t.stagingName()), try f.status("tmp/a").identity),
        ])
        #expect(try f.listing() != before)
        let report = try Recovery.run(holding: f.lock)
        #expect(report.entries.count == 1)
        #expect(report.entries.first?.resolution == .rolledBack)
        #expect(report.entries.first?.undone == 6)
        #expect(report.entries.first?.kept.isEmpty == true)
        #expect(try f.listing() == before)
        #expect(try f.root.extendedAttribute("user.k", of: FileName("lib")!) == Array("old".utf8))
        #expect(!f.exists(".policyctl/staging/\(t.id)"))
        // Idempotent: nothing is left to do, and running the undo again would change nothing.
        #expect(try Recovery.run(holding: f.lock).nothingToDo)
        let history = try JournalHistory.read(f.lock.state)
        #expect(history.transactions.first?.outcome == .rolledBack)
        #expect(history.transactions.first?.recovered == true)
    }

    @Test("an entry whose path was taken meanwhile is kept in staging, reported, and never purged")
    func keptNotDeleted() throws {
        let f = try ApplyFixture()
        f.file("a", size: 7); f.file("b")
        let t = try begin(f, actions: 2)
        try make(t, [(.stage(path: RelativePath("a")!, name: t.stagingName()), try f.status("a").identity),
                     (.stage(path: RelativePath("b")!, name: t.stagingName()), try f.status("b").identity)])
        f.file("a", size: 99)  // someone made a new "a"
        let report = try Recovery.run(holding: f.lock)
        let kept = try #require(report.entries.first?.kept)
        #expect(kept == ["a: something new is at that path; kept as .policyctl/staging/\(t.id)/1"])
        #expect(try f.status("a").size == 99)
        #expect(try f.status(".policyctl/staging/\(t.id)/1").size == 7)
        #expect(f.exists("b"))
        #expect(try Recovery.run(holding: f.lock).nothingToDo)
        #expect(f.exists(".policyctl/staging/\(t.id)/1"))
        #expect(try JournalHistory.read(f.lock.state).transactions.first?.kept.count == 1)
    }

    @Test("a transaction committed but not purged has its purge finished; the apply stands")
    func finishesPurge() throws {
        let f = try ApplyFixture()
        f.dir("d"); f.file("d/x"); f.file("a")
        let t = try begin(f, actions: 2)
        try make(t, [(.stage(path: RelativePath("d")!, name: t.stagingName()), try f.status("d").identity),
                     (.stage(path: RelativePath("a")!, name: t.stagingName()), try f.status("a").identity)])
        try t.commit(counts: [.delete: 2], bytesFreed: 0, skipped: 0)
        let report = try Recovery.run(holding: f.lock)
        #expect(report.entries.first?.resolution == .purgeFinished)
        #expect(try f.listing().isEmpty)
        #expect(!f.exists(".policyctl/staging/\(t.id)"))
        let summary = try #require(try JournalHistory.read(f.lock.state).transactions.first)
        #expect(summary.outcome == .committed)
        #expect(summary.counts == [.delete: 2])
        #expect(summary.recovered)
    }

    @Test("intents never carried out (a crash right after the fsync) undo to nothing")
    func intentsWithoutChanges() throws {
        let f = try ApplyFixture()
        f.file("a"); f.dir("existing")
        let t = try begin(f, actions: 2)
        t.intend(.stage(path: RelativePath("a")!, name: t.stagingName()), action: 0, identity: try f.status("a").identity)
        t.intend(.rename(from: RelativePath("a")!, to: RelativePath("b")!), action: 1, identity: try f.status("a").identity)
        try t.makeDurable()
        let report = try Recovery.run(holding: f.lock)
        #expect(report.entries.first?.undone == 0)
        #expect(try f.listing() == ["a", "existing"])
    }

    @Test("a second holder of the lock is told who holds it")
    func lockHolder() throws {
        let f = try ApplyFixture()
        do {
            _ = try f.lock.state.lock(wait: false)
            Issue.record("the lock was taken twice")
        } catch let held as LockHeld {
            #expect(held.pid == getpid())
            #expect(held.description == "another run holds the lock (pid \(getpid()))")
        }
    }
}
