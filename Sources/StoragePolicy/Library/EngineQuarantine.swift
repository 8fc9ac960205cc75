// The quarantine through the engine: what it holds (read-only, no lock), emptying it on request as a journaled
// purge (under the lock, after recovery), and an apply's upkeep before it plans: the windows past their end, and
// under free-space pressure (or `reclaim`) the oldest windows before any live entry. Never prints.

@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyModel
@_spi(Layers) import StoragePolicyEvaluation
@_spi(Layers) import StoragePolicyApply

extension StorageEngine {
    /// What the quarantine of `root` holds, oldest first; nil when there is no state folder. Reads only, takes no
    /// lock; the state folder and every quarantine folder go through the trust checks.
    public static func quarantine(root: String, stateDirectory: String? = nil,
                                  events: (ApplyEvent) -> Void = { _ in }) throws(EngineError) -> QuarantineContents? {
        guard let session = try EngineSession.open(root: root, stateDirectory: stateDirectory, create: false, events: events) else {
            return nil
        }
        do { return try QuarantineStore.contents(session.state) } catch { throw EngineError.wrap(error) }
    }

    /// Empties the quarantine for good, as one journaled `purge` transaction under the lock after recovery: every
    /// window, or with `olderThan` those of transactions that ran longer ago than that. Nil when there is no
    /// state folder; a report with no transaction when nothing was held.
    public static func purgeQuarantine(olderThan: PolicyDuration?, session: Session, deadline: ContinuousClock.Instant? = nil,
                                       events: (ApplyEvent) -> Void = { _ in }) throws(EngineError) -> QuarantinePurgeReport? {
        guard let opened = try EngineSession.open(root: session.root, stateDirectory: session.stateDirectory,
                                                  create: false, events: events) else { return nil }
        let lock = try opened.lock(wait: session.waitForLock, events: events)
        _ = try opened.recover(holding: lock, events: events)
        let contents: QuarantineContents
        do { contents = try QuarantineStore.contents(lock.state) } catch { throw EngineError.wrap(error) }
        for note in contents.notes { events(.warning(note)) }
        var windows = contents.windows
        var reason = "--purge"
        if let olderThan {
            let cutoff = WallClock.nowNs() - olderThan.nanoseconds
            windows = windows.filter { $0.timeNs <= cutoff }
            reason = "--purge --older-than \(olderThan)"
        }
        let report: QuarantinePurgeReport?
        do {
            report = try QuarantinePurge.run(windows, reason: reason, holding: lock, policy: "-", rootPath: opened.rootPath, deadline: deadline)
        } catch {
            events(.failed(error))
            throw .apply(error)
        }
        if let report { events(.quarantinePurged(report)) }
        return report ?? QuarantinePurgeReport(reason: reason)
    }
}

extension EngineSession {
    /// An apply's upkeep of the journal and the quarantine, under the lock after recovery and before it plans:
    /// the journal rotated when large; every window past its end purged; under free-space pressure (a pressure
    /// rule's freeBelow crossed, or `reclaim`), the oldest windows too until the pressure rule's target is met,
    /// before the plan takes any live entry. Each purge is its own journaled transaction, bounded by the deadline.
    /// Returns the free space the plan should judge when the volume's count does not show what was purged yet.
    func maintain(holding lock: ApplyLock, policy: Policy, request: ApplyRequest,
                  events: (ApplyEvent) -> Void) throws(EngineError) -> VolumeSpace? {
        rotateJournal(holding: lock, retention: policy.journal, events: events)
        let contents: QuarantineContents
        do { contents = try QuarantineStore.contents(lock.state) } catch {
            events(.warning("the quarantine was not looked at (\(error)); nothing in it was purged"))
            return nil
        }
        guard !contents.windows.isEmpty else { return nil }
        let now = request.planOptions.now ?? WallClock.nowNs()
        var windows = QuarantinePurge.pastWindow(contents, now: now)
        var reason = "past its window"
        var space: VolumeSpace? = nil
        if !policy.pressure.isEmpty, let measured = request.planOptions.freeSpace ?? VolumeSpace.measure(descriptor: lock.state.root.descriptor) {
            space = measured
            var need: Int64 = 0
            for p in policy.pressure {
                let below = p.freeBelow.bytes(ofVolume: measured.total)
                let until = request.planOptions.reclaimBytes.map { measured.available + $0 } ?? p.freeUntil.bytes(ofVolume: measured.total)
                if request.planOptions.reclaimBytes != nil || measured.available < below { need = max(need, until - measured.available) }
            }
            need -= windows.reduce(Int64(0)) { $0 + $1.bytes }
            if need > 0 {
                let taken = Set(windows.map { "\($0.transaction)/\($0.untilName)" })
                var rest = contents
                rest.windows.removeAll { taken.contains("\($0.transaction)/\($0.untilName)") }
                let more = QuarantinePurge.oldestFirst(rest, covering: need)
                if !more.isEmpty {
                    windows += more
                    reason = request.planOptions.reclaimBytes != nil ? "making room on request (reclaim), oldest first" : "free-space pressure, oldest first"
                }
            }
        }
        guard !windows.isEmpty else { return nil }
        let report: QuarantinePurgeReport?
        do {
            report = try QuarantinePurge.run(windows, reason: reason, holding: lock, policy: policy.name, rootPath: rootPath,
                                             deadline: request.deadline)
        } catch {
            events(.warning("the quarantine's purge stopped (\(error)); 'policyctl recover' (or the next apply) finishes it"))
            return nil
        }
        guard let report else { return nil }
        events(.quarantinePurged(report))
        // A volume whose free count does not show the purge yet (or a test's fixed figure) is told what it freed.
        if let space, let after = request.planOptions.freeSpace ?? VolumeSpace.measure(descriptor: lock.state.root.descriptor),
           after.available <= space.available {
            return VolumeSpace(available: space.available + report.bytes, total: space.total)
        }
        return nil
    }
}
