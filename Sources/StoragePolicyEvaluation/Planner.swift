// Plans a policy against a root: a few checks on known directories, one parallel walk evaluating every
// rule, then the whole-tree decisions. Changes nothing on disk, not even atimes where the kernel allows.
import Foundation

@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyModel
@_spi(Layers) import StoragePolicyPlan

/// How a plan is made: the instant ages are measured against, walking threads, open-directory budget.
public struct PlanOptions: Sendable {
    /// The time ages are measured against, nanoseconds since the epoch; nil means now (``evaluationTime``).
    package var now: Int64?
    /// Threads walking the tree; 0 means one per available core.
    public var threads: Int
    /// Directory descriptors the walk may keep open; nil derives it from the process's limit.
    public var openDirectoryBudget: Int?
    /// Tests only: see WalkOptions.willStat.
    package var willStat: (@Sendable (RelativePath) -> Void)?
    /// How the in-use check learns which files are in use; nil: the platform's (see `inUseStrategyInEffect`).
    package var inUseStrategy: (any InUseStrategy)?
    /// The files the app says are busy, by root-relative path (the library's `inUse` hook): every in-use-checked
    /// delete of such a path is kept, on every platform; on iOS they and the flock probe are all there is.
    package var busyFiles: (@Sendable (RelativePath) -> Bool)?

    /// `inUseStrategy`, or the platform's over `busyFiles`.
    package var inUseStrategyInEffect: any InUseStrategy {
        inUseStrategy ?? InUseStrategies.platform(busy: busyFiles)
    }
    /// Tests only: the root volume's free space pressure rules judge, instead of measuring it.
    package var freeSpace: VolumeSpace?
    /// Making room on request (`StorageEngine.reclaim(bytes:)`): the pressure rules act whatever their freeBelow,
    /// until this many bytes more than now are free.
    package var reclaimBytes: Int64?
    /// Set, the walk stops before its next directory and the plan throws `FileSystemError` `.cancelled`.
    package var cancellation: CancellationFlag?
    /// Bytes the quarantine holds (QuarantineStore): pressure counts them first, as apply purges them (oldest
    /// first) before it deletes a live entry. 0 for an apply, which purged what pressure needed before planning.
    package var quarantineHeld: Int64 = 0

    /// The time ages are measured against; nil means the time the plan is made.
    public var evaluationTime: Date? {
        get { now.map(Date.init(nanosecondsSinceEpoch:)) }
        set { now = newValue?.nanosecondsSinceEpoch }
    }

    /// Options; the defaults (now, one thread per core, a budget from the process limit) suit most callers.
    public init(evaluationTime: Date? = nil, threads: Int = 0, openDirectoryBudget: Int? = nil) {
        self.now = evaluationTime?.nanosecondsSinceEpoch; self.threads = threads; self.openDirectoryBudget = openDirectoryBudget
    }

    /// Options measuring ages against `now`, nanoseconds since the epoch (exact, for tests and the CLI).
    package init(now: Int64?, threads: Int = 0, openDirectoryBudget: Int? = nil) {
        self.now = now; self.threads = threads; self.openDirectoryBudget = openDirectoryBudget
    }
}

