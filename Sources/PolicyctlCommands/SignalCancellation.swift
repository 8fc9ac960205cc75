// SIGINT and SIGTERM as a cancellation, for the commands that walk or apply (plan, audit, apply): the first
// signal sets the run's flag, the walk stops before its next directory, an apply stops between groups and rolls
// back as `recover` would; the command exits 3 saying "cancelled" and nothing is left for `recover`. A signal
// while the stop is under way changes nothing (a second ^C must not turn a clean stop into a crash; SIGKILL
// still is one).
import StoragePolicy

/// The process's one flag for SIGINT/SIGTERM. Made before the handler is installed, so the handler only reads
/// a ready global and stores into its atomic: async-signal-safe, no lock, no allocation.
private let terminationFlag = CancellationFlag()

/// The flag SIGINT/SIGTERM set while a command runs; installing the handlers is idempotent.
struct SignalCancellation {
    let flag: CancellationFlag

    init() {
        flag = terminationFlag
        system_onTerminationSignals { _ in terminationFlag.cancel() }
    }

    /// What a command that was cancelled exits with: 3 (as a rolled-back apply: "did not happen, look"),
    /// never 130, so timers and pipelines read it with the codes they already know (Docs/ci.md, journal.md).
    static let failure = CommandFailure(code: .rolledBack, message: "cancelled; nothing was changed")
}
