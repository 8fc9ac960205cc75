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
    /// Not from a trash: an undo puts a quarantined delete back from `slot` of its transaction's quarantine (the
    /// folder its commit named: `folder`), into the folder it was taken from (`parent`, as recorded).
    case quarantine(slot: QuarantineSlot, folder: FolderIdentity, parent: FolderRecord?)
}

/// A run's steps, kept compactly: the plan's own actions (the plan's array, not a copy) with the order the
/// steps run them in, and only for the steps that have one: a verb other than their action's, a restore
/// cleanup, a unit link, an action changed since (a path rewritten by a directory this run moved). A million-
/// action apply held a copy of every action in its step (the 112-byte value with the step's own fields, about
/// 0.16 KB a step); now a step is made from these parts when it is read.
package struct StepList: RandomAccessCollection, MutableCollection {
    /// The parts, in one box: a run reads its steps through a class's property (`ledger.steps[action: i]`),
    /// which copies the list, and a copy of six arrays and tables was six retains and six releases, taken
    /// three to eighteen times a step (a tenth of a file delete's bookkeeping on the run's thread). A copy of
    /// the box is one; a change copies the box first when it is shared, as the arrays themselves would.
    private final class Parts {
        // Read and changed by the run's thread alone (a list is not Sendable): no dynamic exclusivity checks.
        @exclusivity(unchecked) var actions: [Action]
        @exclusivity(unchecked) var order: [UInt32]?
        @exclusivity(unchecked) var verbs: [Int: StepVerb] = [:]
        @exclusivity(unchecked) var restores: [Int: RestoreCleanup] = [:]
        @exclusivity(unchecked) var links: [Int: (record: Int?, carriedBy: Int?)] = [:]
        @exclusivity(unchecked) var changed: [Int: Action] = [:]

        init(actions: [Action], order: [UInt32]?) {
            self.actions = actions
            self.order = order
        }

        func copy() -> Parts {
            let out = Parts(actions: actions, order: order)
            (out.verbs, out.restores, out.links, out.changed) = (verbs, restores, links, changed)
            return out
        }
    }
    private var parts: Parts

    /// The plan's actions (or, for a run not made from a plan, the steps' own, in step order).
    package var actions: [Action] { parts.actions }
    /// Step i runs `actions[order[i]]`; nil: step i runs `actions[i]`.
    package var order: [UInt32]? { parts.order }
    /// Verbs that are not `StepVerb(action.kind)`, by step.
    package var verbs: [Int: StepVerb] { parts.verbs }

    /// The steps of a run made from a plan: `order` (indices of `actions`) is the order they run in.
    package init(actions: [Action], order: [UInt32]) {
        parts = Parts(actions: actions, order: order)
    }

    /// Steps as they are (trash, restore, undo: a few each).
    package init(_ steps: [Step]) {
        parts = Parts(actions: steps.map(\.action), order: nil)
        for (i, step) in steps.enumerated() { setParts(i, step) }
    }

    package var startIndex: Int { 0 }
    package var endIndex: Int { parts.order?.count ?? parts.actions.count }

    /// The index in `actions` of step `i`'s action as planned.
    @inline(__always) private func planned(_ i: Int) -> Int {
        if let order = parts.order { Int(order[i]) } else { i }
    }

    /// Step `i`'s action, as it is now (its path rewritten when it lies under a directory this run moved).
    package func action(_ i: Int) -> Action {
        if !parts.changed.isEmpty, let action = parts.changed[i] { return action }
        return parts.actions[planned(i)]
    }

    /// Step `i`'s action lent, not copied: reading a field or two of it (`steps[action: i].kind`) costs no
    /// retain of its path, rule and reason, which a copy takes.
    package subscript(action i: Int) -> Action {
        _read {
            if !parts.changed.isEmpty, let action = parts.changed[i] { yield action } else { yield parts.actions[planned(i)] }
        }
    }

    /// Every step is its planned delete: no other verb, no record carried with an item, no path rewritten. Such a
    /// run goes in descending path order from its first step to its last (Applier.order).
    package var deletesOnly: Bool {
        parts.verbs.isEmpty && parts.links.isEmpty && parts.restores.isEmpty && parts.changed.isEmpty
            && parts.actions.withUnsafeBufferPointer { $0.allSatisfy(\.isDelete) }
    }

    /// True when step `i` moves an entry into a trash folder. Read in place, as `verb` is: through the lent
    /// subscript the action was copied and destroyed, once a step a group (RunTrashFolders.needed).
    package func isTrashMove(_ i: Int) -> Bool {
        inPlace(i) { a in if case .trash = a.kind { true } else { false } }
    }

    /// The phase step `i` runs in (Applier.phase), read in place: StepGroups asks it of every step.
    package func phase(_ i: Int) -> Applier.Phase {
        inPlace(i) { a in Applier.phase(of: a) }
    }

    /// `body` of step `i`'s action as it is now, without a copy of it.
    private func inPlace<T>(_ i: Int, _ body: (borrowing Action) -> T) -> T {
        if !parts.changed.isEmpty, let action = parts.changed[i] { return body(action) }
        let k = planned(i)
        return parts.actions.withUnsafeBufferPointer { a in body(a[k]) }
    }

    /// The fields of step `i` other than its action, without making the step.
    package func record(_ i: Int) -> Int? { parts.links.isEmpty ? nil : parts.links[i]?.record }
    package func carriedBy(_ i: Int) -> Int? { parts.links.isEmpty ? nil : parts.links[i]?.carriedBy }
    package func verb(_ i: Int) -> StepVerb {
        if !parts.verbs.isEmpty, let verb = parts.verbs[i] { return verb }
        // Read in place: through the lent subscript the kind was copied out and destroyed (400 instructions a
        // step, which every file delete's step paid to be made).
        return inPlace(i) { a in a.isDelete ? .delete : StepVerb(a.kind) }
    }

    /// Step `i`'s verb and the bytes it frees when it is a delete: what a done step counts in the report, read in
    /// place (two lent reads and a verb's lookup were 1,400 instructions a file delete on the run's thread).
    func countedFacts(_ i: Int) -> (verb: StepVerb, freed: Int64) {
        guard parts.verbs.isEmpty, parts.changed.isEmpty else {
            let action = action(i)
            return (verb(i), action.isDelete ? action.bytes : 0)
        }
        let k = planned(i)
        return parts.actions.withUnsafeBufferPointer { a in
            a[k].isDelete ? (.delete, a[k].bytes) : (StepVerb(a[k].kind), 0)
        }
    }

    package subscript(i: Int) -> Step {
        get {
            let action = action(i)
            let link = parts.links.isEmpty ? nil : parts.links[i]
            return Step(action: action, verb: verb(i), restore: parts.restores.isEmpty ? nil : parts.restores[i],
                        record: link?.record, carriedBy: link?.carriedBy)
        }
        set {
            let parts = unique()
            parts.changed[i] = newValue.action == parts.actions[planned(i)] ? nil : newValue.action
            setParts(i, newValue)
        }
    }

    /// The box, copied first when another list shares it (value semantics, as the arrays had).
    private mutating func unique() -> Parts {
        if !isKnownUniquelyReferenced(&parts) { parts = parts.copy() }
        return parts
    }

    private mutating func setParts(_ i: Int, _ step: Step) {
        let parts = unique()
        parts.verbs[i] = step.verb == StepVerb(step.action.kind) ? nil : step.verb
        parts.restores[i] = step.restore
        parts.links[i] = step.record == nil && step.carriedBy == nil ? nil : (step.record, step.carriedBy)
    }
}
