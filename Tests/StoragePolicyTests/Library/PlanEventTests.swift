// Plan, audit and explain in process: StorageEngine sends the exact events `policyctl plan`, `audit` and
// `explain` render (progress, a path-scoped audit's set-aside baseline entries, the result), in order.
// Trees under /tmp only, removed even when a test fails.
import Synchronization
import Testing
import TreeFixture
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyEvaluation
@testable import StoragePolicyReports

@Suite("Library: plan events") struct PlanEventTests {
    /// One 24 h expiry of tmp, as StorageEngineTests use.
    static let policy = StorageEngineTests.policy

    /// A root with one expired file and one fresh one under tmp.
    static func tree() throws -> Tree {
        try Tree {
            Dir("tmp") {
                File("old", age: .days(2), size: 4)
                File("new", age: .hours(1), size: 4)
            }
        }
    }

    static func engine(_ tree: Tree) throws -> StorageEngine {
        try StorageEngine(yaml: policy, root: tree.root, planOptions: tree.options())
    }

    /// Collects events as one line each; progress is counted apart (how often it comes depends on timing),
    /// and a progress event after the result is recorded as an error line.
    final class Events: Sendable {
        private let state = Mutex<(lines: [String], finished: Bool)>(([], false))
        var all: [String] { state.withLock { $0.lines } }

        func record(_ event: PlanEvent) {
            state.withLock { s in
                switch event {
                case .planning:
                    if s.finished { s.lines.append("progress after the result") }
                case .baselineNarrowed(let kept, let setAside):
                    s.lines.append("baseline: \(kept) kept, \(setAside) set aside")
                case .planned(let plan):
                    s.finished = true
                    s.lines.append("planned " + plan.actions.map { "\($0.kind.name) \($0.path.escaped)" }.joined(separator: ", "))
                case .audited(let report):
                    s.lines.append("audited " + report.findings.map { "\($0.path.escaped)\($0.isKnown ? " (known)" : "")" }.joined(separator: ", ")
                                   + "; fixed \(report.fixedSinceBaseline.map(\.path))")
                case .explained(let explanation):
                    s.finished = true
                    s.lines.append("explained \(explanation.path.escaped): " + explanation.actions.map { $0.kind.name }.joined(separator: ", "))
                }
            }
        }
    }

    @Test("plan sends its progress, then the plan it returns, and nothing after it")
    func plan() throws {
        let tree = try Self.tree()
        defer { tree.remove() }
        let events = Events()
        let plan = try Self.engine(tree).plan(only: nil, events: events.record)
        #expect(events.all == ["planned delete tmp/old"])
        #expect(plan.actions.map(\.path) == [RelativePath("tmp/old")!])
    }

    @Test("a path-scoped audit sets aside the baseline entries for paths it does not judge, before the walk")
    func auditRestricted() throws {
        let tree = try Self.tree()
        defer { tree.remove() }
        let engine = try Self.engine(tree)
        let whole = try engine.audit()
        let known = Baseline(policy: "scratch", findings: whole.findings)
        let baseline = Baseline(policy: "scratch", entries: known.entries + [
            Baseline.Entry(fingerprint: "0000", rule: "tmp-expiry", path: "elsewhere/gone"),
        ])
        let events = Events()
        let report = try engine.audit(only: PathRestriction([RelativePath("tmp")!]), baseline: baseline, events: events.record)
        // The entry outside tmp is neither new nor fixed: it was set aside, so it is not reported fixed.
        #expect(events.all == ["baseline: 1 kept, 1 set aside", "planned delete tmp/old", "audited tmp/old (known); fixed []"])
        #expect(report.passes)
    }

    @Test("an audit of the whole tree sets nothing aside: a baseline entry no longer found is reported fixed")
    func auditWhole() throws {
        let tree = try Self.tree()
        defer { tree.remove() }
        let baseline = Baseline(policy: "scratch", entries: [Baseline.Entry(fingerprint: "0000", rule: "tmp-expiry", path: "elsewhere/gone")])
        let events = Events()
        let report = try Self.engine(tree).audit(only: nil, baseline: baseline, events: events.record)
        #expect(events.all == ["planned delete tmp/old", "audited tmp/old; fixed [\"elsewhere/gone\"]"])
        #expect(!report.passes)
    }

    @Test("explain sends the explanation it returns")
    func explain() throws {
        let tree = try Self.tree()
        defer { tree.remove() }
        let events = Events()
        let explanation = try Self.engine(tree).explain(RelativePath("tmp/old")!, events: events.record)
        #expect(events.all == ["explained tmp/old: delete"])
        #expect(explanation.path == RelativePath("tmp/old")!)
    }
}
