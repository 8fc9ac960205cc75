// The scope check plan and audit run before walking: a rule whose `path:` is not in the tree (a typo such as
// Documnets) is named as a warning, with the closest name there; `--strict` makes it an error (exit 65, nothing
// planned), so a CI gate or a timer cannot pass with a rule quietly switched off.
import StoragePolicy

enum ScopeWarnings {
    static let strictOption = OptionSpec.flag(
        "strict", help: "Treat a rule whose scope does not exist under the root as an error (exit 65) instead of a warning.")

    /// Prints one diagnostic per rule whose scope is missing under `root`; under `strict` they are errors and
    /// the command stops with 65 before anything is walked.
    static func check(_ loaded: LoadedPolicy, root: String, strict: Bool) throws(CommandFailure) {
        let diagnostics = ScopeCheck.missingScopes(loaded.policy, root: root, severity: strict ? .error : .warning)
        guard !diagnostics.isEmpty else { return }
        for d in diagnostics {
            // The source line is shown only for a rule of this file (an inherited rule's line is elsewhere).
            let source = d.location?.file == loaded.policy.source?.file ? loaded.source : nil
            Terminal.err(DiagnosticStyle.render(d, source: source))
        }
        guard strict else { return }
        let count = diagnostics.count
        Terminal.err("\(count) error\(count == 1 ? "" : "s") in the policy (--strict); nothing was done.")
        throw CommandFailure(code: .invalidPolicy, message: "")
    }
}
