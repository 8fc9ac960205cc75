// A policy with `roots:` (or a `trash: { discover: true }` rule) runs once per root: plan and apply fan out here,
// one engine run per root with that root's one-root policy (Policy.policy(forRoot:)), its own lock, journal and
// state. A root that fails is reported and the others still run; the exit code is the worst over the roots.
import StoragePolicy
// The JSON writer is SPI of the bottom layer (Base/JSONWriter.swift says why).
@_spi(Layers) import StoragePolicyFileSystem

/// One root of a run over a policy's `roots:` list, or one trash folder its discovering trash rule found.
struct RootTarget {
    /// The root as the policy writes it (`~/.cache`), or the trash folder found.
    var written: String
    /// The absolute root.
    var path: String
    /// What runs there: the rules the root names (or the one trash rule), paths relative to it.
    var policy: Policy
    /// The lock and journal's folder; nil: ROOT/.policyctl, as a single-root run.
    var stateDirectory: String?
    /// True for a trash folder discovery found.
    var discovered: Bool
}

/// What a run covers: one root (the single-root form, or the listed root `--root` selects), or several.
enum RootsSelection {
    case single(policy: Policy, root: String, stateDirectory: String?)
    case several([RootTarget])
}

enum RootsRun {
    /// `--user` on plan and apply: `~/` roots expand from $HOME.
    static let userOption = OptionSpec.flag(
        "user",
        help: "Expand the policy's ~/ roots (roots: - path: ~/.cache) from $HOME, the running user's home. A run as root refuses ~/ roots without it; any other user's run expands them anyway.")

    /// Where a discovered trash folder's lock and journal go without --state-dir: a folder root owns, never
    /// the user's trash folder itself (Docs/safety.md, "Discovered trash folders").
    static let trashStateBase = "/var/lib/policyctl/trash"

    /// The roots of a run. `root` is `--root`; `stateDir` is `--state-dir` (each root then gets a subfolder of
    /// it named by RootChecks.stateFolderName). Usage errors are 64; a root list that nests once `~/` is
    /// expanded is 65.
    static func select(_ policy: Policy, root: String?, stateDir: String?, user: Bool, command: String) throws -> RootsSelection {
        guard policy.hasRoots else {
            guard let root else { throw UsageError(message: "Missing expected option '--root <dir>'", command: command) }
            return .single(policy: policy, root: root, stateDirectory: stateDir)
        }
        var listed: [RootTarget] = []
        for entry in policy.roots {
            let at = entry.location.map { " (\($0))" } ?? ""
            if entry.isHomeRelative && system_geteuid() == 0 && !user {
                throw UsageError(message: "root '\(entry.path)'\(at) is under the running user's home: pass --user to expand it from $HOME (a run as root without --user has no user whose home it means)", command: command)
            }
            let home = system_getenv("HOME")
            guard let path = entry.resolved(home: home) else {
                throw UsageError(message: "root '\(entry.path)'\(at) needs the running user's home, and HOME is not an absolute path", command: command)
            }
            listed.append(RootTarget(written: entry.path, path: path, policy: policy.policy(forRoot: entry),
                                     stateDirectory: stateDir.map { sub($0, path) }, discovered: false))
        }
        // `~/x` and `/home/me/x` meet only once expanded: the same checks as the policy's, on the real paths.
        for (i, a) in listed.enumerated() {
            for b in listed[..<i] where a.path == b.path || RootChecks.nests(a.path, b.path) {
                throw CommandFailure(code: .invalidPolicy, message: "roots '\(b.written)' and '\(a.written)' are \(a.path == b.path ? "the same folder" : "nested") once expanded (\(b.path), \(a.path)); the walk of one would cover the other")
            }
        }
        if let root {
            // --root selects the one listed root it names, with exactly the state a full run gives it.
            let wanted = RootSession.canonical(root)
            if let target = listed.first(where: { RootSession.canonical($0.path) == wanted }) {
                return .single(policy: target.policy, root: target.path, stateDirectory: target.stateDirectory)
            }
            if let target = discovered(policy, stateDir: stateDir, notes: false).first(where: { RootSession.canonical($0.path) == wanted }) {
                return .single(policy: target.policy, root: target.path, stateDirectory: target.stateDirectory)
            }
            let names = listed.map(\.path).joined(separator: ", ")
            throw UsageError(message: "--root '\(root)' is not one of the policy's roots\(names.isEmpty ? "" : " (\(names))")\(policy.discoveringTrash.isEmpty ? "" : " nor a trash folder discovery finds"); name one of them, or leave --root out to run them all", command: command)
        }
        return .several(listed + discovered(policy, stateDir: stateDir, notes: true))
    }

    /// The policy a one-root command (explain, audit) evaluates at `root`: the policy itself without `roots:`,
    /// else the rules of the listed (or discovered) root `root` is; any other root is a usage error (64).
    static func onePolicy(_ policy: Policy, root: String, command: String) throws -> Policy {
        guard policy.hasRoots else { return policy }
        guard case .single(let one, _, _) = try select(policy, root: root, stateDir: nil, user: true, command: command) else { return policy }
        return one
    }

