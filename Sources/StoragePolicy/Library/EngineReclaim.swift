// Making room on request, Android's StorageManager.allocateBytes for a policy: "make room before this 2 GB
// download". Evicts only through the policy's pressure rules (so only regenerable quota rules' files, never
// past their minAge and keep), until that many bytes more than now are free, and says how far short it fell.

@_spi(Layers) import StoragePolicyPlan

/// What ``StorageEngine/reclaimPlan(bytes:)`` expects, and (after ``StorageEngine/reclaim(bytes:)``) what it did.
public struct ReclaimOutcome: Sendable {
    /// The bytes asked for, beyond the free space before the run.
    public var requested: Int64
    /// The bytes the plan's deletes free (what the policy deletes anyway counts too).
    public var expected: Int64
    /// How far `expected` falls short of `requested` (0: it is enough).
    public var shortfall: Int64 { max(0, requested - expected) }
    /// The plan made for it.
    public var plan: Plan
    /// The apply's result; nil for ``StorageEngine/reclaimPlan(bytes:)``, or when there was nothing to do.
    public var result: ApplyResult?
}

extension StorageEngine {
    /// The plan that frees `bytes` beyond the current free space through the pressure rules, whatever their
    /// freeBelow says. Changes nothing. A policy without pressure rules frees only what it frees anyway.
    public func reclaimPlan(bytes: Int64) throws(EngineError) -> ReclaimOutcome {
        var engine = self
        engine.planOptions.reclaimBytes = bytes
        let plan = try engine.plan()
        let expected = plan.actions.reduce(Int64(0)) { if case .delete = $1.kind { $0 + $1.bytes } else { $0 } }
        return ReclaimOutcome(requested: bytes, expected: expected, plan: plan, result: nil)
    }

    /// ``reclaimPlan(bytes:)``, then applied as one journaled transaction (as ``apply(_:)`` does).
    public func reclaim(bytes: Int64) throws(EngineError) -> ReclaimOutcome {
        var outcome = try reclaimPlan(bytes: bytes)
        guard !outcome.plan.actions.isEmpty else { return outcome }
        outcome.result = try apply(outcome.plan)
        return outcome
    }
}
