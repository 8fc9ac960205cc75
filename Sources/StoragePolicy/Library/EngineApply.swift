// The one apply sequence, for `policyctl apply` and the engine's own `apply` calls alike: open the root,
// check a saved plan (staleness, then every action against its policy), lock, recover, plan, confirm,
// apply. Each step is an ApplyEvent; nothing is printed. Nothing changes past a refused check.

@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyModel
@_spi(Layers) import StoragePolicyPlan
@_spi(Layers) import StoragePolicyEvaluation
@_spi(Layers) import StoragePolicyApply

extension StorageEngine {
    /// Carries out `request` as one journaled transaction, sending every step to `events` in order, each on
    /// the calling thread (the walk's progress too: the walk's threads leave it for this one to send).
    ///
    /// A saved plan is checked first, before waiting for the lock: stale (another root, or its policy changed)
    /// or holding an action its policy never makes, it is refused and nothing is done. Then, under the root's
    /// lock, an interrupted apply is recovered, the policy is planned (for the policy sources), `confirm` is
    /// asked, and the plan is applied.
    /// - Returns: what was applied (an empty report, no transaction, when the plan changes nothing), or nil
    ///   when `confirm` declined.
    /// - Throws: ``EngineError/stalePlan(_:)``, ``EngineError/planRefused(_:)``, ``EngineError/lockHeld(pid:)``,
    ///   ``EngineError/invalidPolicy(_:)``, ``EngineError/apply(_:)`` (refused, rolled back...), and the errors
    ///   of opening the root (``EngineError/fileSystem(_:)`` before ``ApplyEvent/opened(root:)``, planning after it).
    public static func apply(_ request: ApplyRequest,
                             events: (ApplyEvent) -> Void = { _ in }) throws(EngineError) -> ApplyResult? {
        // The progress callbacks of the walk and of the applier are escaping types; they never outlive this call.
        try withoutActuallyEscaping(events) { (events) throws(EngineError) -> ApplyResult? in
            try run(request, events: events)
        }
    }

