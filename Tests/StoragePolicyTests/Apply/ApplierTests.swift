// The apply engine in process: ordering, identity checks, directory deletes, the blast-radius cap, budgets,
// rollback of a failed run, recovery and the journal's history. Real directories under /tmp.
import TreeFixture
import Foundation
import Testing
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyPlan
@testable import StoragePolicyApply
@testable import StoragePolicyModel

@Suite("Applier")
struct ApplierTests {
    @Test("actions run mkdir first, then attributes, then renames and trash, then deletes; deepest first")
    func ordering() {
        func a(_ kind: Action.Kind, _ p: String) -> Action { Action(kind: kind, path: RelativePath(p)!, rule: "r", reason: "") }
        let ordered = Applier.ordered([
            a(.delete, "t"), a(.delete, "t/x"), a(.mkdir, "c/sub"), a(.mkdir, "c"),
            a(.rename(to: RelativePath("B")!), "A"), a(.rename(to: RelativePath("A/x")!), "A/X"),
            a(.setxattr(name: "user.a", value: []), "c"), a(.delete, "t/x/y"), a(.delete, "t-1"),
        ]).map { "\($0.kind.name) \($0.path.string)" }
        #expect(ordered == ["mkdir c", "mkdir c/sub", "setxattr c", "rename A/X", "rename A", "delete t/x/y", "delete t/x", "delete t-1", "delete t"])
    }

    @Test("a plan applies: files and directories go, counts and bytes are reported, staging is empty")
    func applies() throws {
        let f = try ApplyFixture()
        f.dir("tmp"); f.file("tmp/a", size: 5000); f.file("tmp/b"); f.dir("tmp/d"); f.file("tmp/d/x")
        let report = try f.apply(f.plan([try f.action(.delete, "tmp/a"), try f.action(.delete, "tmp/b"), try f.action(.delete, "tmp/d", entries: 2)]))
        #expect(try f.listing() == ["tmp"])
        #expect(report.counts == [.delete: 3])
        #expect(report.bytesFreed > 8192)
        #expect(report.transaction != nil)
        #expect(report.warnings.isEmpty)
        let staging = try f.root.openDirectory(at: RelativePath(".policyctl/staging")!)
        #expect(try staging.entries().isEmpty)
    }

    @Test("an empty plan opens no transaction and writes no journal")
    func emptyPlan() throws {
        let f = try ApplyFixture()
        let report = try f.apply(f.plan([]))
        #expect(report.transaction == nil)
        let size = (try? f.status(".policyctl/journal.jsonl"))?.size ?? 0
        #expect(size == 0)
    }

    @Test("a directory whose planned contents went first is removed only if it is then empty")
    func emptiedDirectory() throws {
        let f = try ApplyFixture()
        f.dir("d"); f.file("d/a"); f.file("d/b"); f.dir("e"); f.file("e/a"); f.file("e/new", ageHours: 0)
        let plan = f.plan([try f.action(.delete, "d/a"), try f.action(.delete, "d/b"), try f.action(.delete, "d"),
                           try f.action(.delete, "e/a"), try f.action(.delete, "e")])
        let report = try f.apply(plan)
        #expect(!f.exists("d"))
        #expect(f.exists("e/new"))
        #expect(report.outcome("e") == .skipped("not empty once its planned contents were removed; kept"))
    }

    @Test("a whole-tree delete keeps the tree when anything inside was modified after the plan")
    func wholeTreeWithNewerEntry() throws {
        let f = try ApplyFixture()
        f.dir("t"); f.dir("t/a"); f.dir("t/a/b"); f.file("t/a/b/deep")
        f.age("t/a/b", hours: 48); f.age("t/a", hours: 48); f.age("t", hours: 48)
        let plan = f.plan([try f.action(.delete, "t", entries: 4)], createdAt: Date().addingTimeInterval(-600))
        // Modified after the plan (which was made ten minutes ago): the directories' own mtimes do not change.
        f.age("t/a/b/deep", hours: 0)
        let report = try f.apply(plan)
        #expect(f.exists("t/a/b/deep"))
        // Setting the ages after the (backdated) plan gave every entry a ctime after it: the first one met names it.
        #expect(report.outcome("t") == .skipped("holds t/a, changed since the plan (new ctime); kept"))
    }

