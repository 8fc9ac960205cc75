// The time budget of one apply run (--max-runtime): checked after each step made here and after each batch of
// background unlinks; a run past it stops and rolls back, naming the budget as the caller spelled it. A cancelled
// run stops the same way, between groups (ApplyRun.Cancelled).

@_spi(Layers) import StoragePolicyFileSystem

package struct RunDeadline {
    /// Thrown where the run notices it is past its budget; the rollback reason says which budget.
    package struct Exceeded: Error {}

    let instant: ContinuousClock.Instant?
    /// How the budget is named, e.g. `--max-runtime 30s`.
    package let label: String?
    private let clock = ContinuousClock()

    package init(_ options: ApplyOptions) {
        instant = options.deadline
        label = options.deadlineLabel
    }

    var hasPassed: Bool {
        guard let instant else { return false }
        return clock.now >= instant
    }

    package func check() throws(Exceeded) {
        if hasPassed { throw Exceeded() }
    }

    /// The rollback reason of a run that stopped at the budget: noticed between steps (`Exceeded`), or by a tree
    /// walk (a whole-tree delete's check) inside its loop. Nil for any other error.
    func cause(of error: any Error) -> String? {
        switch error {
        case is Exceeded: "ran past " + (label ?? "its time budget")
        case let e as FileSystemError where e.operation == .pastDeadline: "ran past " + (label ?? "its time budget")
        default: nil
        }
    }
}

extension ApplyRun {
    /// Thrown between groups once the run's cancellation flag is set (the other way a run stops early, beside
    /// its deadline); the rollback reason is `reason`.
    package struct Cancelled: Error {
        /// What the journal's `rollback` record says (Docs/journal.md): the marker of a cancelled transaction.
        package static let reason = "cancelled"
    }
}
