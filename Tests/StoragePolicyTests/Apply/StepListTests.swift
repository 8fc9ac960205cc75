// StepList (Step.swift): a run's steps made from the plan's actions by index, equal to the copies they replace.
import Testing
@_spi(Layers) @testable import StoragePolicyApply
@_spi(Layers) @testable import StoragePolicyFileSystem
@_spi(Layers) @testable import StoragePolicyPlan

@Suite("Step list") struct StepListTests {
    private func action(_ kind: Action.Kind, _ p: String) -> Action {
        Action(kind: kind, path: RelativePath(p)!, rule: "r", reason: "why", identity: EntryIdentity(device: 1, inode: 2, size: 3, modificationTimeNs: 4), type: .regular)
    }

    @Test("steps made from the plan's actions and an order are the copies the run used to hold; changes stay per step")
    func fromPlan() {
        let actions = [action(.delete, "a/x"), action(.rename(to: RelativePath("b2")!), "b"), action(.mkdir, "c")]
        var list = StepList(actions: actions, order: [2, 1, 0])
        #expect(list.count == 3)
        #expect(list.map(\.action) == [actions[2], actions[1], actions[0]])
        #expect(list.map(\.verb) == [.mkdir, .rename, .delete])
        #expect(list.allSatisfy { $0.record == nil && $0.carriedBy == nil && $0.restore == nil })
        // A path rewritten by a moved directory, and a unit link: only that step changes, the plan's actions do not.
        list[2].action.path = RelativePath("a2/x")!
        list[0].record = 2
        list[2].carriedBy = 0
        #expect(list[2].action.path == RelativePath("a2/x")! && list.action(2).path == RelativePath("a2/x")!)
        #expect(list[1].action == actions[1] && list.actions == actions)
        #expect(list.record(0) == 2 && list.carriedBy(2) == 0 && list.record(1) == nil)
        // Set back to what was planned: nothing is kept aside.
        list[2].action.path = RelativePath("a/x")!
        #expect(list[2].action == actions[0])
    }

    @Test("steps given as they are keep their verbs and restores")
    func asGiven() {
        let steps = [Step(action: action(.trash(to: RelativePath("t")!), "p"), verb: .restore, restore: .attributes(stamp: [1], origin: nil)),
                     Step(action: action(.delete, "q"), verb: .delete)]
        let list = StepList(steps)
        #expect(list.order == nil && list.verbs == [0: .restore])
        #expect(list[0].verb == .restore && list.verb(0) == .restore && list[1].verb == .delete)
        if case .attributes(let stamp, nil) = list[0].restore { #expect(stamp == [1]) } else { Issue.record("restore lost") }
        #expect(list[1].restore == nil)
    }
}