    @Test("identity mismatches are named precisely")
    func mismatchMessages() {
        let id = EntryIdentity(device: 1, inode: 2, size: 3, modificationTimeNs: 4)
        func status(ino: UInt64 = 2, type: FileType = .regular, size: Int64 = 3, mtime: Int64 = 4) -> FileStatus {
            FileStatus(device: 1, inode: ino, type: type, size: size, allocatedSize: 0, accessTimeNs: 0, modificationTimeNs: mtime, changeTimeNs: 0)
        }
        #expect(StepVerifier.mismatch(status(), id, type: .regular) == nil)
        #expect(StepVerifier.mismatch(status(ino: 9), id, type: .regular) == "replaced since the plan (another file has this name now)")
        #expect(StepVerifier.mismatch(status(type: .symlink), id, type: .regular) == "replaced by a symlink since the plan (not followed)")
        #expect(StepVerifier.mismatch(status(size: 5), id, type: nil) == "modified since the plan (size 3 -> 5); kept")
        #expect(StepVerifier.mismatch(status(mtime: 5), id, type: nil) == "modified since the plan (mtime changed); kept")
    }

    @Test("actions without an identity, on the root or inside .policyctl are never carried out")
    func refusedTargets() throws {
        let f = try ApplyFixture()
        f.file("x")
        let noIdentity = Action(kind: .delete, path: RelativePath("x")!, rule: "r", reason: "")
        let state = try f.action(.delete, ".policyctl/lock")
        let report = try f.apply(f.plan([noIdentity, state]))
        #expect(f.exists("x"))
        #expect(f.exists(".policyctl/lock"))
        #expect(report.outcome("x") == .skipped("the plan records no identity for it; not touched"))
        #expect(report.outcome(".policyctl/lock") == .skipped("inside .policyctl, the engine's own state folder; never touched"))
    }

    @Test("renames never replace; mkdir of an existing directory and an attribute already set are unchanged")
    func noReplaceAndUnchanged() throws {
        let f = try ApplyFixture()
        f.file("A"); f.file("a"); f.dir("c")
        try f.root.setExtendedAttribute("user.k", to: Array("v".utf8), of: FileName("c")!)
        let report = try f.apply(f.plan([try f.action(.rename(to: RelativePath("a")!), "A"), try f.action(.mkdir, "c"),
                                         try f.action(.setxattr(name: "user.k", value: Array("v".utf8)), "c")]))
        #expect(f.exists("A") && f.exists("a"))
        #expect(report.outcome("A") == .skipped("a already exists; nothing replaced"))
        #expect(report.outcome("c") == .unchanged("already exists"))
        #expect(report.items.first { $0.verb == .setxattr }?.outcome == .unchanged("user.k already set"))
        #expect(report.counts.isEmpty)
    }

    @Test("an immutable file (EPERM) is skipped with its errno; the rest of the transaction commits",
          .enabled(if: ApplyFixture.canMakeImmutable))
    func entryFailureIsolated() throws {
        let f = try ApplyFixture()
        f.dir("c"); f.file("a"); f.file("b"); f.file("locked"); f.dir("t"); f.file("t/x")
        let plan = f.plan([try f.action(.setxattr(name: "user.k", value: Array("new".utf8)), "c"),
                           try f.action(.mkdir, "made"), try f.action(.rename(to: RelativePath("B")!), "b"),
                           try f.action(.delete, "a"), try f.action(.delete, "t"), try f.action(.delete, "locked")])
        try f.makeImmutable("locked")
        defer { try? f.makeImmutable("locked", false) }
        let report = try f.apply(plan)
        #expect(report.outcome("locked") == .skipped("Operation not permitted (EPERM) [unlinkat]"))
        #expect(report.failed.map(\.action.path) == [RelativePath("locked")!])
        #expect(report.failed.first?.error == FileSystemError(.unlinkat, path: RelativePath("locked")!, errno: .notPermitted))
        #expect(report.counts == [.setxattr: 1, .mkdir: 1, .rename: 1, .delete: 2])
        #expect(f.exists("locked") && f.exists("made") && f.exists("B") && !f.exists("a") && !f.exists("t") && !f.exists("b"))
        #expect(try f.root.extendedAttribute("user.k", of: FileName("c")!) == Array("new".utf8))
        let history = try JournalHistory.read(f.lock.state)
        #expect(history.transactions.first?.outcome == .committed)
        #expect(history.transactions.first?.skipped.map(\.reason) == ["Operation not permitted (EPERM) [unlinkat]"])
        #expect(try Recovery.run(holding: f.lock).nothingToDo)
    }

