// A one-way "stop" shared by whoever asks (a Task being cancelled, an app's expiration handler, policyctl's
// SIGINT/SIGTERM handler) and whoever looks (the walker between directories, the apply loop between groups).
// One atomic Bool: setting it is safe from any thread and never blocks; looking costs one load.
import Synchronization

/// Set once, never cleared: the call it was handed to stops at its next check.
package final class CancellationFlag: Sendable {
    private let state = Atomic<Bool>(false)

    package init() {}

    /// Asks the call to stop. Idempotent; returns at once.
    package func cancel() { state.store(true, ordering: .releasing) }

    /// True once `cancel()` was called.
    package var isCancelled: Bool { state.load(ordering: .acquiring) }
}
