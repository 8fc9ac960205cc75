// `policyctl status`: how full each limited rule's scope is, what the next apply would free, the volume's free
// space against the pressure thresholds, the last apply and the next timer run. Read-only: it plans as `plan`
// does and reads the journal as `journal` does (same state-folder trust checks); it changes nothing.
import Foundation
import StoragePolicy

struct StatusCommand: Command {
    static let summary = CommandSummary(
        name: "status",
        abstract: "Show each rule's scope against its limits, what the next apply frees, free space and the last apply.",
        discussion: "Plans the policy read-only, as 'plan' does, and measures the scope of every quota, trash and expire rule: its size (allocated, as du counts, hard links once) and entry count, against the rule's size limit as a bar. Adds what the next apply would free per rule, the root volume's free space against each pressure rule's thresholds, the last apply from the journal (read as 'policyctl journal' reads it, refusing untrusted state the same way) and the next timer run. --format json for tools (Docs/status.md), markdown for a CI step summary, prometheus for node_exporter's textfile collector. Exit codes: 0 shown, 64 usage, 65 invalid policy, 74 I/O error or refused state.",
        usage: ["--policy <file> [--root <dir>] [--format text|json|markdown|prometheus] [--state-dir <dir>]"]
    )

    struct Options: ParsableOptions {
        var policy: String?
        var root: String?
        var format = "text"
        var stateDir: String?
        var forceRoot = false

        static var options: [OptionField<Self>] { [
            .option(\.policy, "policy", short: "p", value: "file", help: "(required) The policy whose rules to measure.", completion: .file),
            .option(\.root, "root", short: "r", value: "dir", help: "The directory the policy governs (required unless the policy lists its roots: then every listed root is shown, or the one this names).", completion: .directory),
            .option(\.format, "format", value: "format", help: "Output format.", default: "text", values: ["text", "json", "markdown", "prometheus"]),
            .shared(\.stateDir, RootSession.stateDirOption),
            .flag(\.forceRoot, "force-root", help: "Allow '/', the home directory itself or a system directory as the root."),
        ] }
    }

    let policyPath: String
    /// `--root`; nil for a policy that lists its roots: every listed root is shown (RootsRun).
    let rootArgument: String?
    let forceRoot: Bool
    let format: String
    let stateDir: String?

    init(_ options: Options) throws {
        let command = "policyctl status"
        policyPath = try PolicyArgument.resolve(options.policy, useSet: false) ?? options.required(\.policy, command: command)
        rootArgument = options.root
        forceRoot = options.forceRoot
        format = options.format
        stateDir = options.stateDir
    }

    func run() throws -> ExitCode {
        // The policy's own errors first (65), then whether it needs --root (64), as plan and apply decide it.
        try RootsRun.requireRoot(policyPath, root: rootArgument, command: "policyctl status")
        let loaded = try QuietOutput.load(policyPath, quiet: false)
        switch try RootsRun.select(loaded.policy, root: rootArgument, stateDir: stateDir, user: true, command: "policyctl status") {
        case .single(let policy, let root, let state):
            var one = loaded
            one.policy = policy
            return try runOne(one, root: root, stateDirectory: state)
        case .several(let targets):
            // Every listed (and discovered) root, one after another, each under a header (text, markdown) or as
            // one element of a JSON array; a root that fails is named and the others are still shown.
            var codes: [ExitCode] = []
            if format == "json" { Terminal.out("[") }
            for (i, target) in targets.enumerated() {
                if format == "text" || format == "markdown" { Terminal.out(RootsRun.header(target, index: i, count: targets.count)) }
                var one = loaded
                one.policy = target.policy
                do {
                    codes.append(try runOne(one, root: target.path, stateDirectory: target.stateDirectory,
                                            separator: format == "json" && i > 0 ? "," : ""))
                } catch {
                    let (code, message) = RootsRun.message(error)
                    codes.append(code)
                    Terminal.err("error: " + RootsRun.failed(target, message))
                }
            }
            if format == "json" { Terminal.out("]") }
            return RootsRun.worst(codes)
        }
    }