    @Test("a rename to a name longer than 255 bytes (a custom rule could ask for one) is skipped with ENAMETOOLONG; with allOrNothing it rolls back")
    func nameTooLongIsolated() throws {
        let long = RelativePath(String(repeating: "é", count: 128) + ".txt")!  // 260 bytes in UTF-8
        let f = try ApplyFixture()
        f.file("LONG.TXT"); f.file("UP.TXT"); f.file("old")
        let plan = f.plan([try f.action(.rename(to: long), "LONG.TXT"), try f.action(.rename(to: RelativePath("up.txt")!), "UP.TXT"),
                           try f.action(.delete, "old")])
        let report = try f.apply(plan)
        #expect(report.outcome("LONG.TXT") == .skipped("\(long.escaped): File name too long (ENAMETOOLONG) [fstatat]"))
        #expect(report.failed.map(\.action.path) == [RelativePath("LONG.TXT")!])
        #expect(f.exists("LONG.TXT") && f.exists("up.txt") && !f.exists("UP.TXT") && !f.exists("old"))

        let g = try ApplyFixture()
        g.file("LONG.TXT"); g.file("UP.TXT"); g.file("old")
        let strict = g.plan([try g.action(.rename(to: RelativePath("up.txt")!), "UP.TXT"), try g.action(.rename(to: long), "LONG.TXT"),
                             try g.action(.delete, "old")])
        let before = try g.listing()
        #expect(throws: ApplyError.self) { _ = try g.apply(strict, ApplyOptions(rootPath: g.rootPath, allOrNothing: true)) }
        #expect(try g.listing() == before)
    }

    @Test("with allOrNothing a real failure midway (EPERM from an immutable file) rolls everything back, attributes included",
          .enabled(if: ApplyFixture.canMakeImmutable))
    func failureRollsBack() throws {
        let f = try ApplyFixture()
        f.dir("c"); f.dir("d"); f.file("a"); f.file("b"); f.file("locked"); f.dir("t"); f.file("t/x")
        try f.root.setExtendedAttribute("user.k", to: Array("old".utf8), of: FileName("c")!)
        let plan = f.plan([try f.action(.setxattr(name: "user.k", value: Array("new".utf8)), "c"),
                           try f.action(.setxattr(name: "user.n", value: Array("1".utf8)), "d"),
                           try f.action(.mkdir, "made"), try f.action(.rename(to: RelativePath("B")!), "b"),
                           try f.action(.delete, "a"), try f.action(.delete, "t"), try f.action(.delete, "locked")])
        try f.makeImmutable("locked")
        defer { try? f.makeImmutable("locked", false) }
        let before = try f.listing()
        do {
            _ = try f.apply(plan, ApplyOptions(rootPath: f.rootPath, allOrNothing: true))
            Issue.record("expected a rollback")
        } catch {
            guard case .rolledBack(_, let cause, let undone, let kept) = error else { Issue.record("\(error)"); return }
            #expect(cause == "locked: Operation not permitted (EPERM) [renameat2]")
            // Deletes run deepest path first: t, then locked (which fails), so a was never staged.
            #expect(undone == 5)
            #expect(kept.isEmpty)
        }
        #expect(try f.listing() == before)
        #expect(try f.root.extendedAttribute("user.k", of: FileName("c")!) == Array("old".utf8))
        #expect(try f.root.extendedAttribute("user.n", of: FileName("d")!) == nil)
        let history = try JournalHistory.read(f.lock.state)
        #expect(history.transactions.first?.outcome == .rolledBack)
        #expect(history.transactions.first?.reason == "locked: Operation not permitted (EPERM) [renameat2]")
        #expect(try Recovery.run(holding: f.lock).nothingToDo)
    }

