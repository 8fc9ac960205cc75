// `StorageEngine.inUse`, the app's list of busy files (issue 26: what an iOS app, with no process table, tells
// the engine): kept when planning, and asked again just before each delete at apply time, through the public
// property alone. Trees under /tmp, a few entries.
import Foundation
import Testing
import Synchronization
import StoragePolicy
import TreeFixture

@Suite("Library: the app's busy files (engine.inUse)") struct EngineInUseTests {
    static let policy = CancellationTests.policy

    static func tree() throws -> Tree {
        try Tree {
            Dir("tmp") {
                File("old.dat", age: .days(2))
                File("busy.dat", age: .days(2))
                Dir("download", age: .days(2)) { File("part.dat", age: .days(2)) }
            }
        }
    }

    @Test("a file the app says is busy, and a folder holding one, are kept by the plan and named as such")
    func keptWhenPlanning() throws {
        let tree = try Self.tree()
        defer { tree.remove() }
        var engine = try StorageEngine(yaml: Self.policy, root: tree.root, planOptions: tree.options())
        #expect(engine.inUse == nil)
        engine.inUse = { ["tmp/busy.dat", "tmp/download/part.dat"].contains($0.escaped) }
        let plan = try engine.plan()
        #expect(plan.actions.map { "\($0.kind.name) \($0.path.escaped)" } == ["delete tmp/old.dat"])
        #expect(plan.skipped.map { "\($0.path.escaped): \($0.reason)" }.sorted() == [
            "tmp/busy.dat: in use: the app says it is busy",
            "tmp/download: holds tmp/download/part.dat, which the app says is busy; kept",
        ])
    }

    @Test("a file that became busy after the plan is kept by the apply, the rest applied")
    func askedAgainAtApply() async throws {
        let tree = try Self.tree()
        defer { tree.remove() }
        let busy = Mutex(false)
        var engine = try StorageEngine(yaml: Self.policy, root: tree.root, planOptions: tree.options())
        engine.inUse = { path in busy.withLock { $0 } && path.escaped == "tmp/busy.dat" }
        let plan = try await engine.plan()
        #expect(plan.actions.map(\.path.escaped).sorted() == ["tmp/busy.dat", "tmp/download", "tmp/old.dat"])
        busy.withLock { $0 = true }   // a download started between the plan and the apply
        let result = try await engine.apply(plan)
        #expect(result.report.skipped.map(\.action.path.escaped) == ["tmp/busy.dat"])
        #expect(result.report.skipped.first?.outcome == .skipped("in use: the app says it is busy"))
        let names = Set(Manifest.take(tree.root).map { String(decoding: $0.path, as: UTF8.self) })
        #expect(names.contains("tmp/busy.dat") && !names.contains("tmp/old.dat") && !names.contains("tmp/download"))
    }
}
