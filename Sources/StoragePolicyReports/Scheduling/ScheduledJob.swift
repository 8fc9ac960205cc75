// Everything a scheduler needs to run one policy on one root: a name, absolute paths, the trigger and
// whether it is a system or a per-user job. Refuses paths and names a unit file or crontab cannot carry.

@_spi(Layers) import StoragePolicyFileSystem

package struct ScheduledJob: Sendable, Hashable {
    /// System-wide (root's units, /etc/cron.d, LaunchDaemons) or one user's (user units, crontab, LaunchAgents).
    package enum Scope: String, Sendable, Hashable { case system, user }

    /// Names units, labels and files: `policyctl-<name>.service`. Letters, digits, `-` and `_` only.
    package var name: String
    package var policyName: String
    /// The policyctl binary, absolute.
    package var executable: String
    /// The policy file, absolute.
    package var policyPath: String
    /// The root the policy is applied to, absolute (with `roots:`, the first listed root).
    package var root: String
    /// A policy with `roots:` scheduled as one job: its other roots (absolute), each writable by the run too.
    package var otherRoots: [String] = []
    /// The run is `apply` without `--root`: it goes over every root the policy lists (and the trash folders a
    /// `discover: true` rule finds) in turn.
    package var everyRoot = false
    /// The policy has a `trash: { discover: true }` rule (only for a scheduler without a sandbox).
    package var discovers = false
    /// Every listed root the run changes: `root`, then `otherRoots` (none for a policy that only discovers).
    package var roots: [String] { root.isEmpty ? otherRoots : [root] + otherRoots }
    /// The roots as one phrase for descriptions and comments.
    package var rootsDescription: String {
        let listed = roots.joined(separator: ", ")
        guard discovers else { return listed }
        return (listed.isEmpty ? "" : listed + " and ") + "the trash folders it discovers"
    }
    package var trigger: ScheduleTrigger
    package var scope: Scope
    /// The user's home directory (launchd agents log under ~/Library/Logs).
    package var home: String?
    /// Pass `--force-root` to apply: the root is one policyctl refuses by default (the home directory itself,
    /// say, for a policy whose rules are all scoped below it).
    package var forceRoot: Bool
    /// Pass `--state-dir` to apply: the lock and journal live there, outside the root (absolute).
    package var stateDirectory: String?
    /// Pass `--cache-dir` to apply: where a Swift policy's compiled program is kept (absolute; writable by the run).
    package var cacheDirectory: String?
    /// `--on-change`: folders (absolute) whose changes start a run too, besides the timer: a systemd `.path`
    /// unit, launchd's WatchPaths. Empty: the timer only.
    package var watchPaths: [String] = []

    package init(name: String, policyName: String, executable: String, policyPath: String, root: String,
                trigger: ScheduleTrigger, scope: Scope = .system, home: String? = nil,
                forceRoot: Bool = false, stateDirectory: String? = nil, cacheDirectory: String? = nil,
                watchPaths: [String] = [], otherRoots: [String] = [], everyRoot: Bool = false,
                discovers: Bool = false) throws(ScheduleError) {
        guard ScheduledJob.isValidName(name) else {
            throw ScheduleError("invalid name '\(name)': use letters, digits, '-' and '_' (at most 100), starting with a letter or digit")
        }
        for (what, path) in [("policyctl binary", executable), ("policy", policyPath), ] + (root.isEmpty && discovers ? [] : [("root", root)])
            + otherRoots.map({ ("root", $0) }) + (stateDirectory.map { [("state directory", $0)] } ?? []) + (cacheDirectory.map { [("cache directory", $0)] } ?? [])
            + watchPaths.map({ ("watched folder", $0) }) {
            guard path.hasPrefix("/") else { throw ScheduleError("the \(what) path '\(path)' is not absolute") }
            guard !path.unicodeScalars.contains(where: PrintableText.isControl) else {
                throw ScheduleError("the \(what) path '\(PrintableText.escapingControls(path))' holds a control character, which unit files and crontabs cannot carry")
            }
        }
        // The policy's name goes into descriptions and comments: a line break there would end them early.
        self.name = name; self.policyName = PrintableText.escapingControls(policyName); self.executable = executable; self.policyPath = policyPath
        self.root = root; self.trigger = trigger; self.scope = scope; self.home = home
        self.forceRoot = forceRoot
        self.stateDirectory = stateDirectory
        self.cacheDirectory = cacheDirectory
        self.watchPaths = watchPaths
        self.otherRoots = otherRoots
        self.everyRoot = everyRoot || discovers
        self.discovers = discovers
    }

    /// The command every scheduler runs: a non-interactive apply that skips (exit 0) when another run holds
    /// the lock and logs plain lines that journald, syslog and launchd's log files read well.
    package var arguments: [String] {
        [executable, "apply", "--policy", policyPath] + (everyRoot ? [] : ["--root", root]) + (forceRoot ? ["--force-root"] : [])
            + (stateDirectory.map { ["--state-dir", $0] } ?? [])
            + (cacheDirectory.map { ["--cache-dir", $0] } ?? [])
            + ["--yes", "--no-wait", "--log-format", "plain"]
    }

    /// A policy name made into a job name: runs of anything but letters, digits, `-` and `_` become one `-`.
    package static func name(forPolicy policyName: String) -> String {
        var out = ""
        for c in policyName.unicodeScalars {
            if isNameCharacter(c) { out.unicodeScalars.append(c) } else if !out.hasSuffix("-") { out += "-" }
        }
        var name = Substring(out.prefix(100))
        while let f = name.unicodeScalars.first, !isLetterOrDigit(f) { name.removeFirst() }
        while name.hasSuffix("-") { name.removeLast() }
        return name.isEmpty ? "policy" : String(name)
    }

    static func isValidName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, name.unicodeScalars.count <= 100 else { return false }
        return isLetterOrDigit(first) && name.unicodeScalars.allSatisfy(isNameCharacter)
    }

    private static func isLetterOrDigit(_ c: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(c) || ("A"..."Z").contains(c) || ("0"..."9").contains(c)
    }

    private static func isNameCharacter(_ c: Unicode.Scalar) -> Bool { isLetterOrDigit(c) || c == "-" || c == "_" }
}
