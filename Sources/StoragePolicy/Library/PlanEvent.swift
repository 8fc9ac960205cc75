// What plan, audit and explain report while they run, in order, to the handler their caller passes: the
// library never prints. The CLI renders these (a progress line, the result); tests assert the sequence.

@_spi(Layers) import StoragePolicyPlan
@_spi(Layers) import StoragePolicyEvaluation
@_spi(Layers) import StoragePolicyReports

/// One step of ``StorageEngine/plan(only:events:)``, ``StorageEngine/audit(only:baseline:failOn:events:)`` or
/// ``StorageEngine/explain(_:events:)``, in the order it happened. Nothing is printed: the caller renders it.
public enum PlanEvent: Sendable {
    /// Walk progress: entries seen so far and the directory being read. Sent from the walking threads, one
    /// call at a time, now and then (how often depends on timing), always before the result.
    case planning(PlanProgress)
    /// A path-scoped audit set aside the baseline entries for paths it does not judge: they are neither new
    /// nor fixed in this run. `kept` entries remain. Sent before the walk; not sent without a restriction.
    case baselineNarrowed(kept: Int, setAside: Int)
    /// The plan is made (for an audit, the plan its findings come from).
    case planned(Plan)
    /// The audit's findings, after ``planned(_:)``.
    case audited(AuditReport)
    /// What the rules say about the path, and what the plan does to it.
    case explained(Explanation)
}
