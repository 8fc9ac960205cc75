// The steps of one run and what became of each. Every part of the run reads the steps and records outcomes
// here: a skip or a failure is journaled (a `skip` record) and noted so the steps that depend on it are skipped
// too; a done step counts in the report. It also remembers what the run moved and touched, which later checks
// and later paths depend on.

@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyPlan

package final class StepLedger {
    // Only the run's thread uses a ledger (the unlink workers never see it), and no access to its state overlaps
    // another: the stored state skips the dynamic exclusivity checks, two to five of them per step.
    /// A step failed midway and what it had already changed could not be put back: the run rolls back.
    package struct StepNotReverted: Error, CustomStringConvertible {
        package var failure: FileSystemError
        package var why: String
        package var description: String { "\(failure); the step's earlier changes could not be undone (\(why))" }
    }

    package let transaction: Transaction
    private let allOrNothing: Bool
    /// The plan's steps; a path under a directory this transaction renamed or trashed is rewritten to where it is now.
    @exclusivity(unchecked) private(set) var steps: StepList
    @exclusivity(unchecked) package var report: ApplyReport
    /// Paths with a descendant this transaction renamed, staged or created.
    @exclusivity(unchecked) private(set) var touched: Set<RelativePath> = []
    /// The folder `touch` marked last, with all its ancestors.
    @exclusivity(unchecked) private var lastTouched: RelativePath?
    /// Directories this transaction renamed or trashed, in order: later steps inside them follow them.
    @exclusivity(unchecked) private var moved: [(from: RelativePath, to: RelativePath)] = []
    /// Directories a skipped mkdir did not create: steps at or under them are skipped too.
    @exclusivity(unchecked) private(set) var notCreated: [RelativePath: String] = [:]
    /// Directories holding an entry whose delete or trash move failed: deleting or trashing them is skipped.
    @exclusivity(unchecked) private(set) var holdsFailure: [RelativePath: RelativePath] = [:]

    /// The report keeps the steps' actions as they were planned (the plan's own array when the steps were
    /// made from a plan) and the order the steps run them in, not a copy of each.
    package init(steps: StepList, transaction: Transaction, allOrNothing: Bool) {
        self.steps = steps
        self.transaction = transaction
        self.allOrNothing = allOrNothing
        report = ApplyReport()
        report.transaction = transaction.id
        report.outcomes = ApplyReport.Outcomes(actions: steps.actions, order: steps.order, verbs: steps.verbs)
    }

    // MARK: Outcomes

    func skip(_ i: Int, _ reason: String) {
        report.outcomes.set(i, .skipped(reason))
        report.outcomes.setDestination(i, nil)
        let step = steps[i]
        transaction.skip(action: i, path: step.action.path, verb: step.verb, reason: reason)
        if case .mkdir = step.action.kind { notCreated[step.action.path] = reason }
        skipRecord(of: i)
    }

    /// A trash item kept keeps its record: the record's own step is skipped too, naming the item.
    private func skipRecord(of i: Int) {
        guard let r = steps.record(i) else { return }
        let reason = "the record of \(steps.action(i).path.escaped), which is kept; kept with it"
        report.outcomes.set(r, .skipped(reason))
        transaction.skip(action: r, path: steps.action(r).path, verb: steps.verb(r), reason: reason)
    }

    /// Skips a step because a call on its entry failed: recorded with the errno, and what depends on it is
    /// skipped later. With `--all-or-nothing` the error is rethrown instead, and the run rolls back.
    package func fail(_ i: Int, _ error: FileSystemError) throws(FileSystemError) {
        if allOrNothing { throw error }
        let step = steps[i]
        let path = step.action.path
        let reason = error.path == path ? "\(error.errno) [\(error.operation.name)]" : error.description
        report.outcomes.set(i, .skipped(reason))
        report.outcomes.setDestination(i, nil)
        report.outcomes.setError(i, error)
        transaction.skip(action: i, path: path, verb: step.verb, reason: reason, error: error)
        if case .mkdir = step.action.kind { notCreated[path] = reason }
        skipRecord(of: i)
        if Self.removes(step.action) {
            // Its folder still holds it: a delete of the folder planned after it would take it along.
            var p = path
            while !p.isRoot {
                p = p.parent
                if holdsFailure[p] == nil { holdsFailure[p] = path }
            }
        }
    }

    package func refuse(_ i: Int, _ refusal: StepVerifier.Refusal) throws(FileSystemError) {
        switch refusal {
        case .reason(let reason): skip(i, reason)
        case .failed(let error): try fail(i, error)
        }
    }

    package func done(_ i: Int) {
        report.outcomes.set(i, .done)
        let (verb, freed) = steps.countedFacts(i)
        report.counts[verb] += 1
        report.bytesFreed += freed
        if let r = steps.record(i) { done(r) }
    }

    /// A delete carried out into the quarantine: counted as a delete, its bytes held, not freed.
    func doneHeld(_ i: Int) {
        report.outcomes.set(i, .done)
        let (verb, held) = steps.countedFacts(i)
        report.counts[verb] += 1
        report.quarantined += 1
        report.bytesQuarantined += held
        if let r = steps.record(i) { doneHeld(r) }
    }

    /// A change of step `i` failed after `made` (its earlier changes) were made: the step is skipped, its
    /// earlier changes undone, or the run stops (a run-level error, or any error with --all-or-nothing).
    func settle(_ failure: FileSystemError, of i: Int, after made: ArraySlice<Intent>, _ intent: Intent) throws {
        if case .unlink = intent.change, failure.errno == .isDirectory {
            // Replaced by a directory between the check and the unlink: not deleted.
            skip(i, "replaced by a directory meanwhile; kept")
            return
        }
        let scope = FailureScope(failure)
        guard scope.isItemLevel, !(allOrNothing && scope == .entry) else { throw failure }
        // A step of several changes (a trash move, a restore) goes back to how it was before it is skipped.
        if !made.isEmpty, let why = transaction.revert(Array(made)) {
            throw StepNotReverted(failure: failure, why: why)
        }
        switch scope {
        case .vanished: skip(i, "vanished meanwhile (\(failure))")
        case .appeared: skip(i, "\(Self.target(of: intent.change).escaped) appeared meanwhile; nothing replaced")
        default: try fail(i, failure)
        }
    }

    /// The entry a change creates or moves into place: what "appeared meanwhile" names.
    private static func target(of change: Change) -> RelativePath {
        switch change {
        case .rename(_, let to): to
        default: change.path
        }
    }

    /// A delete or a trash move: the entry leaves its folder.
    package static func removes(_ action: Action) -> Bool {
        switch action.kind {
        case .delete, .trash: true
        default: false
        }
    }

    // MARK: What the run moved and touched

    /// A directory step `i` moved (renamed, trashed, restored): later steps inside it follow it.
    func movedDirectory(of i: Int) {
        if let to = report.outcomes.destination(i), steps[action: i].type == .directory {
            moved.append((steps[action: i].path, to))
        }
    }

    /// Rewrites step `i`'s path when it lies inside a directory this run moved; returns the step.
    /// Renames and trash moves run before deletes: a delete inside a directory moved meanwhile follows it.
    @discardableResult
    func followMoves(_ i: Int) -> Step {
        // Returned as made: held in a variable first, the step was copied and the original destroyed (250
        // instructions a file delete, in a run that moved nothing).
        if moved.isEmpty { return steps[i] }
        var step = steps[i]
        var rewritten = false
        for (from, to) in moved.reversed() {
            if let inner = step.action.path.relative(to: from), !inner.isRoot { step.action.path = to.appending(inner); rewritten = true }
        }
        if rewritten { steps[i] = step }
        return step
    }

    /// Marks every ancestor of the paths a change moved or created: their contents are no longer as planned.
    func touch(_ change: Change) {
        switch change {
        case .stage(let p, _), .mkdir(let p), .create(let p, _, _), .unlink(let p, _), .layoutFile(let p, _, _, _), .symlink(let p, _): touch(p)
        case .rename(let from, let to): touch(from); touch(to)
        case .quarantine(let p, _, _, _, _), .unquarantine(_, _, let p): touch(p)
        case .setxattr, .times, .permissions, .purge: break
        }
    }

    func touch(_ path: RelativePath) {
        // The folder's chain is in `touched` already when the last step touched the same folder.
        if let lastTouched, path.isChild(of: lastTouched) { return }
        lastTouched = path.parent
        var p = path
        while !p.isRoot {
            p = p.parent
            if !touched.insert(p).inserted { break }
        }
    }
}