    private static func run(_ request: ApplyRequest,
                            events: @escaping (ApplyEvent) -> Void) throws(EngineError) -> ApplyResult? {
        guard let session = try EngineSession.open(root: request.root, stateDirectory: request.stateDirectory,
                                                   create: true, events: events) else {
            throw .stateFolder(FileSystemError(.mkdir, path: .root, errno: .noSuchFile))
        }
        // A saved plan is refused before anything else: no waiting for the lock, no recovery. What passed is
        // the source the rest runs from: a saved plan's policy is the one its check read (never an optional).
        let source: CheckedSource
        switch request.source {
        case .savedPlan(let plan, let savedPath, let policyFile):
            if let problem = mismatch(plan, policyFile: policyFile, root: session.rootPath) {
                events(.planMismatch(problem))
                throw .planMismatch(problem)
            }
            let checked = try checkSaved(plan, policyPath: PathNormalization.absolute(policyFile), rootStatus: session.state.rootStatus,
                                         compiled: request.compiledPolicy, events: events)
            source = .plan(plan, policy: checked, planFile: PathNormalization.absolute(savedPath))
        case .plan(let plan, let policy):
            let current = Planner(policy: policy, root: request.root).fingerprint(session.state.rootStatus).policySHA256
            if let problem = PlanFile.staleness(of: plan, rootStatus: session.state.rootStatus,
                                                policyName: policy.name, policySHA256: current) {
                events(.stalePlan(problem))
                throw .stalePlan(problem)
            }
            if let invalid = PlanValidation(policy: policy).firstInvalid(in: plan) {
                events(.planRefused(invalid))
                throw .planRefused(invalid)
            }
            source = .plan(plan, policy: policy, planFile: nil)
        case .policyFile(let path):
            source = .policyFile(path)
        case .policy(let policy):
            source = .policy(policy)
        }

        let lock = try session.lock(wait: request.waitForLock, events: events)
        let recovery = try session.recover(holding: lock, events: events)

        let plan: Plan
        let policy: Policy
        var options = ApplyOptions(rootPath: session.rootPath, allOrNothing: request.allOrNothing)
        // A plan made here and its run share one strategy and so its /proc/locks listings (FlockListings): the
        // apply's first reading takes the one begun as the walk ended instead of waiting for its own. A strategy
        // the caller chose for the plan stays the plan's alone, as before.
        let sharedInUse = request.planOptions.inUseStrategy == nil
            ? InUseStrategies.platform(busy: request.planOptions.busyFiles).sharingFlockListings() : nil
        // The journal's and the quarantine's upkeep, before planning: what the purge frees is free when the plan
        // judges pressure.
        func maintained(_ policy: Policy) throws(EngineError) -> ApplyRequest {
            var planned = request
            if let space = try session.maintain(holding: lock, policy: policy, request: request, events: events) {
                planned.planOptions.freeSpace = space
            }
            return planned
        }
        switch source {
        case .policyFile(let path):
            do { policy = try PolicyLoader.load(contentsOf: path).policy } catch { throw .invalidPolicy(error) }
            plan = try makePlan(policy, root: session.rootPath, request: maintained(policy), inUse: sharedInUse, events: events)
            options.inUseStrategy = sharedInUse
            options.policyPath = policy.source?.file
            options.policySHA256 = plan.fingerprint?.policySHA256
        case .policy(let given):
            policy = given
            plan = try makePlan(policy, root: session.rootPath, request: maintained(policy), inUse: sharedInUse, events: events)
            options.inUseStrategy = sharedInUse
            options.policyPath = policy.source?.file
            options.policySHA256 = plan.fingerprint?.policySHA256
        case .plan(let given, let planner, let planFile?):
            // A saved plan: the journal names the plan file.
            (plan, policy) = (given, planner)
            _ = try maintained(policy)
            options.planFile = planFile
        case .plan(let given, let planner, nil):
            (plan, policy) = (given, planner)
            _ = try maintained(policy)
            options.policyPath = policy.source?.file
            options.policySHA256 = plan.fingerprint?.policySHA256
        }
        events(.planned(plan))
        if plan.actions.isEmpty {
            events(.nothingToDo)
            return ApplyResult(recovery: recovery, plan: plan, report: ApplyReport())
        }

        if request.unlimitedDeletes {
            // --max-delete none: the caller lifted every cap.
        } else if let limit = request.maxDelete {
            options.maxDelete = limit
            options.maxDeleteLabel = request.maxDeleteLabel ?? "maxDelete \(limit)"
        } else if let limit = policy.maxDelete {
            options.maxDelete = limit
            options.maxDeleteLabel = "the policy's max-delete \(limit)"
        } else if let limit = request.defaultMaxDelete {
            options.maxDelete = limit
            options.maxDeleteLabel = request.defaultMaxDeleteLabel ?? "the default max-delete \(limit)"
        }
        options.deadline = request.deadline
        options.deadlineLabel = request.deadlineLabel
        options.stagesEveryDelete = request.stagesEveryDelete
        options.unlinksInBackground = !request.unlinksInPlace
        options.inUseRules = InUseCheck.checkedRules(policy.rules)
        // The app's busy files (`StorageEngine.inUse`) are asked again just before each checked delete.
        options.busyFiles = request.planOptions.busyFiles
        options.layoutOwners = Dictionary(policy.layout.compactMap { entry in entry.owner.map { (entry.path, $0.id) } },
                                          uniquingKeysWith: { first, _ in first })
        // The policy decides which deletes the quarantine holds (never a saved plan); the plan only exempts
        // pressure's evictions, which must free space now.
        options.quarantineWindows = policy.quarantineWindows.mapValues(\.seconds)
        options.quarantineExempt = Set(plan.quarantine?.exempt?.map(\.path) ?? [])
        options.ownershipFilters = Dictionary(policy.rules.filter { $0.filters.selectsByOwnership }.map { ($0.name, $0.filters) },
                                              uniquingKeysWith: { first, _ in first })
        if let trash = policy.rules.lazy.compactMap({ if case .trash(let t) = $0.kind { t } else { nil } }).first {
            options.trashLayout = trash.layout
        }

        if let confirm = request.confirm, !confirm(plan, session.rootPath) {
            events(.cancelled)
            return nil
        }
        // Cancelled while planning or at the prompt: nothing was journaled, nothing changed.
        if request.cancellation?.isCancelled == true { throw .cancelled(transaction: nil) }
        options.cancellation = request.cancellation
        do {
            let report = try StorageEngine.report(events, everyItem: request.reportsEveryItem) { () throws(ApplyError) in
                try Applier(holding: lock).apply(plan, options: options) { done, total in
                    events(.applying(done: done, total: total))
                }
            }
            return ApplyResult(recovery: recovery, plan: plan, report: report)
        } catch .apply(.rolledBack(let transaction, ApplyRun.Cancelled.reason, _, _)) {
            // Stopped between groups and rolled back whole (the rollback event said what was undone).
            throw .cancelled(transaction: transaction)
        }
    }

