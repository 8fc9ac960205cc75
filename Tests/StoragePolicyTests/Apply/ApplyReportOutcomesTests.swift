// ApplyReport keeps one byte per step and the plan's actions (Outcomes), not an Item per step: the items read
// from it are the ones recorded, in step order, with the verb, reason, destination and error of each.
import Testing
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyPlan
@testable import StoragePolicyApply

@Suite("Apply report: compact outcomes, items as recorded") struct ApplyReportOutcomesTests {
    static let actions = (0..<6).map { Action(kind: $0 == 4 ? .rename(to: RelativePath("r\($0)")!) : .delete, path: RelativePath("p\($0)")!, rule: "r", reason: "why") }

    @Test("steps in the plan's order: each item is its planned action with its outcome; skipped and failed in step order")
    func recorded() {
        let order = [5, 4, 3, 2, 1, 0]
        var outcomes = ApplyReport.Outcomes(actions: Self.actions, order: order.map { UInt32($0) }, verbs: [2: .restore])
        let error = FileSystemError(.unlinkat, path: RelativePath("p4")!, errno: .notPermitted)
        outcomes.set(0, .done)
        outcomes.set(1, .done)
        outcomes.setDestination(1, RelativePath("r4")!)
        outcomes.set(2, .unchanged("already there"))
        outcomes.set(3, .skipped("vanished meanwhile"))
        outcomes.set(4, .skipped("EPERM"))
        outcomes.setError(4, error)
        var report = ApplyReport()
        report.outcomes = outcomes
        let items = report.items
        #expect(items.map(\.action.path) == order.map { Self.actions[$0].path })
        #expect(items.map(\.outcome) == [.done, .done, .unchanged("already there"), .skipped("vanished meanwhile"), .skipped("EPERM"), .skipped("not reached")])
        #expect(items.map(\.verb) == [.delete, .rename, .restore, .delete, .delete, .delete])
        #expect(items[1].destination == RelativePath("r4")! && items.enumerated().allSatisfy { $0.offset == 1 || $0.element.destination == nil })
        #expect(report.skipped.map(\.action.path) == [RelativePath("p2")!, RelativePath("p1")!, RelativePath("p0")!])
        #expect(report.failed.count == 1 && report.failed[0].error == error && report.failed[0].action.path == RelativePath("p1")!)
        #expect(Array(report.lazyItems).map(\.outcome) == items.map(\.outcome))
    }

    @Test("items set are read back as set, and appended ones after them (trash and restore add what they refused)")
    func setItems() {
        var report = ApplyReport()
        let error = FileSystemError(.open, path: RelativePath("p0")!, errno: .permissionDenied)
        report.items = [ApplyReport.Item(action: Self.actions[0], outcome: .skipped("EACCES"), error: error),
                        ApplyReport.Item(action: Self.actions[4], verb: .restore, outcome: .done, destination: RelativePath("back")!)]
        report.items += [ApplyReport.Item(action: Self.actions[1], outcome: .skipped("not in the trash folder t"))]
        let items = report.items
        #expect(items.count == 3)
        #expect(items.map(\.action) == [Self.actions[0], Self.actions[4], Self.actions[1]])
        #expect(items.map(\.verb) == [.delete, .restore, .delete])
        #expect(items[0].error == error && items[1].destination == RelativePath("back")! && items[2].outcome == .skipped("not in the trash folder t"))
        #expect(report.skipped.count == 2 && report.failed.count == 1)
    }
}
