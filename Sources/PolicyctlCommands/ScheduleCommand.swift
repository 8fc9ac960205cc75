// `policyctl schedule`: prints (or writes into a directory) the systemd units, launchd plist or crontab
// entry that apply a policy on a timer. Never enables, loads or starts anything: it prints that step.
import StoragePolicy

struct ScheduleCommand: Command {
    static let summary = CommandSummary(
        name: "schedule",
        abstract: "Print or install the units that apply a policy on a timer.",
        discussion: "Generates a hardened systemd service and timer (the default on Linux), a launchd plist (the default on macOS) or a crontab entry running `policyctl apply --yes --no-wait` with absolute paths. With --install the files are written into DIR, or the scheduler's own directory, and the command to enable them is printed; nothing is enabled.",
        usage: ["--policy <file> --root <dir> (--every <duration> | --on <calendar>) [--systemd | --launchd | --cron] [--install [<dir>]] [--user] [--name <name>] [--force-root] [--state-dir <dir>]"]
    )

    struct Options: ParsableOptions, ScriptPolicyOptions {
        var dir: String?
        var policy: String?
        var cacheDir: String?
        var root: String?
        var every: String?
        var on: String?
        var systemd = false
        var launchd = false
        var cron = false
        var install = false
        var user = false
        var forceRoot = false
        var name: String?
        var stateDir: String?
        var tmpfilesExclude = false
        var onChange = false
        var watch: [String] = []

        static var arguments: [ArgumentField<Self>] { [
            .argument(\.dir, "dir", help: "With --install: where to write the files (default: /etc/systemd/system, ~/.config/systemd/user with --user, /Library/LaunchDaemons or ~/Library/LaunchAgents, /etc/cron.d).",
                      completion: .directory),
        ] }

        static var options: [OptionField<Self>] { [
            .option(\.policy, "policy", short: "p", value: "file", help: "(required) The policy to apply.", completion: .file),
            .shared(\.cacheDir, ScriptLauncher.cacheDirOption),
            .option(\.root, "root", short: "r", value: "dir", help: "The directory the policy applies to (required unless the policy lists its roots: without it, one job runs every listed root; with it, the listed root it names).", completion: .directory),
            .option(\.every, "every", value: "duration", help: "Run this long after the previous run: 15m, 6h, 1d, 1w."),
            .option(\.on, "on", value: "calendar", help: "Run at these times, in systemd's calendar syntax: daily, 'Mon..Fri 02:30', '*-*-* 03:00:00'."),
            .flag(\.systemd, "systemd", help: "Generate a systemd service and timer (the default on Linux)."),
            .flag(\.launchd, "launchd", help: "Generate a launchd property list (the default on macOS)."),
            .flag(\.cron, "cron", help: "Generate a crontab entry."),
            .flag(\.install, "install", help: "Write the files into <dir> instead of printing them."),
            .flag(\.user, "user", help: "A job for the current user (user units, LaunchAgents, the user's crontab) rather than the system."),
            .flag(\.forceRoot, "force-root", help: "The root is one policyctl refuses by default (the home directory itself, a system directory): the units pass --force-root to apply."),
            .option(\.name, "name", value: "name", help: "Name the job policyctl-<name> (default: the policy's name); needed to schedule one policy on two roots."),
            .option(\.stateDir, "state-dir", value: "dir", help: "The units pass --state-dir DIR to apply: the lock and journal live in DIR (e.g. /var/lib/policyctl/NAME), outside a root other users can write.", completion: .directory),
            .flag(\.onChange, "on-change", help: "Also run when the root changes (an entry made, removed or renamed in it): a systemd .path unit (PathChanged=, at most 10 runs a minute) or launchd WatchPaths, besides the timer."),
            .option(\.watch, "watch", value: "dir", help: "With --on-change: watch this folder (relative to the root, or absolute) instead of the root; repeat for several.", completion: .directory),
            .flag(\.tmpfilesExclude, "tmpfiles-exclude", help: "Also hand the root to policyctl in systemd-tmpfiles: an 'x ROOT' line in /etc/tmpfiles.d/policyctl-<name>.conf (written with --install, printed without), so tmpfiles' age lines no longer delete what the policy keeps."),
        ] }
    }

    enum Scheduler: String { case systemd, launchd, cron }

