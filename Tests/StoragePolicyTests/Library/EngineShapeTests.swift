// The shapes an app reaches for: URL initialisers that plan exactly what the String ones do, EngineError as a
// LocalizedError with one case per cause (an untrusted state folder, a refused undo, a stale plan's cause),
// and timestamps as Dates that say the same instant as the engine's nanoseconds. Trees under /tmp only.
import Foundation
import Testing
import StoragePolicy
import TreeFixture

@Suite("Library: app-shaped API") struct EngineShapeTests {
    static let policy = StorageEngineTests.policy

    static func blockingPlan(_ engine: StorageEngine) throws -> Plan { try engine.plan() }

    @Test("the URL initialisers plan and apply what the String ones do") func urlForms() throws {
        let tree = try Tree { Dir("tmp") { File("old", age: .days(2)); File("new", age: .hours(1)) } }
        defer { tree.remove() }
        let policyFile = tree.root + ".policy.yaml"
        try Self.policy.write(toFile: policyFile, atomically: false, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: policyFile) }
        let byString = try StorageEngine(policyFile: policyFile, root: tree.root, planOptions: tree.options())
        let byURL = try StorageEngine(policyFile: URL(fileURLWithPath: policyFile), root: URL(fileURLWithPath: tree.root),
                                      planOptions: tree.options())
        let byPolicy = StorageEngine(policy: byString.policy, root: URL(fileURLWithPath: tree.root, isDirectory: true),
                                     planOptions: tree.options())
        #expect(byURL.root == tree.root)
        #expect(byURL.rootURL.path(percentEncoded: false).hasPrefix(tree.root))
        let plan = try Self.blockingPlan(byString)
        #expect(plan.lines == ["delete tmp/old"])
        #expect(try Self.blockingPlan(byURL) == plan)
        #expect(try Self.blockingPlan(byPolicy).lines == plan.lines)
        let result = try byURL.apply(plan)
        #expect(result.counts == [.delete: 1])
    }

    @Test("a policy file URL that does not exist is an invalid policy naming the path") func missingPolicyURL() {
        let url = URL(fileURLWithPath: "/tmp/policyctl-no-such-policy-\(Tree.currentTimeNs()).yaml")
        do {
            _ = try StorageEngine(policyFile: url, root: URL(fileURLWithPath: "/tmp"))
            Issue.record("expected an error")
        } catch {
            guard case .invalidPolicy = error else { Issue.record("wrong case: \(error)"); return }
            #expect(error.errorDescription?.contains(url.path(percentEncoded: false)) == true)
            #expect(error.recoverySuggestion != nil)
        }
    }

    @Test("EngineError is a LocalizedError: the description, what went wrong and the fix") func localized() throws {
        // A state folder others can write is refused, never read: .untrustedState, with the fix to give.
        let tree = try Tree { Dir(".policyctl") {} }
        defer { tree.remove() }
        #expect(chmod(tree.root + "/.policyctl", 0o777) == 0)
        let engine = try StorageEngine(yaml: Self.policy, root: tree.root, planOptions: tree.options())
        var caught: EngineError?
        do { _ = try engine.journal() } catch { caught = error }
        let error = try #require(caught)
        guard case .untrustedState(let untrusted) = error else { Issue.record("wrong case: \(error)"); return }
        #expect(untrusted.path == ".policyctl")
        let localized: any LocalizedError = error
        #expect(localized.errorDescription == error.description)
        #expect(error.description == "\(untrusted); nothing was changed")
        #expect(localized.failureReason == "The state folder .policyctl \(untrusted.problem).")
        #expect(localized.recoverySuggestion == untrusted.fix)
        // Foundation's bridge reads the same text.
        #expect((error as NSError).localizedDescription == error.description)
        let stale: EngineError = .stalePlan(StalePlan(.policyChanged))
        #expect(stale.description == "plan is stale: policy changed since the plan was made; plan again; nothing was changed")
        #expect(stale.recoverySuggestion == "Make the plan again with the policy and root you apply it to.")
        #expect(EngineError.lockHeld(pid: 42).recoverySuggestion?.contains("waitForLock") == true)
    }

    @Test("undo of a transaction the journal does not have is .undoRefused, nothing changed") func undoRefused() throws {
        let tree = try Tree { Dir("tmp") { File("old", age: .days(2)); File("new", age: .hours(1)) } }
        defer { tree.remove() }
        let engine = try StorageEngine(yaml: Self.policy, root: tree.root, planOptions: tree.options())
        _ = try engine.apply()
        do {
            _ = try StorageEngine.undo("tx-no-such", session: .init(root: tree.root)) { _ in true }
            Issue.record("expected a refusal")
        } catch {
            guard case .undoRefused(let refused) = error else { Issue.record("wrong case: \(error)"); return }
            #expect(refused.message.contains("tx-no-such"))
            #expect(error.description == "undo refused: \(refused.message)")
        }
        let names = Manifest.take(tree.root).map { String(decoding: $0.path, as: UTF8.self) }.filter { $0.hasPrefix("tmp/") }
        #expect(names == ["tmp/new"])
    }

    @Test("timestamps are Dates of the same instant as the engine's nanoseconds") func dates() throws {
        let tree = try Tree { Dir("tmp") { File("old", age: .days(2)) } }
        defer { tree.remove() }
        let at = Date(timeIntervalSince1970: 1_800_000_000.25)
        var options = PlanOptions(evaluationTime: at, threads: 1)
        #expect(options.evaluationTime == at)
        #expect(options.now == 1_800_000_000_250_000_000)
        options.evaluationTime = nil
        #expect(options.now == nil)
        let engine = try StorageEngine(yaml: Self.policy, root: tree.root, planOptions: tree.options())
        let plan = try Self.blockingPlan(engine)
        #expect(plan.evaluatedAt == Date(nanosecondsSinceEpoch: tree.now))
        #expect(abs(plan.evaluatedAt.timeIntervalSince1970 - Double(tree.now) / 1e9) < 1e-6)
        let status = try #require(try DirectoryHandle.open(root: tree.root).statusIfPresent(of: FileName("tmp")!))
        #expect(status.modificationTime == Date(nanosecondsSinceEpoch: status.modificationTimeNs))
        #expect(status.identity.modificationTime == status.modificationTime)
        // Clamped (out-of-range) nanoseconds give far dates, never a trap.
        #expect(Date(nanosecondsSinceEpoch: .max).timeIntervalSince1970 > 9e9)
        #expect(Date(nanosecondsSinceEpoch: .min).timeIntervalSince1970 < -9e9)
        #expect(Date.distantFuture.nanosecondsSinceEpoch == Int64.max || Date.distantFuture.nanosecondsSinceEpoch > 0)
        #expect(Date(timeIntervalSince1970: 1e30).nanosecondsSinceEpoch == .max)
    }

    @Test("a stale plan and a mismatched one carry their cause as a value") func typedCauses() {
        #expect(StalePlan(.rootChanged(plannedRoot: "/srv/a")).description == "plan is stale: root changed (it was made for another directory at /srv/a)")
        #expect(StalePlan(.policyUnreadable(path: nil)).description == "plan is stale: policy file (unknown) cannot be read")
        let mismatch = PlanMismatch(.policyFile, recorded: "/a.yaml", named: "/b.yaml")
        #expect(mismatch.description == "the plan was made with the policy /a.yaml, not /b.yaml that this apply names; plan again with it")
        #expect(EngineError.planMismatch(mismatch).failureReason == "\(mismatch).")
    }
}
