// `--at TIME` on plan, audit and explain: the policy evaluated as of another instant (what a timer will do on
// 2027-01-01, whether a file is kept next week), never for apply, which has no such option. A plan made with it
// records the instant (Plan.asOf) and a note, and apply refuses it as a what-if (PlanFile.staleness).
import StoragePolicy

enum AsOfOption {
    static let option = OptionSpec.option(
        "at", value: "time",
        help: "Evaluate as of this instant instead of now, e.g. 2027-01-01T00:00Z; accepted: \(InstantText.forms). A what-if: a plan saved with --at is never applied.")

    /// The plan options for `--at text` (now when nil); a text that is no instant is a usage error naming it.
    static func planOptions(_ text: String?, command: String) throws -> PlanOptions {
        guard let text else { return PlanOptions() }
        guard let ns = InstantText.nanoseconds(text) else {
            throw UsageError(message: "--at '\(text)' is not an instant; give \(InstantText.forms), e.g. 2027-01-01T00:00Z", command: command)
        }
        return PlanOptions(now: ns)
    }

    /// Marks a plan made with --at: the instant it was evaluated as of, and a note saying apply refuses it.
    static func mark(_ plan: inout Plan, options: PlanOptions) {
        guard let ns = options.now else { return }
        let instant = WallClock.rfc3339(ns: ns)
        plan.asOf = instant
        plan.notes.append("evaluated as of \(instant) (--at), not now: a what-if; apply refuses this plan")
    }
}