    let policyPath: String
    let rootPath: String
    /// A `roots:` policy scheduled without --root: its listed roots, all run by the one job.
    let listedRoots: [PolicyRoot]
    /// The policy has a `trash: { discover: true }` rule (then the job runs without --root, on cron or launchd).
    let discovers: Bool
    let trigger: ScheduleTrigger
    let scheduler: Scheduler
    let install: Bool
    let installDirectory: String?
    let scope: ScheduledJob.Scope
    let name: String?
    let forceRoot: Bool
    let stateDir: String?
    let cacheDir: String?
    let tmpfilesExclude: Bool
    /// `--on-change`: the folders to watch as given (relative ones are under the root); empty without it.
    let watch: [String]

    init(_ options: Options) throws {
        func usage(_ message: String) -> UsageError { UsageError(message: message, command: "policyctl schedule") }
        let policy = try PolicyArgument.resolve(options.policy, useSet: false, user: options.user) ?? options.required(\.policy, command: "policyctl schedule")
        // A policy with roots: and no --root is one job over every listed root (apply without --root goes over
        // them in turn, each with its own lock and journal); --root still schedules the one listed root it names.
        var policyName = ""
        if options.root == nil, let loaded = try? PolicySource.load(policy), loaded.policy.hasRoots {
            policyName = loaded.policy.name
            listedRoots = loaded.policy.roots
            discovers = !loaded.policy.discoveringTrash.isEmpty
            rootPath = ""
        } else {
            listedRoots = []
            discovers = false
            rootPath = try options.required(\.root, command: "policyctl schedule")
        }
        policyPath = policy
        do throws(ScheduleError) {
            switch (options.every, options.on) {
            case (let every?, nil): trigger = try ScheduleTrigger(every: every)
            case (nil, let calendar?): trigger = try ScheduleTrigger(calendar: calendar)
            case (nil, nil): throw ScheduleError("Missing '--every <duration>' or '--on <calendar>': say when the policy runs")
            case (_?, _?): throw ScheduleError("'--every' and '--on' exclude each other: give one")
            }
        } catch {
            throw usage(error.message)
        }
        let given: [Scheduler: Bool] = [.systemd: options.systemd, .launchd: options.launchd, .cron: options.cron]
        let chosen = [Scheduler.systemd, .launchd, .cron].filter { given[$0]! }
        guard chosen.count <= 1 else {
            throw usage("Choose one scheduler: \(chosen.map { "--\($0.rawValue)" }.joined(separator: ", ")) were given")
        }
        #if os(macOS)
        scheduler = chosen.first ?? .launchd
        #else
        scheduler = chosen.first ?? .systemd
        #endif
        if discovers && scheduler == .systemd {
            // Discovery finds trash folders under every home and volume when it runs: a sandboxed unit,
            // writable only where it says, cannot name them in advance.
            throw usage("policy '\(policyName)' has a trash: { discover: true } rule, whose folders are found when it runs, under every home and volume; a systemd unit's sandbox cannot name them in advance: schedule it with --cron (no sandbox), or the listed roots one at a time with --root")
        }
        install = options.install
        installDirectory = options.dir
        if let installDirectory, !install {
            throw usage("Unexpected argument '\(installDirectory)' (a directory is taken only with --install)")
        }
        scope = options.user ? .user : .system
        if install, scheduler == .cron, scope == .user, installDirectory == nil {
            throw usage("A user's crontab has no directory to install into: add the printed line with `crontab -e` (or `(crontab -l; policyctl schedule ... --cron --user) | crontab -`)")
        }
        name = options.name
        forceRoot = options.forceRoot
        stateDir = options.stateDir.map(RootSession.absolute)
        cacheDir = options.cacheDir
        tmpfilesExclude = options.tmpfilesExclude
        if !options.watch.isEmpty && !options.onChange {
            throw usage("--watch names what --on-change watches: add --on-change")
        }
        if options.onChange && scheduler == .cron {
            throw usage("cron cannot watch a folder: --on-change needs --systemd (a .path unit) or --launchd (WatchPaths)")
        }
        watch = options.onChange ? (options.watch.isEmpty ? ["."] : options.watch) : []
        if tmpfilesExclude && options.user {
            throw usage("--tmpfiles-exclude writes /etc/tmpfiles.d, which is the system's: schedule the system job, or add the x line to ~/.config/user-tmpfiles.d yourself")
        }
    }

