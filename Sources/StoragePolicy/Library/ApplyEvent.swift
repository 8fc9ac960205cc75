// What an apply (and a recover) reports while it runs, in order, to the handler its caller passes: the
// library never prints. The CLI renders these as text or JSON log lines; tests assert the sequence.

@_spi(Layers) import StoragePolicyPlan
@_spi(Layers) import StoragePolicyEvaluation
@_spi(Layers) import StoragePolicyApply

/// One step of ``StorageEngine/apply(_:events:)`` or ``StorageEngine/recover(root:stateDirectory:waitForLock:events:)``,
/// in the order it happened. Nothing is printed: the caller renders what it wants.
public enum ApplyEvent: Sendable {
    /// The root was opened; its canonical path (as the journal records it). Always the first event.
    case opened(root: String)
    /// Something about the state folder worth saying (a `ROOT/.policyctl` ignored for a state folder elsewhere).
    case stateNotice(String)
    /// Another run holds the root's lock; this one waits for it (its pid when the lock file says).
    case waitingForLock(pid: Int32?)
    /// Another run holds the lock and waiting was off: nothing is done (the call then throws
    /// ``EngineError/lockHeld(pid:)``).
    case lockHeld(pid: Int32?)
    /// Recovery, run first under the lock, finished or rolled back an earlier interrupted apply, or found
    /// damaged journal records. Not sent when it had nothing to do.
    case recovered(RecoveryReport)
    /// The saved plan was refused as stale (another root, or its policy changed): nothing is done (the
    /// call then throws ``EngineError/stalePlan(_:)``).
    case stalePlan(StalePlan)
    /// The plan holds an action its policy never makes (edited after it was made): nothing is done (the call
    /// then throws ``EngineError/planRefused(_:)``).
    case planRefused(InvalidPlanAction)
    /// A saved plan made with another policy file or for another root than the caller named; nothing was done.
    case planMismatch(PlanMismatch)
    /// Planning progress: entries seen so far and the directory being read.
    case planning(PlanProgress)
    /// The plan that is about to be applied (made now, or the saved one that passed its checks).
    case planned(Plan)
    /// The plan changes nothing: there is no transaction.
    case nothingToDo
    /// The caller's confirmation declined the plan: nothing was changed.
    case cancelled
    /// Apply progress: steps done of the total.
    case applying(done: Int, total: Int)
    /// One step carried out as planned.
    case done(ApplyReport.Item)
    /// One step that needed no change (already as wanted), and why.
    case unchanged(ApplyReport.Item, reason: String)
    /// One step left alone: its target changed or vanished since the plan, or a call on it failed
    /// (`item.error` then names the path, errno and call). The rest of the apply goes on.
    case skipped(ApplyReport.Item, reason: String)
    /// A warning from the apply (a purge left something behind...).
    case warning(String)
    /// The journal passed 16 MiB: older transactions' records moved to a history file (JournalRotation), or history
    /// files past the policy's `journal: { history }` limit were removed.
    case journalRotated(JournalRotation.Report)
    /// Quarantined deletes purged for good (their window ended, free-space pressure, `quarantine --purge`), as a
    /// journaled transaction of its own.
    case quarantinePurged(QuarantinePurgeReport)
    /// The transaction committed.
    case committed(ApplyReport)
    /// Refused before anything changed: the `max-delete` cap or the runtime budget (``ApplyError/refused(_:)``).
    case refused(ApplyError)
    /// Failed: before changing anything, rolled back, or a rollback that could not finish (run recover).
    case failed(ApplyError)
}
