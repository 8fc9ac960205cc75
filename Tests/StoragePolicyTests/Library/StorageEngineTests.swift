// The StorageEngine facade: async planning with progress returns the sync plan, typed errors keep the
// policy location, stale plans and held locks are refused before anything changes. Trees under /tmp only.
import Testing
import Synchronization
import StoragePolicy
import TreeFixture

@Suite("Library: StorageEngine") struct StorageEngineTests {
    /// Enough entries in scope for a progress report (one every 2,048 entries); `keep` is outside every scope.
    static func bigTree() throws -> Tree {
        try Tree {
            Dir("tmp") {
                for i in 0..<3000 { File("f\(i).dat", age: i % 3 == 0 ? .days(2) : .hours(1), size: 0) }
            }
            Dir("keep") {
                for i in 0..<3000 { File("k\(i).dat", size: 0) }
            }
        }
    }

    /// The synchronous plan (in an async context, `plan()` picks the async overload).
    static func blockingPlan(_ engine: StorageEngine) throws -> Plan { try engine.plan() }

    static let policy = """
        version: 1
        name: scratch
        rules:
          - name: tmp-expiry
            path: tmp
            expire: { after: 24h }
        """

    @Test("async plan reports progress from its own thread and returns the same plan as sync") func asyncPlan() async throws {
        let tree = try Self.bigTree()
        defer { tree.remove() }
        let engine = try StorageEngine(yaml: Self.policy, root: tree.root, planOptions: tree.options())
        let sync = try Self.blockingPlan(engine)
        let reports = Mutex<[PlanProgress]>([])
        let async = try await engine.plan { step in reports.withLock { $0.append(step) } }
        #expect(async == sync)
        #expect(sync.actions.count == 1000)
        #expect(sync.summary.entriesScanned == 3002)
        let seen = reports.withLock { $0 }
        #expect(!seen.isEmpty)
        #expect(seen.allSatisfy { $0.entriesScanned >= 2048 && $0.entriesScanned <= 3002 })
    }

    @Test("startPlan streams progress, then the plan equals the sync one") func streamedPlan() async throws {
        let tree = try Self.bigTree()
        defer { tree.remove() }
        let engine = try StorageEngine(yaml: Self.policy, root: tree.root, planOptions: tree.options())
        let run = engine.startPlan()
        var steps = 0
        for await step in run.progress {
            #expect(step.entriesScanned > 0)
            steps += 1
        }
        let plan = try await run.plan()
        #expect(steps >= 1)
        #expect(plan == (try Self.blockingPlan(engine)))
    }

    @Test("an invalid policy is a typed error carrying file:line:col") func invalidPolicy() throws {
        do {
            _ = try StorageEngine(yaml: "version: 1\nname: x\nrules:\n  - name: a\n    path: tmp\n    expire: { afer: 1h }\n",
                                  file: "app.yaml", root: "/tmp")
            Issue.record("expected an error")
        } catch {
            guard case .invalidPolicy(let load) = error else { Issue.record("wrong case: \(error)"); return }
            #expect(error.location == PolicyLocation(file: "app.yaml", line: 6, column: 15))
            #expect(load.diagnostics.first?.description.hasPrefix("app.yaml:6:15: ") == true)
            #expect(!error.needsRecovery)
        }
    }

    @Test("a root that cannot be opened is a file-system error; nothing is created") func missingRoot() throws {
        let engine = try StorageEngine(yaml: Self.policy, root: "/tmp/policyctl-no-such-root-\(Tree.currentTimeNs())")
        #expect(throws: EngineError.self) { try engine.plan() }
        do { _ = try engine.apply() } catch {
            guard case .fileSystem(let fs) = error else { Issue.record("wrong case: \(error)"); return }
            #expect(fs.errno == .noSuchFile)
        }
        #expect(throws: EngineError.self) { try engine.journal() }
    }

    @Test("a plan made for another root is refused as stale before anything changes") func stalePlan() throws {
        let a = try Tree { Dir("tmp") { File("old", age: .days(2)) } }
        let b = try Tree { Dir("tmp") { File("old", age: .days(2)) } }
        defer { a.remove(); b.remove() }
        let planForA = try StorageEngine(yaml: Self.policy, root: a.root, planOptions: a.options()).plan()
        let engineB = try StorageEngine(yaml: Self.policy, root: b.root, planOptions: b.options())
        do {
            _ = try engineB.apply(planForA)
            Issue.record("expected a stale plan")
        } catch {
            guard case .stalePlan(let why) = error else { Issue.record("wrong case: \(error)"); return }
            #expect(why.description.hasPrefix("plan is stale: root changed (it was made for another directory"))
        }
        let other = try StorageEngine(yaml: Self.policy.replacingOccurrences(of: "24h", with: "12h"), root: a.root)
        #expect(throws: EngineError.self) { try other.apply(planForA) }
        #expect(Manifest.take(b.root).contains { String(decoding: $0.path, as: UTF8.self) == "tmp/old" })
        #expect(Manifest.take(a.root).contains { String(decoding: $0.path, as: UTF8.self) == "tmp/old" })
    }

    @Test("with waitForLock off, a held lock is reported at once and nothing changes") func lockHeld() throws {
        let tree = try Tree { Dir("tmp") { File("old", age: .days(2)) } }
        defer { tree.remove() }
        let handle = try DirectoryHandle.open(root: tree.root)
        let held = try StateDirectory.open(root: handle, create: true)!.lock(wait: false)
        var engine = try StorageEngine(yaml: Self.policy, root: tree.root, planOptions: tree.options())
        engine.waitForLock = false
        do {
            _ = try engine.apply()
            Issue.record("expected the lock to be held")
        } catch {
            guard case .lockHeld = error else { Issue.record("wrong case: \(error)"); return }
        }
        withExtendedLifetime(held) {}
        #expect(Manifest.take(tree.root).contains { String(decoding: $0.path, as: UTF8.self) == "tmp/old" })
    }

    @Test("apply plans, applies and journals; recover then has nothing to do") func applyAndRecover() throws {
        let tree = try Tree { Dir("tmp") { File("old", age: .days(2)); File("new", age: .hours(1)) } }
        defer { tree.remove() }
        let engine = try StorageEngine(yaml: Self.policy, root: tree.root, planOptions: tree.options())
        #expect(try engine.journal().isEmpty)
        let result = try engine.apply()
        #expect(result.plan.lines == ["delete tmp/old"])
        #expect(result.counts == [.delete: 1])
        #expect(result.recovery.nothingToDo)
        #expect(try engine.recover().nothingToDo)
        #expect(try engine.journal().map(\.outcome) == [.committed])
        let names = Manifest.take(tree.root).map { String(decoding: $0.path, as: UTF8.self) }.filter { $0.hasPrefix("tmp/") }
        #expect(names == ["tmp/new"])
    }

    @Test("async apply runs off the caller's thread and journals like sync apply") func asyncApply() async throws {
        let tree = try Tree { Dir("tmp") { File("old", age: .days(2)); File("new", age: .hours(1)) } }
        defer { tree.remove() }
        let engine = try StorageEngine(yaml: Self.policy, root: tree.root, planOptions: tree.options())
        let result = try await engine.apply()
        #expect(result.plan.lines == ["delete tmp/old"])
        #expect(result.counts == [.delete: 1])
        #expect(try engine.journal().map(\.id) == [result.transaction!])
    }
}