    func run() throws -> ExitCode {
        let loaded = try DiagnosticStyle.load(policyPath)

        let roots = try resolvedRoots()
        let root = roots.first ?? ""
        let policy = try ScheduleCommand.resolve(policyPath, what: "policy", directory: false)
        // Watched folders must exist (systemd and launchd watch a path, not what may appear there later).
        var watchPaths: [String] = []
        for folder in watch {
            if roots.count > 1 && !folder.hasPrefix("/") && folder != "." {
                throw UsageError(message: "--watch \(folder): a job over several roots takes absolute folders to watch (a relative one names no single root)", command: "policyctl schedule")
            }
            if roots.isEmpty {
                throw UsageError(message: "--on-change: the policy lists no root to watch (its trash folders are found when it runs): give absolute folders with --watch", command: "policyctl schedule")
            }
            for base in (folder == "." ? roots : [root]) {
                let path = folder.hasPrefix("/") ? folder : (folder == "." ? base : base + "/" + folder)
                let resolved = try ScheduleCommand.resolve(path, what: "watched folder", directory: true)
                if !watchPaths.contains(resolved) { watchPaths.append(resolved) }
            }
        }
        guard let executable = ScriptLauncher.hostExecutable ?? ScheduleCommand.executablePath() else {
            throw CommandFailure(code: .ioError, message: "cannot find the path of the running policyctl binary")
        }
        let home = ScheduleCommand.homeDirectory
        let files: [GeneratedFile]
        let defaultDirectory: String
        let nextStep: (String) -> String
        do throws(ScheduleError) {
            let job = try ScheduledJob(name: name ?? ScheduledJob.name(forPolicy: loaded.policy.name),
                                       policyName: loaded.policy.name, executable: executable, policyPath: policy,
                                       root: root, trigger: trigger, scope: scope, home: home, forceRoot: forceRoot,
                                       stateDirectory: stateDir,
                                       cacheDirectory: PolicySource.isScript(policyPath) ? try? ScriptCache.directory(cacheDir) : nil,
                                       watchPaths: watchPaths, otherRoots: Array(roots.dropFirst()),
                                       everyRoot: !listedRoots.isEmpty || discovers, discovers: discovers)
            switch scheduler {
            case .systemd:
                let units = SystemdUnits(job)
                files = units.files
                defaultDirectory = scope == .user
                    ? (ScheduleCommand.environment("XDG_CONFIG_HOME") ?? "\(home ?? "~")/.config") + "/systemd/user"
                    : "/etc/systemd/system"
                nextStep = { directory in
                    return (directory == defaultDirectory ? "" : "\(directory) is not a directory systemd reads: first run `systemctl\(scope == .user ? " --user" : "") link \(units.files.map { "\(directory)/\($0.name)" }.joined(separator: " "))`, then ")
                        + units.enableCommand
                }
            case .launchd:
                let plist = LaunchdPlist(job)
                files = [try plist.file()]
                defaultDirectory = scope == .user ? "\(home ?? "~")/Library/LaunchAgents" : "/Library/LaunchDaemons"
                nextStep = { directory in plist.loadCommand(installedAt: "\(directory)/\(plist.fileName)") }
            case .cron:
                let cron = CronLine(job)
                if scope == .user {
                    // A user's crontab: no user field; printed for `crontab -e`.
                    let line = try cron.line()
                    files = [GeneratedFile(name: cron.fileName, contents: "# policyctl \(job.trigger.description): apply policy '\(job.policyName)' to \(job.rootsDescription)\n\(line)\n")]
                } else {
                    files = [try cron.file(user: ScheduleCommand.userName)]
                }
                defaultDirectory = "/etc/cron.d"
                nextStep = { directory in
                    directory == "/etc/cron.d" ? "Nothing to enable: cron reads /etc/cron.d by itself."
                        : "Copy \(directory)/\(cron.fileName) into /etc/cron.d (cron reads it by itself), or add its line with `crontab -e`."
                }
            }
        } catch {
            throw UsageError(message: error.message, command: "policyctl schedule")
        }

        // The x line goes where systemd-tmpfiles reads it, whatever folder the units go to.
        let exclusion = tmpfilesExclude && !roots.isEmpty
            ? Tmpfiles.exclusionFile(roots: roots, job: name ?? ScheduledJob.name(forPolicy: loaded.policy.name)) : nil
        guard install else {
            for (i, file) in (files + (exclusion.map { [$0] } ?? [])).enumerated() {
                if i > 0 { Terminal.out("") }
                if file == exclusion { Terminal.out("# \(ScheduleCommand.tmpfilesFolder)/\(file.name)") }
                Terminal.out(file.contents, terminator: "")
            }
            return .success
        }
        let directory = OutputFile.absolute(installDirectory ?? defaultDirectory)
        for file in files {
            let path = directory + "/" + file.name
            try OutputFile.write(Array(file.contents.utf8), to: path, createDirectories: true)
            Terminal.out("Wrote \(path)")
        }
        if let exclusion {
            let path = ScheduleCommand.tmpfilesFolder + "/" + exclusion.name
            try OutputFile.write(Array(exclusion.contents.utf8), to: path, createDirectories: true)
            Terminal.out("Wrote \(path) (systemd-tmpfiles reads it on its next run)")
        }
        Terminal.out("Next, run: \(nextStep(directory))")
        return .success
    }