    @Test("a time budget already spent refuses before anything changes")
    func budgetSpent() throws {
        let f = try ApplyFixture()
        f.file("a")
        var options = ApplyOptions(rootPath: f.rootPath)
        options.deadline = ContinuousClock.now
        options.deadlineLabel = "--max-runtime 0s"
        let plan = f.plan([try f.action(.delete, "a")])
        do {
            _ = try f.apply(plan, options)
            Issue.record("expected a refusal")
        } catch {
            #expect(error.description == "apply refused: --max-runtime 0s was spent before anything changed; nothing was changed")
        }
        #expect(f.exists("a"))
    }

    @Test("--max-delete counts entries (a directory counts what it holds) and refuses before anything changes")
    func maxDelete() throws {
        let f = try ApplyFixture()
        f.file("a"); f.dir("d"); f.file("d/x"); f.file("d/y")
        let plan = f.plan([try f.action(.delete, "a"), try f.action(.delete, "d", entries: 3)], scanned: 10)
        #expect(Applier.deletions(in: plan) == 4)
        var options = ApplyOptions(rootPath: f.rootPath)
        options.maxDelete = .count(3)
        do {
            _ = try f.apply(plan, options)
            Issue.record("expected a refusal")
        } catch {
            guard case .refused(let message) = error else { Issue.record("\(error)"); return }
            #expect(message == "apply refused: would delete 4 entries, more than --max-delete 3; nothing was changed")
        }
        options.maxDelete = .percent(30, atLeast: 0)
        options.maxDeleteLabel = "the policy's max-delete 30%"
        do {
            _ = try f.apply(plan, options)
            Issue.record("expected a refusal")
        } catch {
            guard case .refused(let message) = error else { Issue.record("\(error)"); return }
            #expect(message == "apply refused: would delete 4 entries, more than the policy's max-delete 30% (3 of 10 entries scanned); nothing was changed")
        }
        #expect(try f.listing() == ["a", "d", "d/x", "d/y"])
        options.maxDelete = .count(4)
        _ = try f.apply(plan, options)
        #expect(try f.listing().isEmpty)
    }

    @Test("trash into an app folder that does not exist: it is created and the item is stamped")
    func trashCreatesFolder() throws {
        let f = try ApplyFixture()
        f.dir("docs"); f.file("docs/x.sqlite")
        let report = try f.apply(f.plan([try f.action(.trash(to: RelativePath("docs/.Trash/x.sqlite")!), "docs/x.sqlite")]))
        #expect(report.counts == [.trash: 1, .mkdir: 1])
        #expect(report.items.first?.destination == RelativePath("docs/.Trash/x.sqlite"))
        let trash = try f.root.openDirectory(at: RelativePath("docs/.Trash")!)
        #expect(try trash.extendedAttribute(TrashFolder.originAttribute, of: FileName("x.sqlite")!) == Array("docs/x.sqlite".utf8))
        #expect(try trash.extendedAttribute(Markers.trashStampAttribute, of: FileName("x.sqlite")!) != nil)
    }

    @Test("recovery with nothing open does nothing; the history lists what ran")
    func recoveryAndHistory() throws {
        let f = try ApplyFixture()
        #expect(try Recovery.run(holding: f.lock).nothingToDo)
        f.file("a"); f.file("b", size: 3)
        try f.root.openFile(FileName("b")!, options: [.writeOnly, .append]).write([1])
        var plan = f.plan([try f.action(.delete, "a")])
        plan.actions.append(Action(kind: .delete, path: RelativePath("b")!, rule: "r", reason: "",
                                   identity: try f.status("b").identity.with(size: 3), type: .regular))
        let report = try f.apply(plan)
        #expect(report.counts == [.delete: 1])
        #expect(try Recovery.run(holding: f.lock).nothingToDo)
        let history = try JournalHistory.read(f.lock.state)
        #expect(history.transactions.count == 1)
        let t = try #require(history.transactions.first)
        #expect(t.outcome == .committed)
        #expect(t.policy == "unit")
        #expect(t.counts == [.delete: 1])
        #expect(t.actions == 2)
        #expect(t.skipped.map(\.path) == ["b"])
        #expect(t.skipped.first?.reason == "modified since the plan (size 3 -> 4); kept")
    }

