// Shared by the commands that change a root (apply, recover, journal, trash, undo): one option and two path rules.
import StoragePolicy

/// What the commands that change a root share: the `--state-dir` option, the policy loaded with its
/// diagnostics, and paths made absolute the one way. The lock and recovery are the engine's.
enum RootSession {
    /// `--state-dir DIR`, shared by apply, recover, journal and trash.
    static let stateDirOption = OptionSpec.option(
        "state-dir", value: "dir",
        help: "Keep the lock and the journal in DIR (created 0700 if missing; e.g. /var/lib/policyctl/NAME) instead of ROOT/.policyctl, which is then reported and ignored. Staging stays on the root's filesystem, in a fresh ROOT/.policyctl-staging-<id> per transaction.",
        completion: .directory)

    /// The one loader every command uses (DiagnosticStyle.load): warnings shown, errors at file:line:col, 65 for
    /// an invalid policy and 74 for one that cannot be read.
    static func loadPolicy(_ path: String) throws(CommandFailure) -> Policy {
        try DiagnosticStyle.load(path).policy
    }

    /// `path` made absolute against the working directory (see PathNormalization).
    static func absolute(_ path: String) -> String { PathNormalization.absolute(path) }

    /// The canonical absolute path of the root (realpath), or the plain absolute path when that fails.
    static func canonical(_ path: String) -> String { PathNormalization.canonical(path) }
}