    /// A saved plan checked against the policy file its fingerprint names, read once: stale when the root or
    /// those bytes changed, refused when an action is not one that policy makes. Returns that policy.
    private static func checkSaved(_ plan: Plan, policyPath: String, rootStatus: FileStatus, compiled: Policy?,
                                   events: @escaping (ApplyEvent) -> Void) throws(EngineError) -> Policy {
        let policyBytes: [UInt8]
        // A compiled Swift policy carries its script's bytes (read and hash-checked by whoever built it).
        if let compiled, let bytes = compiled.sourceBytes, compiled.source?.file == policyPath {
            if let problem = PlanFile.staleness(of: plan, rootStatus: rootStatus, policyName: compiled.name,
                                                policySHA256: SHA256.hex(compiled.fingerprintBytes ?? bytes)) {
                events(.stalePlan(problem))
                throw .stalePlan(problem)
            }
            if let invalid = PlanValidation(policy: compiled).firstInvalid(in: plan) {
                events(.planRefused(invalid))
                throw .planRefused(invalid)
            }
            return compiled
        }
        do {
            policyBytes = try TrustedFile.read(policyPath, limit: PolicyLoader.maximumFileSize, what: "policy")
        } catch {
            switch error {
            case .io(let e) where e.errno == .noSuchFile:
                let problem = StalePlan(.policyGone(path: policyPath, e))
                events(.stalePlan(problem))
                throw .stalePlan(problem)
            case .io(let e):
                // Not "stale": the policy could not be read at all.
                throw .planPolicyUnreadable(path: policyPath, e)
            default:
                // Refused by the trust rule (or no regular file): nothing of it was read.
                throw .invalidPolicy(PolicyLoadError(diagnostics: [Diagnostic(severity: .error, location: nil, message: error.description)]))
            }
        }
        if let problem = PlanFile.staleness(of: plan, rootStatus: rootStatus, policyBytes: Optional(policyBytes)) {
            events(.stalePlan(problem))
            throw .stalePlan(problem)
        }
        // Whoever can write the plan file may have edited it: every action must be one the (hash-checked)
        // policy makes, or none is carried out.
        let policy: Policy
        do { policy = try PolicyLoader.load(bytes: policyBytes, file: policyPath).policy }
        catch { throw .invalidPolicy(error) }
        if let invalid = PlanValidation(policy: policy).firstInvalid(in: plan) {
            events(.planRefused(invalid))
            throw .planRefused(invalid)
        }
        return policy
    }

    /// Why the caller's policy file and root are not the ones `plan` was made with (nil when they are).
    static func mismatch(_ plan: Plan, policyFile: String, root: String) -> PlanMismatch? {
        let named = PathNormalization.absolute(policyFile)
        let recorded = plan.fingerprint?.policyPath ?? "(none)"
        if recorded != named { return PlanMismatch(.policyFile, recorded: recorded, named: named) }
        if plan.root != root { return PlanMismatch(.root, recorded: plan.root, named: root) }
        return nil
    }

    /// Plans `policy` on the root (canonical, as the journal records it), sending the walk's progress; `inUse`
    /// replaces the request's in-use strategy when given.
    private static func makePlan(_ policy: Policy, root: String, request: ApplyRequest, inUse: (any InUseStrategy)?,
                                 events: @escaping (ApplyEvent) -> Void) throws(EngineError) -> Plan {
        // The caller's handler is not Sendable, so it is only ever called here, on the calling thread: the
        // plan is made on a pool thread, its walk leaves its progress in `mailbox`, and this thread sends each
        // one on while it waits for the plan. A progress that arrives while the last is still being sent
        // replaces an unsent one (the walk dropped progress calls made while one ran before, too).
        let mailbox = ConditionLocked(PlanMailbox())
        var planOptions = request.planOptions
        planOptions.cancellation = request.cancellation
        if let inUse { planOptions.inUseStrategy = inUse }
        let planner = Planner(policy: policy, root: root, options: planOptions)
        let work: @Sendable () -> Void = {
            let made = Result { () throws(EngineError) -> Plan in
                do {
                    return try planner.plan { seen, directory in
                        let progress = PlanProgress(entriesScanned: seen, directory: directory)
                        mailbox.withLock(wake: .all) { $0.progress = progress }
                    }
                } catch {
                    throw EngineError.wrap(error)
                }
            }
            mailbox.withLock(wake: .all) { $0.plan = made }
        }
        // No thread to be had: plan here, then send the progress left (the last one) before the plan.
        if WorkerPool.shared.start(work) == nil { work() }
        while true {
            let (progress, plan) = mailbox.withLock(when: { $0.progress != nil || $0.plan != nil }) { box in
                let progress = box.progress
                box.progress = nil
                // Every progress is sent before the plan is taken: the walk is over before the plan is set.
                return (progress, progress == nil ? box.plan : nil)
            }
            if let progress { events(.planning(progress)); continue }
            // The wait above returns only with a progress or the plan.
            if let plan { return try plan.get() }
        }
    }
}

/// An apply's source once its checks passed: a saved plan carries the policy its check read.
private enum CheckedSource {
    case policyFile(String)
    case policy(Policy)
    /// A plan and the policy it was checked against; `planFile` for a saved plan (absolute).
    case plan(Plan, policy: Policy, planFile: String?)
}

/// What the planning thread hands to the thread waiting in ``StorageEngine/makePlan``: the walk's latest
/// progress not yet sent, then the plan (or its error).
private struct PlanMailbox {
    var progress: PlanProgress?
    var plan: Result<Plan, EngineError>?
}