    /// One root's status, as `status --root` prints it (`separator` before a JSON report in an array).
    func runOne(_ loaded: LoadedPolicy, root: String, stateDirectory: String?, separator: String = "") throws -> ExitCode {
        try RootSafety.check(root, force: forceRoot, command: "policyctl status")
        let stateDir = stateDirectory
        // The journal first: untrusted state is refused (74, the message `journal` gives) before any walk.
        let reading = try JournalCommand.readState(root: root) { events throws(EngineError) in
            try StorageEngine.journal(root: root, stateDirectory: stateDir, events: events)
        }
        for damaged in reading?.damaged ?? [] { Terminal.err("note: \(damaged)") }
        // What the quarantine holds, read as `policyctl quarantine` reads it (after the journal: the same state).
        let held = reading == nil ? nil : try JournalCommand.readState(root: root) { events throws(EngineError) in
            try StorageEngine.quarantine(root: root, stateDirectory: stateDir, events: { _ in })
        }
        for note in held?.notes ?? [] { Terminal.err("note: \(note)") }
        var options = PlanOptions()
        if !loaded.policy.pressure.isEmpty { options.quarantineHeld = held?.bytes ?? 0 }
        let plan = try PlanCommand.makePlan(loaded.policy, root: root, options: options)
        var status = try StatusReport.gather(policy: loaded.policy, policyFile: MetricsFile.policyLabel(policyPath), plan: plan, journal: reading?.transactions ?? [])
        status.quarantine = StatusReport.Quarantine(held)
        switch format {
        case "json": Terminal.out(bytes: Array(separator.utf8) + (try PrettyJSON.encode(status)) + [0x0A])
        case "markdown": Terminal.out(StatusFormats.markdown(status), terminator: "")
        case "prometheus": Terminal.out(StatusFormats.prometheus(status), terminator: "")
        default: Terminal.out(StatusFormats.text(status, bars: StatusFormats.barStyle()), terminator: "")
        }
        return .success
    }
}

/// What `status` shows, in every format; its JSON form is described in Docs/status.md.
struct StatusReport: Codable, Sendable {
    struct Rule: Codable, Sendable {
        var name: String
        /// quota, trash or expire.
        var kind: String
        /// The scope, relative to the root ("." for the root itself).
        var path: String
        /// Allocated bytes under the scope (hard links once); 0 when the scope does not exist.
        var bytes: Int64
        /// Regular files under the scope (quota, expire) or items in the trash (trash).
        var entries: Int
        /// The size limit (quota max, trash maxSize), when the rule has one.
        var limitBytes: Int64?
        /// quota/trash maxEntries, when set.
        var limitEntries: Int?
        /// The age limit (expire after, trash retain), as the policy says it.
        var limitAge: String?
        /// True for `quota: { per: owner }`: the limit applies to each owner's files, not the scope's sum.
        var perOwner: Bool
        /// Bytes the next apply would delete for this rule (the plan summary's bytesFreedByRule).
        var nextApplyBytes: Int64
        /// False when the scope folder is missing (or not a folder).
        var present: Bool
    }

    struct Threshold: Codable, Sendable {
        var name: String
        var freeBelowBytes: Int64
        var freeUntilBytes: Int64
        /// True when free space is below freeBelow now: the next apply evicts through this rule.
        var active: Bool
    }

    struct Volume: Codable, Sendable {
        var freeBytes: Int64
        var sizeBytes: Int64
        var pressure: [Threshold]
    }

    /// What the quarantine holds (Docs/status.md): entries and bytes, and when the earliest window ends.
    struct Quarantine: Codable, Sendable {
        var entries: Int
        var bytes: Int64
        var transactions: Int
        /// RFC 3339: the first apply after it purges the earliest window; nil when nothing is held.
        var nextPurge: String?