    @Test("rotation moves a closed transaction's records, byte for byte, to a gzip history file and keeps its summary live")
    func rotation() throws {
        let f = try ApplyFixture()
        for i in 0..<20 { f.file("f\(i)") }
        let id = try #require(try f.apply(f.plan(try (0..<20).map { try f.action(.delete, "f\($0)") })).transaction)
        let before = try JournalHistory.read(f.lock.state).transactions
        let whole = try JournalFiles.transaction(id, in: f.lock.state)?.records.map(\.body)
        let report = try #require(try JournalRotation.rotateIfLarge(holding: f.lock, retention: Policy.JournalRetention(keep: 0),
                                                                   protected: [], threshold: 0))
        #expect(report.moved == 1 && report.file == ".policyctl/journal.\(id).\(id).jsonl.gz")
        let lines = try String(contentsOfFile: f.rootPath + "/.policyctl/journal.jsonl", encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 3)
        #expect(!lines.contains { $0.contains(#""type":"intent""#) })
        #expect(try JournalHistory.read(f.lock.state).transactions == before)
        // Every record still read, from the history file.
        let found = try #require(try JournalFiles.transaction(id, in: f.lock.state))
        #expect(found.source == .history("journal.\(id).\(id).jsonl.gz"))
        #expect(found.records.map(\.body) == whole)
        // Rotating again moves nothing: the summary has no changes left to move.
        #expect(try JournalRotation.rotateIfLarge(holding: f.lock, retention: Policy.JournalRetention(keep: 0), protected: [], threshold: 0) == nil)
    }

    @Test("history past `journal: { history }` is removed oldest first and said so; the summary stays, the paths are no longer listed")
    func historyTrimmed() throws {
        let f = try ApplyFixture()
        f.file("a")
        let id = try #require(try f.apply(f.plan([try f.action(.delete, "a")])).transaction)
        let report = try #require(try JournalRotation.rotateIfLarge(holding: f.lock, retention: Policy.JournalRetention(keep: 0, history: ByteSize(bytes: 1)),
                                                                   protected: [], threshold: 0))
        #expect(report.moved == 1)
        #expect(report.removed == [".policyctl/journal.\(id).\(id).jsonl.gz (transactions \(id) to \(id))"])
        #expect(try JournalFiles.history(f.lock.state).isEmpty)
        #expect(try JournalFiles.transaction(id, in: f.lock.state)?.source == .summaryOnly)
        #expect(try JournalHistory.read(f.lock.state).transactions.map(\.id) == [id])
    }

    @Test("rotation keeps the newest `keep` transactions and the protected ones whole")
    func rotationKeeps() throws {
        let f = try ApplyFixture()
        var ids: [String] = []
        for i in 0..<4 {
            f.file("f\(i)")
            ids.append(try #require(try f.apply(f.plan([try f.action(.delete, "f\(i)")])).transaction))
        }
        let report = try #require(try JournalRotation.rotateIfLarge(holding: f.lock, retention: Policy.JournalRetention(keep: 2),
                                                                   protected: [ids[0]], threshold: 0))
        #expect(report.moved == 1)
        let text = try String(contentsOfFile: f.rootPath + "/.policyctl/journal.jsonl", encoding: .utf8)
        let intents = text.split(separator: "\n").filter { $0.contains(#""type":"intent""#) }
        #expect(Set(ids.filter { id in intents.contains { $0.contains(id) } }) == [ids[0], ids[2], ids[3]])
        #expect(try JournalFiles.transaction(ids[1], in: f.lock.state)?.source == .history("journal.\(ids[1]).\(ids[1]).jsonl.gz"))
    }
}

extension EntryIdentity {
    func with(size: Int64) -> EntryIdentity {
        var copy = self
        copy.size = size
        return copy
    }
}
