// The CLI's behaviour in process: StorageEngine.apply, recover and journal send the exact events the
// command renders (a stale plan, a max-delete refusal, a recovered transaction, a skipped item), and paths
// are normalised once. Trees under /tmp only, removed even when a test fails.
import Foundation
import Synchronization
import Testing
import TreeFixture
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyModel
@testable import StoragePolicyEvaluation
@testable import StoragePolicyApply

@Suite("Library: engine events") struct EngineEventTests {
    /// One 24 h expiry of tmp, as StorageEngineTests use.
    static let policy = StorageEngineTests.policy

    /// A root with one expired file and one fresh one, and a policy file beside it (outside the root).
    final class Scratch {
        let tree: Tree
        let folder: String
        var policyFile: String { folder + "/policy.yaml" }
        var root: String { tree.root }
        /// The root as the engine records it.
        var rootPath: String { PathNormalization.canonical(tree.root) }

        init(policy: String = EngineEventTests.policy) throws {
            tree = try Tree {
                Dir("tmp") {
                    File("old", age: .days(2), size: 4)
                    File("new", age: .hours(1), size: 4)
                }
            }
            var template = TestScratch.template("events")
            guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else {
                tree.remove()
                throw FileSystemError(.mkdtemp, path: .root, errno: .current)
            }
            folder = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
            try write(policy)
        }

        func write(_ policy: String) throws { try Data(policy.utf8).write(to: URL(fileURLWithPath: policyFile)) }

        func exists(_ relative: String) -> Bool { access(root + "/" + relative, F_OK) == 0 }

        func remove() {
            tree.remove()
            try? FileManager.default.removeItem(atPath: folder)
        }

        func request(_ source: ApplyRequest.Source? = nil) -> ApplyRequest {
            var request = ApplyRequest(root: root, source: source ?? .policyFile(policyFile))
            request.planOptions = tree.options()
            return request
        }
    }

    /// Collects events as one line each (progress left out: how often it comes depends on timing).
    final class Events: Sendable {
        private let lines = Mutex<[String]>([])
        var all: [String] { lines.withLock { $0 } }
        func record(_ event: ApplyEvent) {
            guard let line = Events.line(event) else { return }
            lines.withLock { $0.append(line) }
        }

        static func line(_ event: ApplyEvent) -> String? {
            switch event {
            case .opened(let root): return "opened \(root)"
            case .stateNotice(let notice): return "notice \(notice)"
            case .waitingForLock: return "waiting for the lock"
            case .lockHeld: return "lock held"
            case .recovered(let report):
                return "recovered " + report.entries.map { "\($0.resolution) \($0.transaction) (\($0.undone) undone)" }.joined(separator: ", ")
            case .stalePlan(let why): return "stale: \(why)"
            case .planMismatch(let why): return "mismatch: \(why)"
            case .planRefused(let invalid): return "plan refused: \(invalid)"
            case .planning, .applying: return nil
            case .planned(let plan): return "planned \(plan.actions.count)"
            case .nothingToDo: return "nothing to do"
            case .cancelled: return "cancelled"
            case .done(let item): return "done \(item.verb) \(item.action.path.escaped)"
            case .unchanged(let item, let why): return "unchanged \(item.action.path.escaped): \(why)"
            case .skipped(let item, let why): return "skipped \(item.verb) \(item.action.path.escaped): \(why)"
            case .warning(let message): return "warning \(message)"
            case .journalRotated(let report): return "journal rotated \(report.moved)"
            case .quarantinePurged(let report): return "quarantine purged \(report.entries)"
            case .committed(let report):
                return "committed " + report.counts.sorted { $0.verb.rawValue < $1.verb.rawValue }.map { "\($0.count) \($0.verb)" }.joined(separator: ", ")
            case .refused(let error): return "refused: \(error)"
            case .failed(let error): return "failed: \(error)"
            }
        }
    }

    @Test("apply from a policy file: opened, planned, each step, committed; the journal names the policy as the plan does")
    func applyFromPolicyFile() throws {
        let s = try Scratch()
        defer { s.remove() }
        let events = Events()
        let result = try StorageEngine.apply(s.request(), events: events.record)
        #expect(events.all == ["opened \(s.rootPath)", "planned 1", "done delete tmp/old", "committed 1 delete"])
        #expect(!s.exists("tmp/old") && s.exists("tmp/new"))
        let transactions = try #require(try StorageEngine.journal(root: s.root)).transactions
        #expect(transactions.count == 1)
        #expect(transactions.first?.policyPath == s.policyFile)
        #expect(result?.plan.fingerprint?.policyPath == s.policyFile)
    }