        init(_ contents: QuarantineContents?) {
            entries = contents?.entries ?? 0
            bytes = contents?.bytes ?? 0
            transactions = Set(contents?.windows.map(\.transaction) ?? []).count
            nextPurge = contents?.windows.filter { !$0.entries.isEmpty }.map(\.until).min()
        }
    }

    struct LastApply: Codable, Sendable {
        var id: String
        var time: String
        var timestampSeconds: Int64
        var outcome: String
        var changes: Int
        var skipped: Int
        var bytesFreed: Int64
    }

    var policy: String
    /// The policy file, absolute (the `policy` label of the Prometheus format, as `apply --metrics-file` sets it).
    var policyFile: String
    var root: String
    var rules: [Rule]
    /// Every rule that would delete, with its bytes (rules not listed above included).
    var nextApplyBytesByRule: [String: Int64]
    var nextApplyBytes: Int64
    /// nil when the volume's free space cannot be read.
    var volume: Volume?
    /// The newest apply (or reclaim) transaction; nil when the journal has none.
    var lastApply: LastApply?
    /// Bytes freed over every committed transaction in the journal.
    var bytesFreedTotal: Int64
    /// The systemd timer `schedule --install` writes for this policy: its next elapse, `none installed`, or why it
    /// is not known (StatusTimer, Docs/status.md).
    var nextTimerRun: String
    /// What the quarantine holds (0 entries when the policy has none, or nothing is held).
    var quarantine = Quarantine(nil)

    static func gather(policy: Policy, policyFile: String, plan: Plan, journal: [TransactionSummary]) throws -> StatusReport {
        let byRule = plan.summary.bytesFreedByRule ?? [:]
        let handle: DirectoryHandle
        do { handle = try DirectoryHandle.open(root: plan.root) } catch {
            throw CommandFailure(code: .ioError, message: "cannot measure '\(PrintableText.escapingControls(plan.root))': \(error.reason)")
        }
        // Opened by path a second time: it must be the directory the plan walked, not one swapped in since.
        if let f = plan.fingerprint, let s = try? handle.status(), s.device != f.rootDevice || s.inode != f.rootInode {
            throw CommandFailure(code: .ioError, message: "'\(plan.root)' is no longer the directory the plan walked (replaced while status ran); run status again")
        }
        var rules: [Rule] = []
        for rule in policy.rules {
            var r = Rule(name: rule.name, kind: "", path: rule.path.isEmpty ? "." : rule.path.escaped, bytes: 0, entries: 0,
                         limitBytes: nil, limitEntries: nil, limitAge: nil, perOwner: false,
                         nextApplyBytes: byRule[rule.name] ?? 0, present: false)
            switch rule.kind {
            case .quota(let q):
                r.kind = "quota"; r.limitBytes = q.max.bytes; r.limitEntries = q.eviction.maxEntries; r.perOwner = q.per == .owner
            case .trash(let t):
                r.kind = "trash"; r.limitBytes = t.maxSize?.bytes; r.limitEntries = t.eviction.maxEntries; r.limitAge = t.retain.description
            case .expire(let e):
                r.kind = "expire"; r.limitAge = e.after.description
            default: continue
            }
            if let measured = ScopeMeasure.measure(handle, rule.path, itemsAreEntries: r.kind == "trash") {
                r.bytes = measured.bytes; r.entries = measured.entries; r.present = true
            }
            rules.append(r)
        }
        var volume: Volume? = nil
        // The plan's own snapshot when pressure rules took one; a fresh statvfs of the root's volume otherwise.
        let planned = plan.summary.volumes?.first
        if let free = planned?.freeBefore, let size = planned?.size {
            volume = Volume(freeBytes: free, sizeBytes: size, pressure: [])
        } else if let space = VolumeSpace.measure(descriptor: handle.descriptor) {
            volume = Volume(freeBytes: space.available, sizeBytes: space.total, pressure: [])
        }
        if var v = volume {
            v.pressure = policy.pressure.map { p in
                let below = p.freeBelow.bytes(ofVolume: v.sizeBytes)
                return Threshold(name: p.name, freeBelowBytes: below, freeUntilBytes: p.freeUntil.bytes(ofVolume: v.sizeBytes),
                                 active: v.freeBytes < below)
            }
            volume = v
        }
        let applies = journal.filter { $0.kind == .apply }
        let last = applies.last.map { t in
            LastApply(id: t.id, time: t.time, timestampSeconds: Self.seconds(t.endTime ?? t.time), outcome: t.outcome.rawValue,
                      changes: t.counts.total, skipped: t.skipped.count, bytesFreed: t.bytesFreed)
        }
        let freedTotal = journal.filter { $0.outcome == .committed }.reduce(Int64(0)) { $0 + $1.bytesFreed }
        return StatusReport(policy: policy.name, policyFile: policyFile, root: plan.root, rules: rules, nextApplyBytesByRule: byRule,
                            nextApplyBytes: plan.summary.bytesFreed, volume: volume, lastApply: last,
                            bytesFreedTotal: freedTotal,
                            nextTimerRun: StatusTimer.nextRun(policyName: policy.name, user: system_geteuid() != 0,
                                                              home: ProcessInfo.processInfo.environment["HOME"]))
    }

