// What an apply run carries out: a plan action (or a trash item to put back) with how it is named and what
// goes with it. Built by Applier and Undo, read by every part of the run.

@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyPlan

/// One unit of work: a plan action, or a trash item to put back.
package struct Step {
    package var action: Action
    /// The action's name, `restore`, or what an undo does.
    package var verb: StepVerb
    /// For `restore`: what else goes when the item is put back.
    package var restore: RestoreCleanup?
    /// A trash item's delete: the step of its record (`.trashinfo`, index entry), whose change this step makes
    /// with its own, both staged, as one unit (Units.swift).
    var record: Int? = nil
    /// A record deleted with its item: the item's step, which carries it out (this step journals nothing).
    var carriedBy: Int? = nil
}

/// The bookkeeping a trashed item carries, removed when it is restored.
package enum RestoreCleanup {
    /// The FreeDesktop `.trashinfo` file.
    case trashInfo(RelativePath)
    /// The app-layout xattrs (stamp and origin) with their current values.
    case attributes(stamp: [UInt8]?, origin: [UInt8]?)
}

/// A run's steps, kept compactly: the plan's own actions (the plan's array, not a copy) with the order the
/// steps run them in, and only for the steps that have one: a verb other than their action's, a restore
/// cleanup, a unit link, an action changed since (a path rewritten by a directory this run moved). A million-
/// action apply held a copy of every action in its step (the 112-byte value with the step's own fields, about
/// 0.16 KB a step); now a step is made from these parts when it is read.
package struct StepList: RandomAccessCollection, MutableCollection {
    /// The plan's actions (or, for a run not made from a plan, the steps' own, in step order).
    package private(set) var actions: [Action]
    /// Step i runs `actions[order[i]]`; nil: step i runs `actions[i]`.
    package private(set) var order: [UInt32]?
    /// Verbs that are not `StepVerb(action.kind)`, by step.
    package private(set) var verbs: [Int: StepVerb] = [:]
    private var restores: [Int: RestoreCleanup] = [:]
    private var links: [Int: (record: Int?, carriedBy: Int?)] = [:]
    /// Actions changed since the run began (a path under a directory the run moved), by step.
    private var changed: [Int: Action] = [:]

    /// The steps of a run made from a plan: `order` (indices of `actions`) is the order they run in.
    package init(actions: [Action], order: [UInt32]) {
        self.actions = actions
        self.order = order
    }

    /// Steps as they are (trash, restore, undo: a few each).
    package init(_ steps: [Step]) {
        actions = steps.map(\.action)
        order = nil
        for (i, step) in steps.enumerated() { setParts(i, step) }
    }

    package var startIndex: Int { 0 }
    package var endIndex: Int { order?.count ?? actions.count }

    /// The index in `actions` of step `i`'s action as planned.
    @inline(__always) private func planned(_ i: Int) -> Int {
        if let order { Int(order[i]) } else { i }
    }

    /// Step `i`'s action, as it is now (its path rewritten when it lies under a directory this run moved).
    package func action(_ i: Int) -> Action {
        if !changed.isEmpty, let action = changed[i] { return action }
        return actions[planned(i)]
    }

    /// The fields of step `i` other than its action, without making the step.
    package func record(_ i: Int) -> Int? { links.isEmpty ? nil : links[i]?.record }
    package func carriedBy(_ i: Int) -> Int? { links.isEmpty ? nil : links[i]?.carriedBy }
    package func verb(_ i: Int) -> StepVerb {
        if !verbs.isEmpty, let verb = verbs[i] { return verb }
        return StepVerb(action(i).kind)
    }

    package subscript(i: Int) -> Step {
        get {
            let action = action(i)
            let link = links.isEmpty ? nil : links[i]
            return Step(action: action, verb: verbs.isEmpty ? StepVerb(action.kind) : verbs[i] ?? StepVerb(action.kind),
                        restore: restores.isEmpty ? nil : restores[i], record: link?.record, carriedBy: link?.carriedBy)
        }
        set {
            changed[i] = newValue.action == actions[planned(i)] ? nil : newValue.action
            setParts(i, newValue)
        }
    }

    private mutating func setParts(_ i: Int, _ step: Step) {
        verbs[i] = step.verb == StepVerb(step.action.kind) ? nil : step.verb
        restores[i] = step.restore
        links[i] = step.record == nil && step.carriedBy == nil ? nil : (step.record, step.carriedBy)
    }
}
