// `policyctl audit`: plan a policy against a root and report the drift as findings in a CI format, exiting
// 1 on findings and 64/65/74 on usage, policy and I/O errors. Changes nothing under the root.
import Foundation
import StoragePolicy

struct AuditCommand: Command {
    static let summary = CommandSummary(
        name: "audit",
        abstract: "Report where a tree drifts from a policy, in formats CI systems read.",
        discussion: "Every change apply would make and every violation is a finding with a rule, a path and a severity. With PATH arguments (or --changed-since) only those paths are audited: the walk lists the directories on the way to them (whose layout is still checked) and walks nothing else; quota rules, which need their whole scope, are not checked then. Without --root the root is the current directory; without --policy it is ROOT/.policyctl.yaml. A rule whose scope does not exist under the root is a warning; --strict makes it an error. Exit status: 0 when nothing new is at or above --fail-on, 1 when something is, 64 for a usage error (or PATH arguments none of which lies inside the root), 65 for an invalid policy or baseline (or, with --strict, a missing scope), 74 for an I/O error. Nothing under the root is changed.",
        usage: ["[--policy <file>] [--root <dir>] [<options>] [--] [<path>...]",
                "[--policy <file>] [--root <dir>] --changed-since <ref> [<options>]"]
    )

    struct Options: ParsableOptions, ScriptPolicyOptions {
        var paths: [String] = []
        var policy: String?
        var cacheDir: String?
        var root: String?
        var changedSince: String?
        var format = "text"
        var output: String?
        var failOn = "warning"
        var baseline: String?
        var writeBaseline: String?
        var strict = false
        var forceRoot = false
        var quiet = false
        var at: String?

        static var arguments: [ArgumentField<Self>] { [
            .argument(\.paths, "path", help: "Audit only these paths, relative to the current directory as pre-commit and linters pass them (or relative to the root when they exist there, or absolute); the layout of the directories on their way is checked too. A path outside the root is named and skipped; when none lies inside it, exit 64.",
                      optional: true),
        ] }

        static var options: [OptionField<Self>] { [
            .option(\.policy, "policy", short: "p", value: "file", help: "The policy to audit against (default: ROOT/.policyctl.yaml).", completion: .file),
            .shared(\.cacheDir, ScriptLauncher.cacheDirOption),
            .option(\.root, "root", short: "r", value: "dir", help: "The directory the policy applies to (default: the current directory).", completion: .directory),
            .option(\.changedSince, "changed-since", value: "ref", help: "Audit only what git says changed since this revision (git diff --name-only REF, deleted files left out) plus untracked files, inside the root."),
            .option(\.format, "format", value: "format", help: "The report format.", default: "text",
                    values: ReportFormat.allCases.map(\.rawValue)),
            .option(\.output, "output", value: "file", help: "Write the report to this file (the summary still goes to standard output).",
                    completion: .file),
            .option(\.failOn, "fail-on", value: "severity", help: "Fail on new findings at or above this severity.", default: "warning",
                    values: ["error", "warning"]),
            .option(\.baseline, "baseline", value: "file", help: "Report findings saved in this baseline as known; they never fail the audit.",
                    completion: .file),
            .option(\.writeBaseline, "write-baseline", value: "file", help: "Save every current finding as a baseline, then report them as known.",
                    completion: .file),
            .shared(\.strict, ScopeWarnings.strictOption),
            .flag(\.forceRoot, "force-root", help: "Allow '/', the home directory itself or a system directory as the root."),
            .shared(\.quiet, QuietOutput.option),
            .shared(\.at, AsOfOption.option),
        ] }
    }

    let policyPath: String
    /// Found by convention at ROOT/.policyctl.yaml rather than named: it may extend nothing outside the root.
    let discovered: Bool
    let rootPath: String
    /// The paths to audit; nil audits the whole tree.
    let paths: [RelativePath]?
    let format: ReportFormat
    let outputPath: String?
    let failOn: Rule.Severity
    let baselinePath: String?
    let writeBaselinePath: String?
    let strict: Bool
    let quiet: Bool
    /// `--at`: the instant ages are measured against (now without it).
    let planOptions: PlanOptions

    init(_ options: Options) throws {
        quiet = options.quiet
        rootPath = options.root ?? "."
        try RootSafety.check(rootPath, force: options.forceRoot, command: "policyctl audit")
        discovered = options.policy == nil
        policyPath = try PolicyArgument.resolve(options.policy, useSet: false) ?? AuditPaths.conventionalPolicy(root: rootPath)
        let changedSince = options.changedSince
        if changedSince != nil && !options.paths.isEmpty {
            throw UsageError(message: "--changed-since takes the paths from git; give no PATH with it", command: "policyctl audit")
        }
        if let changedSince {
            paths = try AuditPaths.changed(since: changedSince, root: rootPath)
        } else if !options.paths.isEmpty {
            paths = try AuditPaths.named(options.paths, root: rootPath)
        } else {
            paths = nil
        }
        if paths != nil, options.writeBaseline != nil {
            throw UsageError(message: "--write-baseline records the whole tree; run it without paths or --changed-since", command: "policyctl audit")
        }
        // The parser has checked both against their allowed values.
        format = ReportFormat(rawValue: options.format)!
        failOn = Rule.Severity(rawValue: options.failOn)!
        outputPath = options.output
        baselinePath = options.baseline
        writeBaselinePath = options.writeBaseline
        strict = options.strict
        planOptions = try AsOfOption.planOptions(options.at, command: "policyctl audit")
    }

