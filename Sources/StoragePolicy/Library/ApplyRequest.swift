// Everything one apply needs, as `policyctl apply` and the engine's own `apply` calls pass it: what to
// apply (a policy to plan now, or a saved plan to check), where, and the limits. A value; no I/O here.

@_spi(Layers) import StoragePolicyModel
@_spi(Layers) import StoragePolicyPlan
@_spi(Layers) import StoragePolicyEvaluation
@_spi(Layers) import StoragePolicyFileSystem

/// What ``StorageEngine/apply(_:events:)`` carries out, and how.
public struct ApplyRequest: Sendable {
    /// What is applied.
    public enum Source: Sendable {
        /// The policy in this YAML file, read and planned under the lock (after recovery).
        case policyFile(String)
        /// This policy, planned under the lock (after recovery).
        case policy(Policy)
        /// A plan made earlier by `policy`: refused when stale (another root, or another policy).
        case plan(Plan, policy: Policy)
        /// A plan saved to `path` (`policyctl plan --out`), judged by the policy file `policyFile` the caller
        /// names (a plan file carries no authority of its own: whoever could write it could have made it with
        /// their own policy). Refused when the plan names another policy file or root, when stale against that
        /// policy (read once, hash-checked), and when any action is not one that policy makes.
        case savedPlan(Plan, path: String, policyFile: String)
    }

    /// The root as given; opened safely, recorded canonical (realpath).
    public var root: String
    public var source: Source
    /// Refuse a plan deleting more than this (overrides the policy's `max-delete`).
    public var maxDelete: DeleteLimit?
    /// How `maxDelete` is named in the refusal (`--max-delete 5`); `maxDelete N` when nil.
    public var maxDeleteLabel: String?
    /// The cap when neither `maxDelete` nor the policy's `max-delete` sets one (policyctl's default for
    /// unattended runs, `apply --yes`: 50% with a floor of 100), and how the refusal names it.
    public var defaultMaxDelete: DeleteLimit?
    public var defaultMaxDeleteLabel: String?
    /// No cap at all, not even the policy's (`--max-delete none`).
    public var unlimitedDeletes = false
    /// Past this instant, stop and roll back (file deletes already made stay made).
    public var deadline: ContinuousClock.Instant?
    /// How the deadline is named in the refusal (`--max-runtime 30m`).
    public var deadlineLabel: String?
    /// An error on any one entry rolls everything back instead of skipping that entry.
    public var allOrNothing = false
    /// Wait for another run holding the lock (true), or send ``ApplyEvent/lockHeld(pid:)`` and throw.
    public var waitForLock = true
    /// The lock and journal outside the root (see ``StorageEngine/stateDirectory``).
    public var stateDirectory: String?
    /// How the plan is made, for the policy sources.
    public var planOptions = PlanOptions()
    /// The policy a saved plan's fingerprint names when that is a compiled Swift policy (its file is the
    /// script, whose bytes it carries as `sourceBytes`): used instead of reading that file as YAML.
    public var compiledPolicy: Policy?
    /// Every delete staged (the older design), for benchmarks only.
    public var stagesEveryDelete = false
    /// Every file delete unlinked by the run's own thread just after its check, not by the unlink workers:
    /// for benchmarks only.
    public var unlinksInPlace = false
    /// Whether a `.done` and an `.unchanged` event is sent for each such step once the run is over (the
    /// returned report holds them all either way; `.skipped` is always sent). A caller that only prints counts
    /// turns it off: made and sent for every step, they were a tenth of a large apply's own work after its
    /// changes (Docs/performance.md).
    public var reportsEveryItem = true
    /// Asked with the plan and the root's path before anything changes, under the lock; false cancels.
    /// nil applies without asking.
    public var confirm: (@Sendable (Plan, String) -> Bool)?
    /// Set, the apply stops at its next check (between directories of the plan's walk, between groups of the
    /// apply) and throws ``EngineError/cancelled(transaction:)``: what SIGINT and SIGTERM do to `policyctl apply`,
    /// and what ``StorageEngine/Cancellation`` sets.
    package var cancellation: CancellationFlag?

    public init(root: String, source: Source) {
        self.root = root; self.source = source
    }
}
