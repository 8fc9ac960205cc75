// StorageEngine.apply's handler is not Sendable, so every event, the walk's progress included, must reach it
// on the thread that called apply: the walk runs on other threads and leaves its progress for this one to send.
import Testing
import TreeFixture
@testable import StoragePolicy
@testable import StoragePolicyModel

@Suite("Library: apply progress") struct ApplyProgressThreadTests {
    @Test("planning progress reaches a non-Sendable handler on the calling thread, before the plan, on a four-thread walk")
    func progressOnTheCallingThread() throws {
        // Four folders of 2,100 fresh files under the rule's scope: every listing crosses a 2,048-entry mark,
        // and four threads walk them.
        let tree = try Tree {
            Dir("tmp") {
                File("old", age: .days(2), size: 4)
                for d in 0..<4 { Dir("d\(d)") { for i in 0..<2_100 { File("f\(i)") } } }
            }
        }
        defer { tree.remove() }
        let policy = try PolicyLoader.load(yaml: EngineEventTests.policy, file: "policy.yaml").policy
        var request = ApplyRequest(root: tree.root, source: .policy(policy))
        request.planOptions = tree.options(threads: 4)
        let caller = pthread_self()
        // Plain local state, mutated without a lock: sound only because every call comes on this thread.
        var log: [String] = []
        var offThread = 0
        let result = try StorageEngine.apply(request) { event in
            switch event {
            case .planning(let progress):
                if pthread_equal(pthread_self(), caller) == 0 { offThread += 1 }
                log.append("planning \(progress.entriesScanned >= 2_048)")
            case .planned: log.append("planned")
            default: break
            }
        }
        #expect(offThread == 0)
        #expect(log.contains("planning true"))
        #expect(!log.contains("planning false"))
        #expect(log.last == "planned")
        #expect(log.firstIndex(of: "planned") == log.count - 1)
        #expect(result?.report.items.count == 1)
        #expect(access(tree.root + "/tmp/old", F_OK) != 0)
    }
}