    func run() throws -> ExitCode {
        // The baseline is read first: a broken one must not cost a walk of the tree.
        let baseline = try baselinePath.map(AuditCommand.readBaseline)
        let restriction = paths.map(PathRestriction.init)
        var loaded = try QuietOutput.load(policyPath, quiet: quiet, confinedTo: discovered ? rootPath : nil)
        // A policy with roots: audits the root (default .) with the rules of the listed root it is.
        loaded.policy = try RootsRun.onePolicy(loaded.policy, root: rootPath, command: "policyctl audit")
        try ScopeWarnings.check(loaded, root: rootPath, strict: strict)

        let printer = PlanEventPrinter(.audit)
        var report: AuditReport
        // SIGINT/SIGTERM stop the walk before its next directory: exit 3, and no report (nor --output file).
        let signals = SignalCancellation()
        defer { withExtendedLifetime(signals) {} }
        var engine = StorageEngine(policy: loaded.policy, root: OutputFile.absolute(rootPath), planOptions: planOptions)
        engine.planOptions.cancellation = signals.flag
        do {
            // With paths, the engine sets aside the baseline entries for paths not audited (neither new nor fixed).
            report = try engine.audit(only: restriction, baseline: baseline, failOn: failOn, events: printer.render)
        } catch {
            printer.finish()
            if case .cancelled = error { throw SignalCancellation.failure }
            // An unreadable root is said as the file-system error it is (74), naming the root as given: the
            // error's own path is root-relative, and the root itself would read as '.'.
            guard case .fileSystem(let e) = error else { throw error }
            let what = e.path.isEmpty ? "the root '\(PrintableText.escapingControls(rootPath))'" : "'\(e.path.escaped)' under '\(rootPath)'"
            throw CommandFailure(code: .ioError, message: "cannot audit: \(what): \(e.reason)")
        }
        printer.finish()

        if let writeBaselinePath {
            let written = Baseline(policy: loaded.policy.name, findings: report.findings)
            try OutputFile.write(Array(try written.jsonData()), to: writeBaselinePath)
            report.apply(written)
            Terminal.err("Wrote a baseline of \(written.entries.count) finding\(written.entries.count == 1 ? "" : "s") to \(writeBaselinePath).")
        }

        // No finding at all: a quiet text audit says nothing (the exit code says it passed).
        if quiet && format == .text && outputPath == nil && report.findings.isEmpty { return .success }
        let rendered = try format.render(report, workingDirectory: OutputFile.workingDirectory)
        if format == .github {
            // Workflow commands only on stdout; the plain lines a person reads go to stderr (also in the log).
            for line in GitHubReport(workingDirectory: OutputFile.workingDirectory).logLines(report) { Terminal.err(line) }
        }
        if let outputPath {
            try OutputFile.write(Array(rendered.utf8), to: outputPath)
            // The file is for the CI system; the log still says how the audit went.
            Terminal.out(report.summaryLine)
        } else {
            Terminal.out(rendered, terminator: "")
        }
        return report.passes ? .success : .findings
    }

    static func readBaseline(_ path: String) throws -> Baseline {
        // Read as plan files are: a regular file of at most 1 GiB, never a device or a FIFO, and only under
        // the trust rule (a baseline another user could write could hide any finding from a CI gate).
        let bytes: [UInt8]
        do {
            bytes = try TrustedFile.read(path, limit: PlanFile.sizeLimit, what: "baseline")
        } catch {
            if case .io(let e) = error { throw CommandFailure(code: .ioError, message: "cannot read \(path): \(e.errno)") }
            throw CommandFailure(code: .invalidPolicy, message: "\(error)")
        }
        do throws(BaselineError) {
            return try Baseline(json: Data(bytes))
        } catch {
            throw CommandFailure(code: .invalidPolicy, message: "\(path): \(error.message)")
        }
    }
}

/// Files the commands write for the user (reports, baselines, units), outside any policy root: written
/// whole or not at all (a temporary file beside the target, fsync, rename over it).
enum OutputFile {
    static var workingDirectory: String? { PathNormalization.workingDirectory }

    /// `path` made absolute against the working directory, without resolving symlinks (the one normalisation).
    static func absolute(_ path: String) -> String { PathNormalization.absolute(path) }

    /// Writes `bytes` to `path`, creating missing parent directories when asked. The folder is reached as a
    /// root's path is (PathChase: a symlink on the way followed only when root, the euid or the folder's own
    /// user made it and no one else can write above it; otherwise refused, 74), and everything after happens on
    /// its descriptor: the temporary `NAME.policyctl-PID.tmp` made O_CREAT|O_EXCL|O_NOFOLLOW, fsynced, then
    /// renamed over NAME (a symlink there is replaced, never followed).
    static func write(_ bytes: [UInt8], to path: String, createDirectories: Bool = false,
                      permissions: UInt32 = 0o644) throws(CommandFailure) {
        do throws(FileSystemError) {
            if createDirectories, let slash = path.lastIndex(of: "/"), slash != path.startIndex {
                try PathChase.makeDirectories(String(path[..<slash]), permissions: 0o755)
            }
            let (folder, name) = try PathChase.folder(holding: path)
            let temporary = FileName(unchecked: name.bytes + Array(".policyctl-\(system_getpid()).tmp".utf8))
            do throws(FileSystemError) {
                let file = try folder.handle.openFile(temporary, options: [.writeOnly, .create, .exclusive], permissions: permissions)
                try file.write(bytes)
                try file.sync()
                try folder.handle.rename(temporary, to: name, noReplace: false)
            } catch {
                try? folder.handle.removeFileIfPresent(temporary)
                throw error
            }
        } catch {
            throw CommandFailure(code: .ioError, message: "cannot write \(PrintableText.escapingControls(path)): \(error.reason)")
        }
    }
}
