// Why a plan made earlier can no longer be applied, as a value: callers (the engine's errors, the CLI's
// messages, an app's alert) switch on the cause instead of reading a sentence. The sentence is the
// description, byte for byte what `policyctl apply` has always printed.

@_spi(Layers) import StoragePolicyFileSystem

/// Why a plan is stale: it was made for another directory, or by another policy than the one at hand.
public struct StalePlan: Error, Sendable, Equatable, CustomStringConvertible {
    /// What changed since the plan was made.
    public enum Cause: Sendable, Equatable {
        /// The plan carries no fingerprint (it was not made by `policyctl plan --out` or ``StorageEngine``).
        case noFingerprint
        /// The root is another directory (device and inode) than the one at `plannedRoot` the plan was made for.
        case rootChanged(plannedRoot: String)
        /// The policy file the plan names (nil: none recorded) cannot be read, so it cannot be compared.
        case policyUnreadable(path: String?)
        /// The policy file the plan names is gone.
        case policyGone(path: String, FileSystemError)
        /// The policy's bytes or name differ from the ones the plan was made with.
        case policyChanged
        /// A what-if plan (`plan --at`): its ages were measured against `asOf`, not now, so it is never applied.
        case evaluatedAsOf(String)
    }

    /// What changed.
    public let cause: Cause

    package init(_ cause: Cause) { self.cause = cause }

    /// The problem and the fix, as `policyctl apply` prints it.
    public var description: String {
        switch cause {
        case .noFingerprint: "plan has no fingerprint; make it with 'policyctl plan --out FILE' (or StorageEngine.plan())"
        case .rootChanged(let root): "plan is stale: root changed (it was made for another directory at \(root))"
        case .policyUnreadable(let path): "plan is stale: policy file \(path ?? "(unknown)") cannot be read"
        case .policyGone(let path, let error): "plan is stale: policy file \(path) is gone: \(error.errno)"
        case .policyChanged: "plan is stale: policy changed since the plan was made; plan again"
        case .evaluatedAsOf(let asOf):
            "plan was evaluated as of \(PrintableText.escapingControls(asOf)) (plan --at), not now: a what-if plan is never applied; plan again without --at"
        }
    }
}
