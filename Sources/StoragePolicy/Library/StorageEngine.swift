// The library's front door: one policy and one root, with plan, apply, audit, recover and journal as the
// CLI runs them (lock, recovery first, journal). Never prints; never acts outside the root.
import Foundation
@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyModel
@_spi(Layers) import StoragePolicyPlan
@_spi(Layers) import StoragePolicyEvaluation
@_spi(Layers) import StoragePolicyApply
@_spi(Layers) import StoragePolicyReports

/// Runs a storage policy against a root directory: the same planner, apply, journal and recovery as
/// `policyctl`, for apps (at launch) and Swift scripts.
///
/// ```swift
/// let engine = try StorageEngine(policyFile: "policy.yaml", root: container)
/// let plan = try engine.plan()                 // what would change; touches nothing
/// let result = try engine.apply(plan)          // journaled; rolled back whole on failure
/// ```
///
/// A value: copy it and use it from any thread. The synchronous methods block the calling thread for the
/// walk (which itself runs on `options.threads` threads); the `async` ones run the work on a thread of
/// the engine's own pool, never on Swift's cooperative pool, so a UI stays responsive.
public struct StorageEngine: Sendable {
    /// The policy this engine applies.
    public let policy: Policy
    /// The root directory the policy's paths are relative to, as given.
    public let root: String
    /// How plans are made: the evaluation time, walking threads, open-directory budget.
    public var planOptions: PlanOptions
    /// Whether `apply`, `recover` and `journal` wait for another run holding the root's lock (true), or
    /// fail at once with ``EngineError/lockHeld(pid:)`` (false: what an app at launch usually wants).
    public var waitForLock: Bool
    /// Where the lock and the journal are kept: nil for ROOT/.policyctl, or a directory outside the root
    /// (created 0700 when missing, its parent must exist), like `policyctl apply --state-dir`. With it, a
    /// ROOT/.policyctl someone else left is ignored. Staging stays on the root's filesystem.
    public var stateDirectory: String? = nil
    /// The files the app says are busy (a download in flight, a document open in an editor), by root-relative
    /// path; nil: none. What no process table can know on iOS, where only the app's own processes hold its
    /// files. An in-use-checked delete (`inUse: skip`, the default of expire, quota and trash) of such a path,
    /// or of a folder holding one, is kept, when planning and again just before the delete; the plan lists it as
    /// `in use: the app says it is busy`. Called from the walking threads, hence `@Sendable`.
    public var inUse: (@Sendable (RelativePath) -> Bool)? {
        get { planOptions.busyFiles }
        set { planOptions.busyFiles = newValue }
    }

    /// An engine for `policy` (loaded from YAML, or built with the DSL) over `root`.
    public init(policy: Policy, root: String, planOptions: PlanOptions = PlanOptions(), waitForLock: Bool = true) {
        self.policy = policy; self.root = root; self.planOptions = planOptions; self.waitForLock = waitForLock
    }

    /// An engine for the policy in the YAML file at `policyFile`.
    /// - Throws: ``EngineError/invalidPolicy(_:)`` with every problem at `file:line:col`.
    public init(policyFile: String, root: String, planOptions: PlanOptions = PlanOptions()) throws(EngineError) {
        do { self.init(policy: try PolicyLoader.load(contentsOf: policyFile).policy, root: root, planOptions: planOptions) }
        catch { throw .invalidPolicy(error) }
    }

    /// An engine for `policy` over the folder at the file URL `root` (an app's container, say).
    public init(policy: Policy, root: URL, planOptions: PlanOptions = PlanOptions(), waitForLock: Bool = true) {
        self.init(policy: policy, root: StorageEngine.filePath(root), planOptions: planOptions, waitForLock: waitForLock)
    }

    /// An engine for the policy in the YAML file at the file URL `policyFile`, over the folder at `root`.
    /// - Throws: ``EngineError/invalidPolicy(_:)`` with every problem at `file:line:col`.
    public init(policyFile: URL, root: URL, planOptions: PlanOptions = PlanOptions()) throws(EngineError) {
        try self.init(policyFile: StorageEngine.filePath(policyFile), root: StorageEngine.filePath(root), planOptions: planOptions)
    }