    /// Without --root the policy must list its roots. The policy is read first: one with errors gets them, located,
    /// as `validate` shows them (65), before any option is judged; a valid one that lists no roots, or a file that
    /// cannot be read, is the usage error a missing --root always was (64).
    static func requireRoot(_ policyPath: String, root: String?, command: String) throws {
        guard root == nil else { return }
        let loaded: LoadedPolicy
        do { loaded = try PolicySource.load(policyPath, confinedTo: nil) } catch {
            // A file that cannot be read leaves nothing to show but the option, as always (64). A policy with
            // errors: the loader every command uses prints them, located, and throws its exit code (65).
            if !error.isIOError { _ = try QuietOutput.load(policyPath, quiet: false) }
            throw UsageError(message: "Missing expected option '--root <dir>'", command: command)
        }
        guard loaded.policy.hasRoots else {
            throw UsageError(message: "Missing expected option '--root <dir>'", command: command)
        }
    }

    /// Every trash folder discovery finds, as a root for the policy's discovering trash rule; what it ignored
    /// is noted on stderr when `notes` (a symlinked or non-sticky `.Trash`, another uid's folder: never entered).
    static func discovered(_ policy: Policy, stateDir: String?, notes: Bool) -> [RootTarget] {
        guard let rule = policy.discoveringTrash.first else { return [] }
        let mounts = MountPoints.current()
        if mounts == nil && notes { Terminal.err("note: the mount table (/proc/self/mountinfo) cannot be read: only the home trash is looked for") }
        let found = StorageEngine.discoverTrash(mountPoints: mounts ?? [], homeTrash: TrashCommand.homeTrash())
        if notes { for note in found.ignored { Terminal.err("note: \(PrintableText.escapingControls(note))") } }
        let base = stateDir ?? trashStateBase
        return found.found.map {
            RootTarget(written: $0.path, path: $0.path, policy: policy.policy(forDiscoveredTrash: rule),
                       stateDirectory: sub(base, $0.path), discovered: true)
        }
    }

    /// `DIR/<root escaped>`: only the name. Nothing is made here, since plan, audit and explain select roots
    /// too and must not write; apply makes the folders above it (`makeFolders(above:)`).
    static func sub(_ base: String, _ root: String) -> String {
        let dir = RootSession.absolute(base)
        return (dir == "/" ? "" : dir) + "/" + RootChecks.stateFolderName(root)
    }

    /// Makes (0700) each missing folder above a root's state folder `DIR/NAME`, so the engine, which makes
    /// only the state folder itself, can make it. Called by apply just before a root's run.
    /// On descriptors (PathChase.makeDirectories): the existing part chased as a root's path is, each missing folder
    /// made by mkdirat and checked on the descriptor opened after it. A failure is left for the engine, which
    /// opens the state folder the same way and names what is wrong.
    static func makeFolders(above stateDirectory: String?) {
        guard let stateDirectory, let slash = stateDirectory.lastIndex(of: "/"), slash != stateDirectory.startIndex else { return }
        _ = try? PathChase.makeDirectories(String(stateDirectory[..<slash]), permissions: 0o700)
    }

    /// The most state folders a run makes for discovered trash folders (each with its journal and its 256 KiB
    /// reserve): a volume with many trash folders is taken in turns, this many new ones a run, each named.
    static let newTrashStateFoldersPerRun = 32

    /// True when `stateDirectory` exists (a discovered trash folder run before): making it is not counted.
    static func stateFolderExists(_ stateDirectory: String?) -> Bool {
        guard let stateDirectory else { return true }
        return system_lstat(stateDirectory) != nil
    }

    /// The worst of the roots' exit codes: the highest number (0 < 1 findings/skipped < 2 pending < 3 < 64 < 65 < 74).
    static func worst(_ codes: [ExitCode]) -> ExitCode {
        codes.max { $0.rawValue < $1.rawValue } ?? .success
    }

    /// The header of a root's section in text output.
    static func header(_ target: RootTarget, index: Int, count: Int) -> String {
        let what = target.discovered ? "discovered trash" : "root"
        let written = target.written == target.path ? "" : " (\(target.written))"
        return "== \(what) \(PrintableText.escapingControls(target.path))\(PrintableText.escapingControls(written)) [\(index + 1)/\(count)] =="
    }

    /// The line for a root that failed, naming what the other roots do.
    static func failed(_ target: RootTarget, _ message: String) -> String {
        "root \(PrintableText.escapingControls(target.path)) failed: \(PrintableText.escapingControls(message)); the other roots still run"
    }

    /// A JSON string, escaped by the one JSON writer as plans escape theirs.
    static func json(_ text: String) -> String {
        var out = JSONWriter(capacity: text.utf8.count + 8)
        out.string(text, escaping: .encoder)
        return String(decoding: out.takeBytes(), as: UTF8.self)
    }

    /// The message of an error a root's run threw, as the command would print it on its own.
    static func message(_ error: any Error) -> (ExitCode, String) {
        switch error {
        case let f as CommandFailure: return (f.code, f.message)
        case let u as UsageError: return (.usage, u.message)
        default: return (.ioError, "\(error)")
        }
    }
}
