// Keeps what a process is using: a delete of an expire, quota or trash rule (unless `inUse: ignore`) is dropped
// when its target is open in some process (read once per run by the platform's InUseStrategy: /proc/*/fd on
// Linux, libproc on macOS, none on iOS), holds a BSD flock, or is a file the app says is busy, and a directory
// delete when anything inside it is. Only ever removes deletes from a plan: what cannot be checked (an unreadable
// /proc or libproc, a root run that cannot read some processes' descriptors, a flock that cannot be probed) is
// kept too, and the plan says so; a strategy other than Linux's /proc is named in the plan's notes.
// The flock probe (open, fstat, flock, close) runs only where /proc/locks, read once per run, cannot rule the
// entry out: as root or not, in the initial PID namespace and on a local filesystem, no entry it does not list
// is probed (see FlockTable).
import Synchronization
@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyModel
@_spi(Layers) import StoragePolicyPlan

/// Whether one entry is in use, against one reading of /proc.
package struct InUseCheck: Sendable {
    /// Open files when the run started.
    package let table: OpenFileTable
    /// Flocks when the run started: an entry on a trusted device that it does not list is not probed.
    package let flocks: FlockTable
    /// Devices whose flocks /proc/locks lists in full (the root's, on a local filesystem).
    package let localDevices: Set<UInt64>
    /// What `table` was read from (`/proc`, `libproc`), named when it could not be read.
    package let source: String
    /// The files the app says are busy, by root-relative path; nil when it says nothing.
    package let busy: (@Sendable (RelativePath) -> Bool)?
    /// The plan's note naming the strategy that judged (nil for Linux's /proc: see InUseStrategy.note).
    package let strategyNote: String?
    /// The run's listings of /proc/locks, when its strategy shares them (rereadingFlocks takes the next from them).
    package let flockListings: FlockListings?
    private let probes = ProbeCount()
    /// `isClearlyFree`, answered mostly without hashing: a class, so apply asks it per delete without copying
    /// this struct (which retains every table it holds).
    package let clearlyFree: ClearlyFree

    package init(table: OpenFileTable, flocks: FlockTable = FlockTable(), localDevices: Set<UInt64> = []) {
        self.init(reading: InUseReading(table: table, flocks: flocks, localDevices: localDevices), note: nil)
    }

    /// The check over one strategy's reading.
    package init(reading: InUseReading, note: String?) {
        table = reading.table
        flocks = reading.flocks
        localDevices = reading.localDevices
        source = reading.source
        busy = reading.busy
        strategyNote = note
        flockListings = reading.flockListings
        clearlyFree = ClearlyFree(table: reading.table, flocks: reading.flocks, localDevices: reading.localDevices,
                                  askTheApp: reading.busy != nil)
    }

    /// Reads now, through `strategy` (nil: the platform's, InUseStrategies.platform); on Linux /proc/locks is
    /// trusted for entries on `root`'s device when its filesystem is local.
    package static func now(root: DirectoryHandle? = nil, strategy: (any InUseStrategy)? = nil) -> InUseCheck {
        let strategy = strategy ?? InUseStrategies.platform()
        return InUseCheck(reading: strategy.read(root: root), note: strategy.note)
    }

    /// The same check with /proc/locks read again (a few system calls): apply does so before each group of
    /// deletes, so a flock taken during a long run is seen by the deletes that come after it. From the run's
    /// listings when it shares them: the newest begun at most FlockListings.freshness ago, waited for only when
    /// none such is made.
    package func rereadingFlocks(proc: String = "/proc") -> InUseCheck {
        InUseCheck(reading: InUseReading(table: table, flocks: flockListings?.recent() ?? .read(proc: proc),
                                         localDevices: localDevices, source: source, busy: busy,
                                         flockListings: flockListings), note: strategyNote)
    }

    /// How many flock probes this check has made (tests pin "one or none per candidate").
    package var flockProbes: Int { probes.value.load(ordering: .relaxed) }

    /// The note a run prints once when /proc (or libproc) could not be read: nothing a rule checks is deleted then.
    package var unreadableNote: String? {
        if let error = table.unreadable {
            return "in-use check: \(source) could not be read (\(error)); entries that expire, quota and trash rules would delete are kept (set 'inUse: ignore' on a rule to delete regardless)"
        }
        // Any of the unreadable processes may hold any candidate open: nothing these rules delete is known free.
        return table.incompleteness.map { "in-use check incomplete: \($0); entries that expire, quota and trash rules would delete are kept (set 'inUse: ignore' on a rule to delete regardless)" }
    }

    /// Why the entry `name` in `parent` (at `path`, planned as `identity`) must be kept, or nil when nothing uses it.
    /// A target that vanished or was swapped for a symlink is not in use: apply's identity check refuses it.
    /// A directory's contents are walked until `deadline`: past it the delete is kept ("not checked before the
    /// time budget ran out"), and the run, checking the deadline after the step, stops.
    package func reason(parent: DirectoryHandle, name: FileName, path: RelativePath, type: FileType?,
                       identity: EntryIdentity, deadline: ContinuousClock.Instant? = nil) -> String? {
        if let busy, busy(path) { return "in use: the app says it is busy" }
        if let error = table.unreadable { return "in use unknown: \(source) could not be read (\(error)); kept" }
        if type == .symlink { return nil }
        if let incomplete = table.incompleteness { return "in use unknown: \(incomplete); kept" }
        if let pid = table.holder(device: identity.device, inode: identity.inode) {
            return "in use by \(OpenFileTable.describe(pid: pid))"
        }
        if let reason = flockReason(parent, name, path: path, identity: identity) { return reason }
        guard type == .directory else { return nil }
        return insideReason(parent: parent, name: name, path: path, deadline: deadline)
    }

    /// True when `reason` would surely find nothing, from the entry's fields alone (no folder opened, no
    /// system call): /proc was read, no process has it open, /proc/locks rules out a flock on it, and it is
    /// no directory (whose contents would need a look). A symlink is never in use.
    package func isClearlyFree(type: FileType?, identity: EntryIdentity) -> Bool {
        clearlyFree.answer(type: type, identity: identity)
    }

    private func flockReason(_ directory: DirectoryHandle, _ name: FileName?, path: @autoclosure () -> RelativePath,
                             identity: EntryIdentity?) -> String? {
        // /proc/locks lists every flock on this device and none on this inode: nothing to probe.
        if let identity, localDevices.contains(identity.device), !flocks.mayHold(inode: identity.inode) { return nil }
        probes.value.add(1, ordering: .relaxed)
        do {
            guard try directory.holdsFlock(name, expected: identity) else { return nil }
        } catch {
            if error.errno == .noSuchFile || error.errno == .tooManySymbolicLinks { return nil }
            return "in use unknown: cannot probe \(path().escaped) for a BSD flock (\(error)); kept"
        }
        let status = try? (name.map { try directory.status(of: $0) } ?? directory.status())
        if let status, let pid = OpenFileTable.flockHolder(device: status.device, inode: status.inode) {
            // /proc/locks names the process that took the lock; a child may hold it after that one exited.
            if let command = OpenFileTable.command(of: pid) { return "in use by \(pid) (\(command)): holds a BSD flock" }
            return "in use: holds a BSD flock (taken by PID \(pid), which has exited)"
        }
        return "in use: holds a BSD flock"
    }

    /// Anything open inside the directory, or a flocked directory in it: the whole directory stays. Walked
    /// through a DescriptorStack (each folder opened once from its parent, O_NOATIME, a bounded number held),
    /// so a tree thousands deep costs time linear in its depth and never runs out of descriptors.
    private func insideReason(parent: DirectoryHandle, name: FileName, path: RelativePath,
                              deadline: ContinuousClock.Instant?) -> String? {
        let top: DirectoryHandle
        do { top = try parent.openDirectoryLeavingAtime(name) } catch {
            return error.errno == .noSuchFile ? nil : "in use unknown: cannot look inside (\(error)); kept"
        }
        var stack = DescriptorStack(anchor: top, leavingAtime: true)
        // The subdirectories still to look into of each level: [0] the top's, [n] those of the stack's level n-1.
        var pending: [[FileName]] = []
        var directory = top
        while true {
            if let deadline, ContinuousClock.now >= deadline {
                return "in use unknown: not checked before the time budget ran out; kept"
            }
            let entries: [DirectoryEntry]
            do { entries = try directory.entries() } catch {
                return "in use unknown: cannot look inside (\(error)); kept"
            }
            var subdirectories: [FileName] = []
            for entry in entries {
                // Built only when it is reported: a deep tree's paths are long.
                func inner() -> String { path.appending(stack.relativePath).appending(entry.name).escaped }
                let found: FileStatus?
                do { found = try directory.statusIfPresent(of: entry.name) } catch {
                    return "in use unknown: cannot stat \(inner()) (\(error)); kept"
                }
                // Gone meanwhile: nothing there to be in use.
                guard let status = found else { continue }
                if let busy, busy(path.appending(stack.relativePath).appending(entry.name)) {
                    return "holds \(inner()), which the app says is busy; kept"
                }
                if let pid = table.holder(device: status.device, inode: status.inode) {
                    return "holds \(inner()), in use by \(OpenFileTable.describe(pid: pid)); kept"
                }
                guard status.type == .directory else { continue }
                if let reason = flockReason(directory, entry.name, path: path.appending(stack.relativePath).appending(entry.name),
                                            identity: status.identity) {
                    return "holds \(inner()), \(reason); kept"
                }
                subdirectories.append(entry.name)
            }
            pending.append(subdirectories)
            // The next folder to look into; a level with nothing left is left without reopening it.
            var next: DirectoryHandle?
            while next == nil, let deepest = pending.indices.last {
                guard let name = pending[deepest].popLast() else {
                    pending.removeLast()
                    if !stack.isEmpty { stack.pop() }
                    continue
                }
                do {
                    next = try stack.push(name)
                } catch where DescriptorStack.isReplacement(error) {
                    return "in use unknown: \(error.path.escaped) was replaced while being looked into; kept"
                } catch {
                    // A mount point inside is never crossed (apply refuses such a tree); one gone meanwhile holds nothing.
                    continue
                }
            }
            guard let next else { return nil }
            directory = next
        }
    }

    /// The plan's deletes with the ones in use removed (and reported as skipped), with every directory delete
    /// above a kept entry and the `.trashinfo` of a kept trash item. Reads nothing when no rule asks.
    package static func filter(_ actions: inout [Action], skipped: inout [SkippedEntry], notes: inout [String],
                       rules: [Rule], root: DirectoryHandle, check: ((DirectoryHandle) -> InUseCheck)? = nil,
                       strategy: (any InUseStrategy)? = nil) {
        let checked = checkedRules(rules)
        guard actions.contains(where: { $0.isDelete && checked.contains($0.rule) }) else { return }
        let inUse = check?(root) ?? InUseCheck.now(root: root, strategy: strategy)
        if let note = inUse.strategyNote { notes.append(note) }
        if let note = inUse.unreadableNote { notes.append(note) }
        var cache: (path: RelativePath, handle: DirectoryHandle?)? = nil
        var kept: [RelativePath] = []
        var keptTrash: [(rule: String, path: RelativePath)] = []
        var drop = Set<Int>()
        // Most deletes are settled from their fields alone (see isClearlyFree): only the others are copied and
        // get their folder opened. The rule's name is hashed once per run of one rule's deletes.
        var candidates: [Int] = []
        actions.withUnsafeBufferPointer { a in
            var lastRule: String? = nil
            var lastChecked = false
            for i in a.indices where a[i].isDelete {
                if a[i].rule != lastRule { lastRule = a[i].rule; lastChecked = checked.contains(a[i].rule) }
                guard lastChecked, let identity = a[i].identity,
                      !inUse.isClearlyFree(type: a[i].type, identity: identity) else { continue }
                candidates.append(i)
            }
        }
        for i in candidates {
            let action = actions[i]
            guard let identity = action.identity, let name = action.path.lastComponent else { continue }
            let parentPath = action.path.parent
            if cache?.path != parentPath {
                cache = (parentPath, try? root.openDirectory(at: parentPath))
            }
            // A folder that cannot be opened now: apply finds the target gone and skips it anyway.
            guard let parent = cache?.handle else { continue }
            guard let reason = inUse.reason(parent: parent, name: name, path: action.path, type: action.type,
                                             identity: identity) else { continue }
            drop.insert(i)
            kept.append(action.path)
            keptTrash.append((action.rule, action.path))
            skipped.append(SkippedEntry(path: action.path, reason: reason))
        }
        guard !kept.isEmpty else { return }
        for (i, action) in actions.enumerated() where action.isDelete && !drop.contains(i) {
            if let inner = kept.first(where: { $0 != action.path && $0.hasPrefix(action.path) }) {
                drop.insert(i)
                skipped.append(SkippedEntry(path: action.path, reason: "holds \(inner.escaped), which is in use; kept"))
            } else if action.path.lastComponent?.bytes.suffix(10).elementsEqual(".trashinfo".utf8) == true,
                      let item = keptTrash.first(where: { Self.isTrashInfo(action.path, of: $0.path) && $0.rule == action.rule }) {
                drop.insert(i)
                skipped.append(SkippedEntry(path: action.path, reason: "the .trashinfo of \(item.path.escaped), which is in use; kept"))
            }
        }
        actions = actions.enumerated().filter { !drop.contains($0.offset) }.map(\.element)
    }

    /// The names of the rules whose deletes are checked: expire, quota and trash rules without `inUse: ignore`.
    /// The plan's reading, started on a pool thread as the walk ends, so that it is made while the resolution
    /// settles the deletes instead of after it: its /proc/locks read waits for an RCU grace period (7 to 20 ms on
    /// the benchmark machine) with every other thread idle. Nil when no delete can need it: no rule checks, or
    /// the walk found no delete of one that does and none of them decides its deletes after the walk (quota,
    /// trash retention).
    package static func startReading(for rules: [Rule], walked: [EvaluationResults], root: DirectoryHandle,
                                     strategy: (any InUseStrategy)?) -> WorkerPool.Pending<InUseCheck>? {
        let checked = checkedRules(rules)
        guard !checked.isEmpty else { return nil }
        let decidedLater = rules.contains { rule in
            guard checked.contains(rule.name) else { return false }
            if case .expire = rule.kind { return false }
            return true
        }
        let walkedDelete = decidedLater || walked.contains { results in
            var lastRule: String? = nil
            return results.actions.withUnsafeBufferPointer { a in
                a.contains { action in
                    guard action.isDelete, action.rule != lastRule else { return false }
                    lastRule = action.rule
                    return checked.contains(action.rule)
                }
            }
        }
        guard walkedDelete else { return nil }
        return WorkerPool.shared.compute { InUseCheck.now(root: root, strategy: strategy) }
    }

    package static func checkedRules(_ rules: [Rule]) -> Set<String> {
        Set(rules.filter { rule in
            guard rule.inUse == .skip else { return false }
            switch rule.kind {
            case .expire, .quota, .trash: return true
            default: return false
            }
        }.map(\.name))
    }

    /// `info` is `NAME.trashinfo` beside the item's folder (FreeDesktop `info/`) or inside it (app index).
    static func isTrashInfo(_ info: RelativePath, of item: RelativePath) -> Bool {
        guard let name = item.lastComponent, let infoName = info.lastComponent,
              infoName.bytes.elementsEqual(name.bytes + Array(".trashinfo".utf8)) else { return false }
        let infoFolder = info.parent.parent
        return infoFolder == item.parent.parent || infoFolder == item.parent
    }
}