    /// The root as a file URL.
    public var rootURL: URL { URL(fileURLWithPath: root, isDirectory: true) }

    /// A file URL's path, as the byte path the engine opens (not percent-encoded). Any other URL has no file to
    /// open: its path is used as given, and opening it fails naming it.
    private static func filePath(_ url: URL) -> String {
        var path = url.path(percentEncoded: false)
        // A directory URL ends in "/": the root is named as the String forms name it.
        while path.count > 1, path.hasSuffix("/") { path.removeLast() }
        return path
    }

    /// An engine for the policy in `yaml`; `file` names it in diagnostics.
    /// - Throws: ``EngineError/invalidPolicy(_:)`` with every problem at `file:line:col`.
    public init(yaml: String, file: String = "<policy>", root: String, planOptions: PlanOptions = PlanOptions()) throws(EngineError) {
        do { self.init(policy: try PolicyLoader.load(yaml: yaml, file: file).policy, root: root, planOptions: planOptions) }
        catch { throw .invalidPolicy(error) }
    }

    // MARK: Plan

    /// Walks the root once and returns what applying the policy would change. Changes nothing on disk.
    /// Blocks the calling thread. `progress` is called now and then from the walking threads, one call at a time.
    /// - Throws: ``EngineError/fileSystem(_:)`` when the root cannot be opened or read.
    public func plan(progress: (@Sendable (PlanProgress) -> Void)? = nil) throws(EngineError) -> Plan {
        try plan(only: nil, progress: progress)
    }

    /// ``plan(progress:)`` judging only the paths `restriction` names (and what is under them): what
    /// `policyctl audit PATH...` and `--changed-since` look at. The rest of the tree is not walked.
    public func plan(only restriction: PathRestriction?,
                     progress: (@Sendable (PlanProgress) -> Void)? = nil) throws(EngineError) -> Plan {
        let planner = Planner(policy: policy, root: root, options: planOptions)
        var callback: (@Sendable (Int, RelativePath) -> Void)? = nil
        if let progress {
            callback = { seen, directory in progress(PlanProgress(entriesScanned: seen, directory: directory)) }
        }
        do {
            return try planner.plan(only: restriction, progress: callback)
        } catch {
            throw EngineError.wrap(error)
        }
    }

    /// ``plan(only:progress:)`` sending ``PlanEvent/planning(_:)`` while it walks (from the walking threads, one
    /// call at a time), then ``PlanEvent/planned(_:)``: what `policyctl plan` renders.
    public func plan(only restriction: PathRestriction? = nil,
                     events: @escaping @Sendable (PlanEvent) -> Void) throws(EngineError) -> Plan {
        let plan = try plan(only: restriction) { events(.planning($0)) }
        events(.planned(plan))
        return plan
    }

    /// Starts planning on a thread of its own and returns at once with the progress as an `AsyncStream`
    /// and the plan to await:
    ///
    /// ```swift
    /// let run = engine.startPlan()
    /// for await step in run.progress { label.text = "\(step.entriesScanned) entries" }
    /// let plan = try await run.plan()
    /// ```
    public func startPlan() -> PlanningRun { PlanningRun(engine: self) }

    // MARK: Apply

    /// Plans and applies in one go, under the root's lock and after recovering any interrupted apply:
    /// what an app runs at launch. The policy's `max-delete` cap applies.
    /// - Throws: ``EngineError/apply(_:)`` when apply was refused or rolled back (nothing changed), or failed
    ///   to roll back (``EngineError/needsRecovery``); ``EngineError/lockHeld(pid:)``; ``EngineError/fileSystem(_:)``.
    public func apply(maxDelete: DeleteLimit? = nil) throws(EngineError) -> ApplyResult {
        try applyUnconfirmed(request(.policy(policy), maxDelete: maxDelete))
    }

    /// Applies a plan made earlier by this engine's policy on this root, after recovering any interrupted
    /// apply. Targets that changed since the plan are skipped and reported, never touched.
    /// - Throws: ``EngineError/stalePlan(_:)`` for a plan of another root or policy, ``EngineError/planRefused(_:)``
    ///   for an action the policy never makes, and what ``apply(maxDelete:)`` throws.
    public func apply(_ plan: Plan, maxDelete: DeleteLimit? = nil) throws(EngineError) -> ApplyResult {
        try applyUnconfirmed(request(.plan(plan, policy: policy), maxDelete: maxDelete))
    }