/// Plans a policy against a root in one walk, changing nothing. `StorageEngine` is the simpler front door.
package struct Planner: Sendable {
    /// The policy evaluated.
    package let policy: Policy
    /// The root directory, as given.
    package let root: String
    /// How the plan is made.
    package let options: PlanOptions

    /// A planner for `policy` over `root`.
    package init(policy: Policy, root: String, options: PlanOptions = PlanOptions()) {
        self.policy = policy; self.root = root; self.options = options
    }

    /// Walks the root and returns the plan, sorted. `progress` is called now and then, from the walking
    /// threads (one call at a time), with the entries seen so far and the directory being read.
    /// Throws FileSystemError when the root itself cannot be opened or read.
    package func plan(progress: (@Sendable (Int, RelativePath) -> Void)? = nil) throws -> Plan {
        try plan(only: nil, progress: progress)
    }

    /// The plan for `restriction`'s paths only (nil: the whole tree): see PathRestriction.
    package func plan(only restriction: PathRestriction?, progress: (@Sendable (Int, RelativePath) -> Void)? = nil) throws -> Plan {
        let now = options.now ?? Planner.currentTimeNs()
        // Chased from "/" (PathChase): a symlink on the way is followed only where no co-tenant could have made it.
        let chased = try PathChase.directory(root)
        let rootHandle = chased.handle
        let rootStatus = try rootHandle.status()

        var preflight = Preflight(root: rootHandle, policy: policy, backupMarker: Markers.backupAttribute)
        let pressureNamed = Set(policy.pressure.flatMap(\.evict))
        let rules = policy.rules.enumerated().map {
            CompiledRule(index: $0.offset, rule: $0.element, trashLayout: preflight.trashLayout(of: $0.element),
                         pressureNamed: pressureNamed.contains($0.element.name))
        }
        for rule in rules {
            // A rule its kind cannot judge (Kinds/: compileProblem) is an error before the walk.
            if let problem = rule.rule.kind.behavior.compileProblem(rule) {
                preflight.violations.append(Violation(rule: rule.name, path: rule.rule.path, message: problem, severity: .error))
            }
        }
        preflight.checkLayout()
        preflight.checkBackupScopes(rules)
        preflight.checkScopes(rules)

        // Entries moved into the trash go to the first trash rule's folder (its files/ for the FreeDesktop layout).
        let trashRule = rules.first { if case .trash = $0.rule.kind { true } else { false } }
        var trashTarget: RelativePath? = nil
        var structural = policy.layout.map(\.path)
        var missingTrashTarget: [RelativePath] = []
        if let trashRule {
            let folder = trashRule.rule.path
            let target = trashRule.trashLayout == .freedesktop ? folder.appending(FileName("files")!) : folder
            trashTarget = target
            structural.append(target)
            if trashRule.trashLayout == .freedesktop { structural.append(folder.appending(FileName("info")!)) }
            if case .missing(let existing) = preflight.presence(of: target) {
                var current = existing
                for c in target.components.dropFirst(existing.isEmpty ? 0 : existing.components.count) {
                    current = current.appending(c)
                    missingTrashTarget.append(current)
                }
            }
        }
        let atimeNotes = AccessTimeNotes.notes(rules) { path in
            if case .directory(let handle, _) = preflight.presence(of: path) { return handle.atimeMode }
            return 0  // a missing scope: nothing is judged there
        } + AccessTimeNotes.birthNotes(rules) { path in
            if case .directory(_, let status) = preflight.presence(of: path) { return status }
            return nil
        }
        var relaxed = Set<Int>()
        for rule in rules {
            if case .quota(let quota) = rule.rule.kind, quota.evict == .lru, preflight.atimeIsRelaxed(at: rule.rule.path) {
                relaxed.insert(rule.index)
            }
        }

        let trie = ScopeTrie.build(scopes: rules.map { ($0.index, $0.rule.path) }, structural: structural)
        let evaluator = Evaluator(rules: rules, trie: trie, now: now, trashTarget: trashTarget,
                                  backupMarker: Markers.backupAttribute, progress: progress.map(ProgressReporter.init))
        var walkOptions = WalkOptions(threads: options.threads, openDirectoryBudget: options.openDirectoryBudget)
        walkOptions.willStat = options.willStat
        walkOptions.cancellation = options.cancellation
        let walker = Walker(root: root, options: walkOptions)
        // The run's /proc/locks listings: the first is begun now, so its wait on the kernel passes during the walk.
        let inUseStrategy = InUseCheck.checkedRules(policy.rules).isEmpty ? options.inUseStrategyInEffect
            : options.inUseStrategyInEffect.sharingFlockListings()
        inUseStrategy.beginReading()
        let (walkedRoot, workers) = try restriction.map { try walker.walk(RestrictedVisitor(inner: evaluator, restriction: $0)) }
            ?? walker.walk(evaluator)
        guard walkedRoot.device == rootStatus.device, walkedRoot.inode == rootStatus.inode else {
            throw FileSystemError(.open, path: .root, errno: .busy)
        }

        // Cancelled after the last directory: the whole-tree work below is not started.
        if options.cancellation?.isCancelled == true { throw FileSystemError(.cancelled, path: .root, errno: .interrupted) }
        let inUseReading = InUseCheck.startReading(for: policy.rules, walked: workers, root: rootHandle,
                                                   strategy: inUseStrategy)
        var resolution = Resolution(rules: rules, now: now, trashTarget: trashTarget,
                                    missingTrashTarget: missingTrashTarget, relaxedAtime: relaxed)
        // Pressure rules judge one statvfs of the root's volume, taken after the walk's start is settled.
        if !policy.pressure.isEmpty {
            resolution.pressure = policy.pressure
            resolution.reclaimBytes = options.reclaimBytes
            resolution.quarantineHeld = options.quarantineHeld
            // A delete held in the quarantine frees nothing until it is purged.
            resolution.quarantinedRules = Set(policy.quarantineWindows.keys)
            resolution.space = options.freeSpace ?? VolumeSpace.measure(descriptor: rootHandle.descriptor)
            if resolution.space == nil { preflight.notes.append("pressure rules not judged: the free space of the root's volume cannot be read (fstatvfs failed)") }
        }
        var outcome = resolution.resolve(workers, preflight: preflight.actions, violations: preflight.violations)
        var skipped = workers.flatMap(\.skipped)
        var notes = preflight.notes + outcome.notes + atimeNotes
        if let exposure = chased.exposure { notes.append(Planner.exposureNote(exposure)) }
        restriction?.restrict(&outcome.actions, &outcome.violations, &skipped, &notes, rules: policy.rules)
        // Handed over, not shared: sorting the plan's actions must not copy a million of them.
        var actions = outcome.actions
        outcome.actions = []
        ByteOrder.sortActions(&actions)
        InUseCheck.filter(&actions, skipped: &skipped, notes: &notes, rules: policy.rules, root: rootHandle,
                          check: inUseReading.map { reading in { _ in reading.value } }, strategy: inUseStrategy)
        // The in-use look (a read of /proc) is one piece of work: a cancel during it is seen here.
        if options.cancellation?.isCancelled == true { throw FileSystemError(.cancelled, path: .root, errno: .interrupted) }
        var plan = Plan(policy: policy.name, root: Planner.absolute(root), createdAt: Planner.rfc3339(nanoseconds: now),
                        evaluatedAtNs: now, actions: consume actions, violations: outcome.violations,
                        skipped: skipped, notes: notes,
                        entriesScanned: workers.reduce(0) { $0 + $1.entriesScanned },
                        fingerprint: fingerprint(rootStatus))
        // Every delete is on the root's volume (the walk never crosses a device): its share, and its free
        // space when pressure rules measured it.
        plan.summary.volumes = [Plan.Summary.Volume(device: rootStatus.device, bytesFreed: plan.summary.bytesFreed,
                                                    freeBefore: resolution.space?.available, size: resolution.space?.total)]
        // The actions are in plan order already (sortActions above; the in-use check only removes): sorting
        // them again copied every action twice.
        plan.sortFindings()
        plan.quarantine = Planner.quarantine(policy, plan.actions, exempt: outcome.pressureEvicted)
        return plan
    }

    /// What the plan says about the quarantine: the windows of the rules whose deletes it holds (only when the
    /// plan deletes through one), and the deletes exempt from it (pressure evictions).
    static func quarantine(_ policy: Policy, _ actions: [Action], exempt: Set<RelativePath>) -> PlanQuarantine? {
        let windows = policy.quarantineWindows
        guard !windows.isEmpty else { return nil }
        var used: [String: String] = [:]
        var exemptions: [QuarantineExemption] = []
        var lastRule: String? = nil
        for action in actions where action.isDelete {
            if !exempt.isEmpty, exempt.contains(action.path), windows[action.rule] != nil {
                exemptions.append(QuarantineExemption(path: action.path, reason: "a pressure rule's eviction: it must free space now"))
                continue
            }
            guard action.rule != lastRule else { continue }
            lastRule = action.rule
            if let w = windows[action.rule] { used[action.rule] = w.description }
        }
        guard !used.isEmpty || !exemptions.isEmpty else { return nil }
        return PlanQuarantine(windows: used, exempt: exemptions.isEmpty ? nil : exemptions)
    }

    /// The policy's bytes (or, for a policy built in code, its description) and the root's identity.
    package func fingerprint(_ rootStatus: FileStatus) -> Plan.Fingerprint {
        let digest = policy.fingerprintBytes.map { SHA256.hex($0) } ?? SHA256.hex(Array(String(describing: policy).utf8))
        return Plan.Fingerprint(policySHA256: digest, policyPath: policy.source.map { Planner.absolute($0.file) },
                                rootDevice: rootStatus.device, rootInode: rootStatus.inode)
    }

    /// The plan's note for a root whose path runs through a folder others can write or own.
    package static func exposureNote(_ exposure: PathExposure) -> String {
        "the root is reachable by other users: its path runs through \(exposure), which users other than \(PathChase.trustedNames(system_geteuid())) can change: they can rename the root away and put another folder in its place between runs, and a symlink there is followed only within its owner's own folders; give the root a path only root can change to close this"
    }

    // MARK: Clock and paths (no Foundation on this path)

    static func currentTimeNs() -> Int64 { WallClock.nowNs() }

    /// RFC 3339 in UTC to the second: `2026-11-29T13:22:43Z`.
    package static func rfc3339(nanoseconds: Int64) -> String { WallClock.rfc3339(ns: nanoseconds) }

    /// `path` made absolute against the working directory (see ``PathNormalization/absolute(_:)``).
    package static func absolute(_ path: String) -> String { PathNormalization.absolute(path) }
}