/// A counter a Sendable check can bump from a non-mutating method.
private final class ProbeCount: Sendable {
    let value = Atomic<Int>(0)
}

/// What `InUseCheck.isClearlyFree` decides, from the same tables, with the hashing of most answers saved (three
/// hash lookups per delete were a tenth of apply's own work on a folder of empty files, Docs/performance.md):
/// what does not vary per entry is decided once, and a bitmap of the inodes the open-file table and /proc/locks
/// list (any device) answers "listed in neither" from one bit; only an inode whose bit is set is looked up.
package final class ClearlyFree: Sendable {
    /// /proc was read and the app gives no list of its own (asked about every candidate: only it knows its paths).
    private let readable: Bool
    /// Every process's descriptors were read and /proc/locks lists every flock.
    private let complete: Bool
    private let localDevices: Set<UInt64>
    /// The one local device, when there is exactly one (the common case: one comparison, no hash).
    private let onlyDevice: UInt64?
    private let table: OpenFileTable
    private let flocks: FlockTable
    /// 2^16 bits: bit `slot(inode)` is set for every inode either table lists.
    private let bits: [UInt64]

    init(table: OpenFileTable, flocks: FlockTable, localDevices: Set<UInt64>, askTheApp: Bool) {
        readable = table.unreadable == nil && !askTheApp
        complete = table.incompleteness == nil && flocks.incomplete == nil
        self.localDevices = localDevices
        onlyDevice = localDevices.count == 1 ? localDevices.first : nil
        self.table = table
        self.flocks = flocks
        var bits = [UInt64](repeating: 0, count: 1 << 10)
        table.forEachInode { let k = Self.slot($0); bits[k >> 6] |= 1 << UInt64(k & 63) }
        flocks.forEachInode { let k = Self.slot($0); bits[k >> 6] |= 1 << UInt64(k & 63) }
        self.bits = bits
    }

    private static func slot(_ inode: UInt64) -> Int { Int(truncatingIfNeeded: (inode &* 0x9E37_79B9_7F4A_7C15) >> 48) }

    /// True when `InUseCheck.reason` would surely find nothing (see isClearlyFree).
    package func answer(type: FileType?, identity: EntryIdentity) -> Bool {
        guard readable else { return false }
        if type == .symlink { return true }
        guard complete, type != .directory else { return false }
        guard identity.device == onlyDevice || localDevices.contains(identity.device) else { return false }
        let k = Self.slot(identity.inode)
        guard bits[k >> 6] & (1 << UInt64(k & 63)) != 0 else { return true }
        // Listed somewhere (on some device): the tables themselves decide.
        return table.holder(device: identity.device, inode: identity.inode) == nil && !flocks.mayHold(inode: identity.inode)
    }
}
