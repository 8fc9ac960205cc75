// `policyctl reclaim --bytes 2GiB`: make room on request ("before this 2 GB download") through the policy's
// pressure rules, whatever their freeBelow says: only regenerable quota rules' files, never past minAge and keep,
// as one journaled transaction like apply's. Says how far short it fell: exit 1 when the floors left it short.
import StoragePolicy

struct ReclaimCommand: Command {
    static let summary = CommandSummary(
        name: "reclaim",
        abstract: "Free N bytes now through the policy's pressure rules, or say how far short that falls.",
        discussion: """
            Plans the policy with its pressure rules acting at once (whatever their freeBelow), evicting through \
            the regenerable quota rules they name until N bytes more than now are free, then applies that plan as \
            one journaled transaction, like 'policyctl apply'. minAge, keep and max-delete still hold. \
            Exit codes: 0 the room was made; 1 applied, but the floors (minAge, keep, nothing else regenerable) \
            left it short, or items were skipped; 3 rolled back; 64 usage (including no --yes without a TTY); \
            65 invalid policy; 74 I/O.
            """,
        usage: ["--policy <file> --root <dir> --bytes <size> [--yes] [--state-dir <dir>]"]
    )

    struct Options: ParsableOptions {
        var policy: String?
        var root: String?
        var bytes: String?
        var yes = false
        var stateDir: String?

        static var options: [OptionField<Self>] { [
            .option(\.policy, "policy", short: "p", value: "file", help: "(required) The policy whose pressure rules make the room.", completion: .file),
            .option(\.root, "root", short: "r", value: "dir", help: "(required) The directory the policy governs.", completion: .directory),
            .option(\.bytes, "bytes", value: "size", help: "(required) How many bytes to free beyond the free space now: 2GiB, 500MB."),
            .flag(\.yes, "yes", short: "y", help: "Apply without asking. Required without a TTY."),
            .shared(\.stateDir, RootSession.stateDirOption),
        ] }
    }

    let policyPath: String
    let root: String
    let bytes: ByteSize
    let yes: Bool
    let stateDir: String?

    init(_ options: Options) throws {
        let command = "policyctl reclaim"
        policyPath = try PolicyArgument.resolve(options.policy, useSet: false) ?? options.required(\.policy, command: command)
        root = try options.required(\.root, command: command)
        bytes = try options.parsed(\.bytes, accepted: ByteSize.acceptedForms, command: command) { ByteSize(parsing: $0) }
            ?? { throw UsageError(message: "Missing --bytes <size> (how much room to make, e.g. --bytes 2GiB)", command: command) }()
        yes = options.yes
        stateDir = options.stateDir
    }

    func run() throws -> ExitCode {
        if !yes && !Terminal.stdinIsTTY {
            throw CommandFailure(code: .usage, message: "reclaim needs confirmation and there is no terminal to ask on; pass --yes")
        }
        try RootSafety.check(root, force: false, command: "policyctl reclaim")
        var request = ApplyRequest(root: root, source: .policyFile(policyPath))
        request.planOptions.reclaimBytes = bytes.bytes
        request.stateDirectory = stateDir
        request.defaultMaxDelete = ApplyCommand.defaultMaxDelete
        request.defaultMaxDeleteLabel = "the default max-delete for reclaim, \(ApplyCommand.defaultMaxDelete) (set max-delete in the policy to allow more)"
        let log = ApplyLog(logFormat: nil, perAction: false, quiet: false)
        if !yes {
            request.confirm = { plan, rootPath in
                log.preview(plan, root: rootPath)
                return Terminal.confirm("Apply these \(plan.actions.count) changes to \(PrintableText.escapingControls(rootPath))?")
            }
        }
        let printer = ApplyEventPrinter(log: log, started: ContinuousClock.now)
        let result: ApplyResult?
        do {
            result = try StorageEngine.apply(request, events: printer.render)
        } catch {
            printer.finishProgress()
            throw try printer.failure(error, root: request.root)
        }
        let freed = result?.report.bytesFreed ?? 0
        let short = bytes.bytes - freed
        if short > 0 {
            Terminal.out("reclaim: \(ByteSize.human(freed)) of the \(ByteSize.human(bytes.bytes)) asked freed; \(ByteSize.human(short)) short (the pressure rules' regenerable files, down to their minAge and keep, are all there was; see the plan's notes)")
            return .findings
        }
        Terminal.out("reclaim: \(ByteSize.human(freed)) freed, at least the \(ByteSize.human(bytes.bytes)) asked")
        return (result?.failed.isEmpty ?? true) ? .success : .findings
    }
}