    /// Only a `confirm` that declines makes the apply return nil, and these requests have none; were one ever
    /// to, the caller hears "declined", nothing changed, rather than a trap.
    func applyUnconfirmed(_ request: ApplyRequest, events: (ApplyEvent) -> Void = { _ in }) throws(EngineError) -> ApplyResult {
        guard let result = try StorageEngine.apply(request, events: events) else {
            throw .apply(.refused("apply declined; nothing was changed"))
        }
        return result
    }

    func request(_ source: ApplyRequest.Source, maxDelete: DeleteLimit?) -> ApplyRequest {
        var request = ApplyRequest(root: root, source: source)
        request.maxDelete = maxDelete
        request.waitForLock = waitForLock
        request.stateDirectory = stateDirectory
        request.planOptions = planOptions
        return request
    }

    // MARK: Audit, recover, journal

    /// Plans and reports every change apply would make and every violation as findings with a severity,
    /// ready for the JSON, SARIF, JUnit and GitHub renderers. Changes nothing on disk.
    /// With `restriction`, only the paths it names are judged (see ``plan(only:progress:)``).
    public func audit(only restriction: PathRestriction? = nil, baseline: Baseline? = nil, failOn: Rule.Severity = .warning,
                      progress: (@Sendable (PlanProgress) -> Void)? = nil) throws(EngineError) -> AuditReport {
        AuditReport(plan: try plan(only: restriction, progress: progress), policy: policy, baseline: baseline, failOn: failOn)
    }

    /// ``audit(only:baseline:failOn:progress:)`` sending its steps: ``PlanEvent/baselineNarrowed(kept:setAside:)``
    /// when a restriction sets baseline entries aside, ``PlanEvent/planning(_:)`` while it walks, then
    /// ``PlanEvent/planned(_:)`` and ``PlanEvent/audited(_:)``. With a restriction, the baseline entries for paths
    /// it does not name are left out: a path not audited is neither new nor fixed.
    public func audit(only restriction: PathRestriction?, baseline: Baseline?, failOn: Rule.Severity = .warning,
                      events: @escaping @Sendable (PlanEvent) -> Void) throws(EngineError) -> AuditReport {
        var baseline = baseline
        if let restriction, let known = baseline {
            let kept = known.entries.filter { RelativePath($0.path).map(restriction.covers) ?? false }
            baseline = Baseline(policy: known.policy, entries: kept)
            events(.baselineNarrowed(kept: kept.count, setAside: known.entries.count - kept.count))
        }
        let plan = try plan(only: restriction, events: events)
        let report = AuditReport(plan: plan, policy: policy, baseline: baseline, failOn: failOn)
        events(.audited(report))
        return report
    }

    /// Which rules hold `path` (root-relative), what each says about it and why, and what the plan does to it.
    /// Changes nothing on disk.
    public func explain(_ path: RelativePath) throws(EngineError) -> Explanation {
        do { return try Explainer(policy: policy, root: root, options: planOptions).explain(path) }
        catch { throw EngineError.wrap(error) }
    }

    /// ``explain(_:)`` sending ``PlanEvent/explained(_:)`` when it is ready: what `policyctl explain` renders.
    public func explain(_ path: RelativePath, events: (PlanEvent) -> Void) throws(EngineError) -> Explanation {
        let explanation = try explain(path)
        events(.explained(explanation))
        return explanation
    }

    /// Finishes or rolls back whatever apply was interrupted on this root (a crash, a power cut).
    /// Idempotent; `apply` runs it first anyway. A root nothing was ever applied to has nothing to recover.
    public func recover() throws(EngineError) -> RecoveryReport {
        try StorageEngine.recover(root: root, stateDirectory: stateDirectory, waitForLock: waitForLock) ?? RecoveryReport()
    }

