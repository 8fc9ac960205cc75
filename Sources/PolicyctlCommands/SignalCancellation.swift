// SIGINT and SIGTERM as a cancellation, for the commands that walk or apply (plan, audit, apply): the first
// signal sets the run's flag, the walk stops before its next directory, an apply stops between groups and rolls
// back as `recover` would; the command exits 3 saying "cancelled" and nothing is left for `recover`. A signal
// while the stop is under way is ignored (a second ^C must not turn a clean stop into a crash; SIGKILL still is).
import Dispatch
import StoragePolicy

/// The flag SIGINT/SIGTERM set while a command runs; the handlers are installed for its lifetime.
final class SignalCancellation {
    let flag = CancellationFlag()
    private var sources: [any DispatchSourceSignal] = []

    init() {
        let flag = self.flag
        sources = system_onTerminationSignals { _ in flag.cancel() }
    }

    /// What a command that was cancelled exits with: 3 (as a rolled-back apply: "did not happen, look"),
    /// never 130, so timers and pipelines read it with the codes they already know (Docs/ci.md, journal.md).
    static let failure = CommandFailure(code: .rolledBack, message: "cancelled; nothing was changed")
}