    @Test("a saved plan whose policy changed is refused as stale before the lock; nothing changes")
    func stalePlan() throws {
        let s = try Scratch()
        defer { s.remove() }
        let plan = try StorageEngine(policyFile: s.policyFile, root: s.root, planOptions: s.tree.options()).plan()
        try s.write(Self.policy.replacingOccurrences(of: "24h", with: "12h"))
        let events = Events()
        #expect {
            try StorageEngine.apply(s.request(.savedPlan(plan, path: s.folder + "/plan.json", policyFile: s.policyFile)), events: events.record)
        } throws: { error in
            guard case .stalePlan(let why) = error as? EngineError else { return false }
            return why.cause == .policyChanged && why.description == "plan is stale: policy changed since the plan was made; plan again"
        }
        #expect(events.all == ["opened \(s.rootPath)", "stale: plan is stale: policy changed since the plan was made; plan again"])
        #expect(s.exists("tmp/old"))
        #expect(try StorageEngine.journal(root: s.root)?.transactions.isEmpty ?? true)
    }

    @Test("a plan of another root is stale with the one message, whoever applies it")
    func staleRoot() throws {
        let s = try Scratch()
        let other = try Scratch()
        defer { s.remove(); other.remove() }
        let engine = try StorageEngine(policyFile: s.policyFile, root: s.root, planOptions: s.tree.options())
        let plan = try engine.plan()
        let expected = "plan is stale: root changed (it was made for another directory at \(plan.root))"
        let events = Events()
        // A saved plan names its root: applied to another, it is refused as not the caller's (65), before staleness.
        let mismatch = "the plan was made for the root \(plan.root), not \(other.rootPath) that this apply names; plan again for it"
        #expect {
            try StorageEngine.apply(other.request(.savedPlan(plan, path: "plan.json", policyFile: s.policyFile)), events: events.record)
        } throws: { error in
            guard case .planMismatch(let why) = error as? EngineError else { return false }
            return why.subject == .root && why.description == mismatch
        }
        #expect(events.all == ["opened \(other.rootPath)", "mismatch: \(mismatch)"])
        // The engine's own apply(plan) says the same.
        let otherEngine = try StorageEngine(policyFile: s.policyFile, root: other.root, planOptions: other.tree.options())
        #expect {
            try otherEngine.apply(plan)
        } throws: { error in
            guard case .stalePlan(let why) = error as? EngineError else { return false }
            return why.cause == .rootChanged(plannedRoot: plan.root) && why.description == expected
        }
        #expect(other.exists("tmp/old") && s.exists("tmp/old"))
    }

    @Test("the max-delete cap refuses after planning, before any change")
    func maxDeleteRefusal() throws {
        let s = try Scratch()
        defer { s.remove() }
        var request = s.request()
        request.maxDelete = .count(0)
        request.maxDeleteLabel = "--max-delete 0"
        let events = Events()
        #expect {
            try StorageEngine.apply(request, events: events.record)
        } throws: { error in
            guard case .apply(.refused) = error as? EngineError else { return false }
            return true
        }
        #expect(events.all == ["opened \(s.rootPath)", "planned 1",
                               "refused: apply refused: would delete 1 entries, more than --max-delete 0; nothing was changed"])
        #expect(s.exists("tmp/old"))
    }

    @Test("an interrupted transaction is rolled back first, then the policy is planned and applied")
    func recoveredFirst() throws {
        let s = try Scratch()
        defer { s.remove() }
        let id = try Self.interruptedTransaction(staging: "tmp/old", in: s)
        #expect(!s.exists("tmp/old"))
        let events = Events()
        _ = try StorageEngine.apply(s.request(), events: events.record)
        #expect(events.all == ["opened \(s.rootPath)", "recovered rolledBack \(id) (1 undone)", "planned 1",
                               "done delete tmp/old", "committed 1 delete"])
        #expect(!s.exists("tmp/old") && s.exists("tmp/new"))
    }

    @Test("a target modified since the plan is skipped with why; the rest commits")
    func skippedItem() throws {
        let s = try Scratch()
        defer { s.remove() }
        let engine = try StorageEngine(policyFile: s.policyFile, root: s.root, planOptions: s.tree.options())
        let plan = try engine.plan()
        try Data("nine byte".utf8).write(to: URL(fileURLWithPath: s.root + "/tmp/old"))
        let events = Events()
        let result = try StorageEngine.apply(s.request(.plan(plan, policy: engine.policy)), events: events.record)
        #expect(events.all == ["opened \(s.rootPath)", "planned 1",
                               "skipped delete tmp/old: modified since the plan (size 4 -> 9); kept", "committed "])
        #expect(result?.skipped.count == 1)
        #expect(s.exists("tmp/old"))
    }

    @Test("reportsEveryItem off: no done event, the skipped one still sent, the report holding both")
    func onlySkippedItems() throws {
        let s = try Scratch(policy: Self.policy.replacingOccurrences(of: "24h", with: "30m"))
        defer { s.remove() }
        let engine = try StorageEngine(policyFile: s.policyFile, root: s.root, planOptions: s.tree.options())
        let plan = try engine.plan()
        #expect(plan.actions.count == 2)
        try Data("nine byte".utf8).write(to: URL(fileURLWithPath: s.root + "/tmp/new"))
        var request = s.request(.plan(plan, policy: engine.policy))
        request.reportsEveryItem = false
        let events = Events()
        let result = try StorageEngine.apply(request, events: events.record)
        #expect(events.all == ["opened \(s.rootPath)", "planned 2",
                               "skipped delete tmp/new: modified since the plan (size 4 -> 9); kept", "committed 1 delete"])
        let report = try #require(result?.report)
        #expect(report.items.map { "\($0.action.path.escaped) \($0.outcome)" }.sorted()
                == ["tmp/new skipped(\"modified since the plan (size 4 -> 9); kept\")", "tmp/old done"])
        #expect(!s.exists("tmp/old") && s.exists("tmp/new"))
    }

    @Test("with the lock held and no waiting: opened, lock held, and nothing else")
    func lockHeld() throws {
        let s = try Scratch()
        defer { s.remove() }
        let state = try StateDirectory.open(root: try DirectoryHandle.open(root: s.root), create: true)!
        let held = try state.lock(wait: false)
        var request = s.request()
        request.waitForLock = false
        let events = Events()
        #expect {
            try StorageEngine.apply(request, events: events.record)
        } throws: { error in
            guard case .lockHeld = error as? EngineError else { return false }
            return true
        }
        #expect(events.all == ["opened \(s.rootPath)", "lock held"])
        #expect(s.exists("tmp/old"))
        withExtendedLifetime(held) {}
    }

    @Test("recover: nothing ever applied is nil (no .policyctl made); an interrupted transaction is rolled back once")
    func recover() throws {
        let s = try Scratch()
        defer { s.remove() }
        let none = Events()
        #expect(try StorageEngine.recover(root: s.root, events: none.record) == nil)
        #expect(none.all == ["opened \(s.rootPath)"])
        #expect(!s.exists(".policyctl"))

        let id = try Self.interruptedTransaction(staging: "tmp/old", in: s)
        let first = Events()
        let report = try #require(try StorageEngine.recover(root: s.root, events: first.record))
        #expect(first.all == ["opened \(s.rootPath)", "recovered rolledBack \(id) (1 undone)"])
        #expect(report.entries.count == 1)
        #expect(s.exists("tmp/old"))
        let second = Events()
        #expect(try StorageEngine.recover(root: s.root, events: second.record)?.nothingToDo == true)
        #expect(second.all == ["opened \(s.rootPath)"])
    }

    @Test("journal: nil before any apply, then each transaction with its outcome")
    func journal() throws {
        let s = try Scratch()
        defer { s.remove() }
        let before = Events()
        #expect(try StorageEngine.journal(root: s.root, events: before.record) == nil)
        #expect(before.all == ["opened \(s.rootPath)"])
        _ = try StorageEngine.apply(s.request())
        let id = try Self.interruptedTransaction(staging: "tmp/new", in: s)
        _ = try StorageEngine.recover(root: s.root)
        let reading = try #require(try StorageEngine.journal(root: s.root))
        #expect(reading.transactions.map(\.outcome) == [.committed, .rolledBack])
        #expect(reading.transactions.last?.id == id)
        #expect(reading.transactions.allSatisfy { $0.root == s.rootPath })
    }

    @Test("one path normalisation: './p.yaml' and 'p.yaml' are the same absolute path, '..' is kept")
    func pathNormalisation() throws {
        let cwd = try #require(PathNormalization.workingDirectory)
        let base = cwd == "/" ? "" : cwd
        #expect(PathNormalization.absolute("./p.yaml") == base + "/p.yaml")
        #expect(PathNormalization.absolute("p.yaml") == base + "/p.yaml")
        #expect(PathNormalization.absolute("a//./b/") == base + "/a/b")
        #expect(PathNormalization.absolute("/x/./y//z/") == "/x/y/z")
        #expect(PathNormalization.absolute("/x/../y") == "/x/../y")
        #expect(PathNormalization.absolute("/") == "/")
        #expect(Planner.absolute("./p.yaml") == PolicyLoader.absolute("./p.yaml"))
    }

    /// A transaction that staged `relative` and then stopped (as a crash leaves it); returns its id.
    static func interruptedTransaction(staging relative: String, in s: Scratch) throws -> String {
        let root = try DirectoryHandle.open(root: s.root)
        let state = try StateDirectory.open(root: root, create: true)!
        let lock = try state.lock(wait: false)
        let metadata = Transaction.Metadata(kind: .apply, policy: "scratch", policySHA256: nil, policyPath: nil,
                                            planFile: nil, rootPath: s.rootPath, actions: 1)
        let t = try Transaction.begin(metadata, lock: lock, journal: try state.openJournal())
        let path = RelativePath(relative)!
        let parent = try root.openDirectory(at: path.parent)
        let staged = t.intend(.stage(path: path, name: t.stagingName()), action: 0,
                              identity: try parent.status(of: path.lastComponent!).identity)
        try t.makeDurable()
        try t.perform(staged)
        return t.id
    }
}
