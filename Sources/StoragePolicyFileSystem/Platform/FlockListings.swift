// The /proc/locks listings of one run (a plan, and the apply that follows it in the same process): a reading of
// the flocks takes the newest listing begun at most `freshness` before it and begins the next, waiting only when
// no such listing has finished yet. Reading /proc/locks waits for an RCU grace period (the kernel takes its lock
// table's percpu rwsem for writing): 6 to 20 ms on the benchmark machine, longer when both cores are busy. A run
// needs a listing as its plan's walk ends, as its apply begins and for each group of deletes; read afresh each
// time, those waits fell on the thread the whole run waits on (about 7 ms of a 200 ms apply, Docs/performance.md).
// What is given up: a flock taken less than `freshness` before a reading may be missed by it; a listing made for
// each reading saw every flock taken before the reading.

import Synchronization

package final class FlockListings: Sendable {
    /// How long before a reading its listing may have begun.
    package static let freshness: Duration = .milliseconds(100)
    /// `freshness`, or another bound a test sets.
    private let bound: Duration

    private struct Listing {
        let begun: ContinuousClock.Instant
        let table: WorkerPool.Pending<FlockTable>
    }

    private struct State {
        /// The newest listing known to have finished.
        var finished: Listing?
        /// The listing being made, if any.
        var underWay: Listing?

        /// The listing under way moves to `finished` once it is made.
        mutating func collect() {
            guard let listing = underWay, listing.table.isMade else { return }
            finished = listing
            underWay = nil
        }
    }

    /// The proc mount whose `locks` is listed.
    package let proc: String
    private let state = Mutex(State())

    package init(proc: String = "/proc", freshness: Duration = FlockListings.freshness) {
        self.proc = proc
        bound = freshness
    }

    /// Begins a listing now unless one is under way: the plan calls it as its walk starts, so the grace period
    /// passes during the walk.
    package func begin() {
        state.withLock { state in
            state.collect()
            if state.underWay == nil { state.underWay = start() }
        }
    }

    /// `recent(asOf:)` for a reading that begins now (each group's reread).
    package func recent() -> FlockTable { recent(asOf: .now) }

    /// The flocks as the newest listing begun at most `freshness` before `now` (when the reading began) found
    /// them; unless one is under way, the next listing is begun. Waits only when no such listing has finished:
    /// for the one under way if it is recent enough, else for one begun now.
    package func recent(asOf now: ContinuousClock.Instant) -> FlockTable {
        let chosen = state.withLock { [bound] state -> WorkerPool.Pending<FlockTable> in
            state.collect()
            let fresh = state.finished.flatMap { now - $0.begun <= bound ? $0.table : nil }
            if let underWay = state.underWay, fresh != nil || now - underWay.begun <= bound {
                return fresh ?? underWay.table
            }
            // Nothing under way, or only a listing too old to wait for: a new one, taken when none recent is made.
            let next = start()
            state.underWay = next
            return fresh ?? next.table
        }
        return chosen.value
    }

    /// A listing begun now, on a pool thread (here and now when none can be had: the listing never takes this
    /// object's lock, so making it under the lock cannot deadlock).
    private func start() -> Listing {
        let proc = self.proc
        return Listing(begun: ContinuousClock.now, table: WorkerPool.shared.compute { FlockTable.read(proc: proc) })
    }
}
