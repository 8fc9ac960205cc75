// `--quiet` on plan, apply and audit: what a timer or a cron job runs, where any output is mailed or logged on
// every run. It drops the policy's warnings (still shown by `policyctl validate` and by any run without
// --quiet) and everything a run prints when there is nothing to do; what changes, or fails, is still said.
import StoragePolicy

enum QuietOutput {
    static let option = OptionSpec.flag(
        "quiet", short: "q",
        help: "Print no policy warnings, and nothing at all when there is nothing to do (for timers and cron, which mail or log every line). Changes, findings and errors are still printed.")

    /// The policy at `path`: as every command loads it (DiagnosticStyle.load), its warnings printed unless
    /// `quiet`; errors are reported the same either way (65, or 74 when it cannot be read).
    static func load(_ path: String, quiet: Bool, confinedTo folder: String? = nil) throws(CommandFailure) -> LoadedPolicy {
        guard quiet else { return try DiagnosticStyle.load(path, confinedTo: folder) }
        do {
            return try PolicySource.load(path, confinedTo: folder)
        } catch {
            throw CommandFailure(code: DiagnosticStyle.report(error), message: "")
        }
    }
}