    /// The roots the job changes, absolute with symlinks resolved: --root, or each listed root (`~/` from the
    /// home of whoever the job runs as, so only for --user jobs or a non-root user's).
    func resolvedRoots() throws -> [String] {
        guard !listedRoots.isEmpty || discovers else { return [try ScheduleCommand.resolve(rootPath, what: "root", directory: true)] }
        var out: [String] = []
        for entry in listedRoots {
            let at = entry.location.map { " (\($0))" } ?? ""
            if entry.isHomeRelative && scope == .system && system_geteuid() == 0 {
                throw UsageError(message: "root '\(entry.path)'\(at) is under a user's home: schedule it as that user's job with --user", command: "policyctl schedule")
            }
            guard let path = entry.resolved(home: ScheduleCommand.homeDirectory) else {
                throw UsageError(message: "root '\(entry.path)'\(at) needs the home directory, and HOME is not an absolute path", command: "policyctl schedule")
            }
            out.append(try ScheduleCommand.resolve(path, what: "root", directory: true))
        }
        return out
    }

    /// Where --tmpfiles-exclude writes: /etc/tmpfiles.d (under POLICYCTL_CONFIG_ROOT in a debug build's tests).
    static var tmpfilesFolder: String { PolicyArgument.configPrefix + "/etc/tmpfiles.d" }

    /// An existing path made absolute with symlinks resolved, as unit files and ReadWritePaths= need.
    static func resolve(_ path: String, what: String, directory: Bool) throws(CommandFailure) -> String {
        guard let result = system_realpath(path) else {
            throw CommandFailure(code: .ioError, message: "cannot resolve the \(what) \(path): \(system_errno)")
        }
        if directory, let status = system_stat(result), status.kind != .directory {
            throw CommandFailure(code: .ioError, message: "the \(what) \(path) is not a directory")
        }
        return result
    }

    /// The running binary. The path it was started by (argv[0], or its PATH entry) is preferred when it is
    /// the same file and a normalized absolute path: a stable link such as /usr/local/bin/policyctl keeps
    /// working after an upgrade moves the real binary. Else the kernel's answer (/proc/self/exe).
    static func executablePath() -> String? {
        #if os(Linux)
        guard let real = system_readlink("/proc/self/exe") else { return nil }
        #else
        guard let real = system_realpath(Policyctl.invokedAs) else { return nil }
        #endif
        let invoked = ProcessArguments.current?.first ?? ""
        let candidates = invoked.contains("/")
            ? [OutputFile.absolute(invoked)]
            : (environment("PATH") ?? "").split(separator: ":").map { "\($0)/\(invoked)" }
        guard let target = system_stat(real) else { return real }
        for candidate in candidates where candidate.hasPrefix("/") && isNormalized(candidate) {
            if let status = system_stat(candidate), status.device == target.device, status.inode == target.inode {
                return candidate
            }
        }
        return real
    }

    /// No `.` or `..` components and no `//`: systemd refuses an ExecStart= path that is not normalized.
    static func isNormalized(_ path: String) -> Bool {
        !path.dropFirst().split(separator: "/", omittingEmptySubsequences: false).contains { $0.isEmpty || $0 == "." || $0 == ".." }
    }

    static func environment(_ name: String) -> String? {
        system_getenv(name).flatMap { $0.isEmpty ? nil : $0 }
    }

    static var homeDirectory: String? {
        environment("HOME") ?? system_homeDirectoryOfEffectiveUser()
    }

    /// The user the /etc/cron.d line runs as: whoever generates it (root, normally).
    static var userName: String {
        system_userNameOfEffectiveUser() ?? "root"
    }
}