    /// Recovery on `root`, under its lock, sending each step to `events` (``ApplyEvent/opened(root:)``,
    /// state notices, ``ApplyEvent/waitingForLock(pid:)`` or ``ApplyEvent/lockHeld(pid:)``, and
    /// ``ApplyEvent/recovered(_:)`` when it did something). Never creates ROOT/.policyctl: nil when there is
    /// none (nothing was ever applied there). A `stateDirectory` is set up like apply's.
    public static func recover(root: String, stateDirectory: String? = nil, waitForLock: Bool = true,
                               events: (ApplyEvent) -> Void = { _ in }) throws(EngineError) -> RecoveryReport? {
        guard let session = try EngineSession.open(root: root, stateDirectory: stateDirectory, create: false,
                                                   events: events) else { return nil }
        let lock = try session.lock(wait: waitForLock, events: events)
        return try session.recover(holding: lock, events: events)
    }

    /// Every transaction the root's journal records, oldest first: when, by which policy, what it did.
    /// Empty when nothing was ever applied here. Reads only; takes no lock.
    /// - Throws: ``EngineError/untrustedState(_:)`` when the state folder was not made by
    ///   this user (another owner, group or other write, a symlink): it is never read.
    public func journal() throws(EngineError) -> [TransactionSummary] {
        try StorageEngine.journal(root: root, stateDirectory: stateDirectory)?.transactions ?? []
    }

    /// The journal of `root` read whole (transactions and damaged records), or nil when there is no state
    /// folder (ROOT/.policyctl, or `stateDirectory`, is never created for this). Sends
    /// ``ApplyEvent/opened(root:)`` and any state notices. Reads only; takes no lock.
    public static func journal(root: String, stateDirectory: String? = nil,
                               events: (ApplyEvent) -> Void = { _ in }) throws(EngineError) -> JournalHistory.Reading? {
        guard let session = try stateToRead(root: root, stateDirectory: stateDirectory, events: events) else { return nil }
        do { return try JournalHistory.read(session.state) } catch { throw EngineError.wrap(error) }
    }

    /// The state folder `journal` and `journalPaths` read, through the trust checks; nil when there is none (a
    /// state folder elsewhere that does not exist yet is not created to be read).
    private static func stateToRead(root: String, stateDirectory: String?,
                                    events: (ApplyEvent) -> Void) throws(EngineError) -> EngineSession? {
        if let stateDirectory, case .failure(let error) = Result(catching: { () throws(FileSystemError) in
            _ = try DirectoryHandle.open(root: stateDirectory)
        }), error.errno == .noSuchFile {
            do { _ = try DirectoryHandle.open(root: root) } catch { throw .fileSystem(error) }
            events(.opened(root: PathNormalization.canonical(root)))
            return nil
        }
        return try EngineSession.open(root: root, stateDirectory: stateDirectory, create: false, events: events)
    }

    /// Transaction `transaction` of `root`'s journal path by path (`policyctl journal show`): nil when there is
    /// no state folder or no such transaction. Opens the state folder as ``journal(root:stateDirectory:events:)``
    /// does, through the same trust checks; reads only, takes no lock.
    public static func journalPaths(root: String, stateDirectory: String? = nil, transaction: String,
                                    events: (ApplyEvent) -> Void = { _ in }) throws(EngineError) -> TransactionPaths? {
        guard let session = try stateToRead(root: root, stateDirectory: stateDirectory, events: events) else { return nil }
        do {
            // `last`: the newest transaction; a journal with none has no such transaction.
            let id = transaction == "last" ? try JournalFiles.newest(in: session.state) : transaction
            guard let id else { return nil }
            return try JournalHistory.paths(session.state, transaction: id)
        } catch {
            throw EngineError.wrap(error)
        }
    }

    /// The FreeDesktop trash folders of this user (every user's volume trashes when run as root): `homeTrash`
    /// when it is a folder this user owns, and on each volume of `mountPoints` `.Trash/UID` (only in a sticky,
    /// root-owned `.Trash`) or `.Trash-UID` (owned by UID); every place that fails a check is in `ignored`, with why.
    /// Reads only.
    public static func discoverTrash(mountPoints: [String], homeTrash: String?) -> TrashDiscovery {
        TrashDiscoverer.discover(euid: system_geteuid(), homeTrash: homeTrash, mountPoints: mountPoints)
    }

    /// The canonical absolute path of the root (realpath), as the journal and `.trashinfo` files record it.
    static func canonical(_ path: String) -> String { PathNormalization.canonical(path) }

    static func absolute(_ path: String) -> String { PathNormalization.absolute(path) }
}