    /// Unix seconds of an RFC 3339 UTC time as the journal writes it (0 when it cannot be read).
    static func seconds(_ rfc3339: String) -> Int64 {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        if let d = formatter.date(from: rfc3339) { return Int64(d.timeIntervalSince1970) }
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: rfc3339).map { Int64($0.timeIntervalSince1970) } ?? 0
    }
}

/// One scope's size and entry count, measured through directory descriptors: never follows a symlink, never
/// crosses a mount (openDirectory refuses both), skips the state folder, and reads nothing but metadata.
enum ScopeMeasure {
    /// nil when the scope is missing or not a folder. Unreadable folders below it are left out of the sums.
    static func measure(_ root: DirectoryHandle, _ scope: RelativePath, itemsAreEntries: Bool) -> (bytes: Int64, entries: Int)? {
        guard let top = try? root.openDirectory(at: scope), let scopeDevice = try? top.status().device else { return nil }
        var bytes: Int64 = 0
        var files = 0
        var items = 0
        var seenInodes = Set<UInt64>()
        // Folders still to list, by path under the scope, each opened (component by component, never following
        // a symlink) only when its turn comes: one descriptor open at a time however wide the tree, and an
        // explicit stack, so a hostile tree thousands of folders deep overflows neither the stack nor the fds.
        var pending: [RelativePath] = [.root]
        while let path = pending.popLast() {
            guard let dir = path.isEmpty ? top : try? top.openDirectory(at: path), let entries = try? dir.entries() else { continue }
            let atTop = path.isEmpty
            // A trash's items: its direct children, or in a FreeDesktop trash those of files/ (never files/,
            // info/ or an app trash's .policyctl-info index themselves).
            let holdsItems = atTop || (path.components.count == 1 && path.lastComponent == TrashFolder.filesName)
            for entry in entries {
                if atTop && scope.isEmpty && entry.name.bytes.starts(with: Array(".policyctl".utf8)) { continue }
                guard let s = try? dir.status(of: entry.name) else { continue }
                if holdsItems && !(atTop && TrashFolder.isReservedInAppTrash(entry.name)) { items += 1 }
                if s.type == .directory {
                    // Not crossed: a mount point below the scope (openDirectory would refuse it too).
                    if s.device == scopeDevice { pending.append(path.appending(entry.name)) }
                    continue
                }
                if s.linkCount <= 1 || seenInodes.insert(s.inode).inserted {
                    bytes += s.allocatedSize
                    if s.type == .regular { files += 1 }
                }
            }
        }
        return (bytes, itemsAreEntries ? items : files)
    }
}
