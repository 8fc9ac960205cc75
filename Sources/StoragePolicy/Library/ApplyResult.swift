// What `StorageEngine.apply` did: the recovery it ran first, the plan it applied and the per-action report.
// A value for the caller to show as it likes; the library never prints.

@_spi(Layers) import StoragePolicyPlan
@_spi(Layers) import StoragePolicyApply

/// The outcome of a successful ``StorageEngine`` apply (a failed one throws ``EngineError``).
public struct ApplyResult: Sendable {
    /// What recovery of an earlier, interrupted apply did before this one began (usually nothing).
    public var recovery: RecoveryReport
    /// The plan that was applied.
    public var plan: Plan
    /// Each action's outcome (done, unchanged, skipped and why), the counts and the bytes freed.
    public var report: ApplyReport

    /// Creates a result; the engine makes these.
    package init(recovery: RecoveryReport, plan: Plan, report: ApplyReport) {
        self.recovery = recovery; self.plan = plan; self.report = report
    }

    /// The journal's id of the transaction, or nil when there was nothing to do.
    public var transaction: String? { report.transaction }
    /// Actions carried out, per action name (`delete`, `rename`, `mkdir`, `setxattr`, ...).
    public var counts: ActionCounts { report.counts }
    /// Targets left alone because they changed since the plan, vanished, or were already as wanted.
    public var skipped: [ApplyReport.Item] { report.skipped }
    /// Targets skipped because a call on them failed (EACCES, EPERM...), each with its error; the rest was applied.
    public var failed: [ApplyReport.Item] { report.failed }
}
