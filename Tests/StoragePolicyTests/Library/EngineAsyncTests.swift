// The async engine an app calls: a plan cancelled 30 ms after it starts throws CancellationError within
// 300 ms; an apply cancelled through a Cancellation token rolls back and journals 'cancelled' with nothing
// left for recover; the event stream ends with the commit; the synchronous apply's non-Sendable handler gets
// every event on the calling thread. Trees under /tmp; the largest has 20,000 entries.
import Foundation
import Testing
import Synchronization
@testable import StoragePolicy
@testable import StoragePolicyModel
import TreeFixture

@Suite("Library: async calls and cancellation") struct EngineAsyncTests {
    static let policy = CancellationTests.policy

    @Test("a plan of 20,000 entries cancelled 30 ms after it starts throws CancellationError within 300 ms")
    func cancelPlanQuickly() async throws {
        let tree = try Tree {
            Dir("tmp") { for d in 0..<1000 { Dir("d\(d)") { for f in 0..<20 { File("f\(f)", size: 0) } } } }
        }
        defer { tree.remove() }
        var options = tree.options()
        // 50 µs per entry: the walk takes far longer than 30 ms on any machine, one directory (20 entries) 1 ms,
        // which a loaded machine may stretch tenfold and still stop well within the 300 ms. The cancel comes from
        // the walk's own thread once 600 entries (30 ms of stats) are done, and the walk's last stat is what is
        // timed: a `Task.sleep` in the test resumed when the runner's threads were free, which a full parallel
        // suite on two cores delayed past the whole walk (the plan then finished uncancelled).
        let lastStat = Mutex<ContinuousClock.Instant?>(nil)
        let stats = Mutex(0)
        let planning = Mutex<Task<Plan, any Error>?>(nil)
        let cancelledAt = Mutex<ContinuousClock.Instant?>(nil)
        options.willStat = { _ in
            usleep(50)
            lastStat.withLock { $0 = ContinuousClock.now }
            guard stats.withLock({ $0 += 1; return $0 }) >= 600, let task = planning.withLock({ $0 }) else { return }
            // One walk thread cancels, once: the instant checked and set under one lock.
            let first = cancelledAt.withLock { at in
                guard at == nil else { return false }
                at = ContinuousClock.now
                return true
            }
            if first { task.cancel() }
        }
        let engine = try StorageEngine(yaml: Self.policy, root: tree.root, planOptions: options)
        let task = Task { try await engine.plan() }
        planning.withLock { $0 = task }
        let result = await task.result
        let cancelled = try #require(cancelledAt.withLock { $0 }, "the walk never reached 600 entries")
        let took = (lastStat.withLock { $0 } ?? cancelled) - cancelled
        #expect(took < .milliseconds(300), "the walk went on \(took) after the cancel")
        switch result {
        case .success: Issue.record("the plan finished: it was not cancelled")
        case .failure(let error): #expect(error is CancellationError, "\(error)")
        }
    }

    @Test("PlanningRun.cancel() stops the walk: plan() throws CancellationError") func planningRunCancel() async throws {
        let tree = try Tree { Dir("tmp") { for d in 0..<100 { Dir("d\(d)") { for f in 0..<30 { File("f\(f)", size: 0) } } } } }
        defer { tree.remove() }
        var options = tree.options()
        options.willStat = { _ in usleep(100) }
        let run = try StorageEngine(yaml: Self.policy, root: tree.root, planOptions: options).startPlan()
        run.cancel()
        await #expect(throws: CancellationError.self) { try await run.plan() }
    }

    @Test("an async apply cancelled through its token after the first group throws CancellationError, journals 'cancelled', leaves nothing to recover")
    func cancelApplyWithToken() async throws {
        let tree = try Tree {
            Dir("tmp") {
                for d in 0..<10 { Dir("z\(d)", age: .days(2)) { File("inside", age: .days(2)) } }
                for f in 0..<300 { File(String(format: "f%03d", f), age: .days(2), size: 0) }
            }
        }
        defer { tree.remove() }
        let engine = try StorageEngine(yaml: Self.policy, root: tree.root, planOptions: tree.options())
        let token = StorageEngine.Cancellation()
        await #expect(throws: CancellationError.self) {
            try await engine.apply(cancellation: token) { event in
                if case .applying = event { token.cancel() }
            }
        }
        #expect(token.isCancelled)
        let names = Set(Manifest.take(tree.root).map { String(decoding: $0.path, as: UTF8.self) })
        for d in 0..<10 { #expect(names.contains("tmp/z\(d)/inside")) }
        #expect(names.filter { $0.hasPrefix("tmp/f") }.count == 54)
        let journal = try engine.journal()
        #expect(journal.map(\.reason) == ["cancelled"])
        #expect(try await engine.recover().nothingToDo)
    }

    @Test("a task cancelled before recover starts throws CancellationError; recover is never stopped halfway")
    func recoverCancelledBefore() async throws {
        let tree = try Tree { Dir("tmp") { File("old", age: .days(2)) } }
        defer { tree.remove() }
        let engine = try StorageEngine(yaml: Self.policy, root: tree.root, planOptions: tree.options())
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await engine.recover()
        }
        await #expect(throws: CancellationError.self) { try await task.value }
    }

    @Test("events() streams the launch apply in order and finishes after the commit") func eventStream() async throws {
        let tree = try Tree { Dir("tmp") { File("old", age: .days(2)); File("new", age: .hours(1)) } }
        defer { tree.remove() }
        let engine = try StorageEngine(yaml: Self.policy, root: tree.root, planOptions: tree.options())
        var names: [String] = []
        for try await event in engine.events() {
            switch event {
            case .opened: names.append("opened")
            case .planned(let plan): names.append("planned \(plan.lines)")
            case .done(let item): names.append("done \(item.action.path)")
            case .committed: names.append("committed")
            default: break
            }
        }
        #expect(names == ["opened", "planned [\"delete tmp/old\"]", "done tmp/old", "committed"])
        #expect(try engine.journal().map(\.outcome) == [.committed])
    }

    @Test("the synchronous apply's handler (not Sendable) mutates a captured var and sees every event on the calling thread")
    func handlerOnCallingThread() throws {
        // 3,000 entries: the walk's progress (every 2,048 entries, from its threads) is relayed to this thread.
        let tree = try Tree { Dir("tmp") { for f in 0..<3000 { File("f\(f)", age: f % 2 == 0 ? .days(2) : .hours(1), size: 0) } } }
        defer { tree.remove() }
        var request = ApplyRequest(root: tree.root, source: .policy(try PolicyLoader.load(yaml: Self.policy, file: "p.yaml").policy))
        request.planOptions = tree.options(threads: 2)
        let caller = pthread_self()
        var seen: [String] = []
        var elsewhere = 0
        let result = try StorageEngine.apply(request) { event in
            if pthread_equal(pthread_self(), caller) == 0 { elsewhere += 1 }
            switch event {
            case .planning: if seen.last != "planning" { seen.append("planning") }
            case .opened, .planned, .committed: seen.append("\(event)".prefix { $0 != "(" }.description)
            default: break
            }
        }
        #expect(elsewhere == 0)
        #expect(seen == ["opened", "planning", "planned", "committed"])
        #expect(result?.counts == [.delete: 1500])
    }
}
