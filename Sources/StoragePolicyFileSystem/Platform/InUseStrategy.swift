// Where the in-use check (Evaluation/InUseCheck.swift) learns which files are in use: one strategy per platform,
// behind one protocol, each runnable on Linux so its decisions are tested here. Linux lists /proc; macOS asks
// libproc (Platform/LibprocTable.swift); iOS, where only the app's own processes can hold the app's files, has
// no process table at all: the flock probe of each entry plus the files the app says are busy. A strategy that
// cannot read its source says so (`InUseReading.table.unreadable`), and the check then keeps every delete it
// judges and the plan says why: missing information never passes for "nothing is in use".

/// What one run knows about who holds which file, read once by an `InUseStrategy`.
package struct InUseReading: Sendable {
    /// Open files when the run started (empty, and read, for a strategy without a process table).
    package var table: OpenFileTable
    /// Flocks when the run started; an incomplete table makes every candidate get the flock probe.
    package var flocks: FlockTable
    /// Devices whose flocks `flocks` lists in full.
    package var localDevices: Set<UInt64>
    /// What `table` was read from, as a note names it when it could not be: `/proc`, `libproc`.
    package var source: String
    /// Files the app says are busy (a download in flight): each such path, relative to the root, is kept.
    package var busy: (@Sendable (RelativePath) -> Bool)?
    /// The run's listings `flocks` came from, which later readings of the flocks take theirs from too; nil: each
    /// reads `/proc/locks` for itself.
    package var flockListings: FlockListings?

    package init(table: OpenFileTable, flocks: FlockTable = FlockTable(), localDevices: Set<UInt64> = [],
                 source: String = "/proc", busy: (@Sendable (RelativePath) -> Bool)? = nil,
                 flockListings: FlockListings? = nil) {
        self.table = table; self.flocks = flocks; self.localDevices = localDevices
        self.source = source; self.busy = busy; self.flockListings = flockListings
    }
}

/// One way of learning which files are in use. Chosen by platform (`InUseStrategies.platform`); tests pick one.
package protocol InUseStrategy: Sendable {
    /// The plan's note naming this strategy when it judged the entries, or nil for Linux's /proc, whose plans
    /// predate strategies and stay byte-identical.
    var note: String? { get }
    /// Reads once, for one run; `root` names the device whose flocks a table may vouch for.
    func read(root: DirectoryHandle?) -> InUseReading
    /// The same strategy, its readings taking their flocks from one run's listings (FlockListings): a plan and
    /// the apply that follows it share them. Strategies without `/proc/locks` return themselves.
    func sharingFlockListings() -> any InUseStrategy
    /// Begins the part of a reading that waits on the kernel, for a `read` to come (the plan calls it as its
    /// walk starts); nothing for a strategy that does not share listings.
    func beginReading()
}

extension InUseStrategy {
    package func sharingFlockListings() -> any InUseStrategy { self }
    package func beginReading() {}
}

/// Linux: every process's descriptors from `proc`/*/fd and every flock from `proc`/locks (today's check).
package struct ProcInUseStrategy: InUseStrategy {
    /// The proc mount read; tests give a missing one to see the "cannot be read" path.
    package let proc: String
    package let busy: (@Sendable (RelativePath) -> Bool)?
    /// The run's listings of `proc`/locks (`sharingFlockListings`); nil: each reading lists them for itself.
    package private(set) var listings: FlockListings?

    package init(proc: String = "/proc", busy: (@Sendable (RelativePath) -> Bool)? = nil) {
        self.proc = proc; self.busy = busy
    }

    package func sharingFlockListings() -> any InUseStrategy {
        guard listings == nil else { return self }
        var shared = self
        shared.listings = FlockListings(proc: proc)
        return shared
    }

    package func beginReading() { listings?.begin() }

    package var note: String? {
        proc == "/proc" ? nil : "in-use check: judged by the open files in \(proc)/*/fd and the flocks in \(proc)/locks"
    }

    package func read(root: DirectoryHandle?) -> InUseReading {
        let device = root.flatMap { root in root.flocksAreLocal ? try? root.status().device : nil }
        // The flocks listed on a pool thread while this one lists every process's descriptors: a listing of
        // `proc`/locks waits for an RCU grace period (the kernel takes its lock table's percpu rwsem for
        // writing), 5 to 20 ms here, and this wait overlaps the descriptor scan. The run's listings when shared
        // (one under way or made within their bound serves); else listings of this reading alone, whose one
        // listing is begun here and waited for, however long the scan took: it is as of this reading's start.
        let started = ContinuousClock.now
        let listings = self.listings ?? FlockListings(proc: proc)
        listings.begin()
        let table = OpenFileTable.read(proc: proc)
        return InUseReading(table: table, flocks: listings.recent(asOf: started), localDevices: device.map { [$0] } ?? [],
                            source: proc, busy: busy, flockListings: self.listings)
    }
}

/// iOS: no process but the app's own can hold a file of its container, and the app knows what it is using.
/// There is no process table to read (so none can be missing): each delete is kept when the app says its path is
/// busy, or when the flock probe finds a lock on it (SQLite and Core Data hold theirs); the rest go.
package struct AppInUseStrategy: InUseStrategy {
    package let busy: (@Sendable (RelativePath) -> Bool)?

    package init(busy: (@Sendable (RelativePath) -> Bool)?) { self.busy = busy }

    package var note: String? {
        "in-use check: judged by \(busy == nil ? "" : "the files the app says are busy and ")a flock probe of each entry (no process table: on iOS only the app's own processes can hold its files)"
    }

    package func read(root: DirectoryHandle?) -> InUseReading {
        // FlockTable() is "not read": every candidate is probed, none is spared by a table.
        InUseReading(table: OpenFileTable(), flocks: FlockTable(), source: "the app", busy: busy)
    }
}

/// The strategy each platform uses.
package enum InUseStrategies {
    /// Linux: /proc; macOS: libproc; iOS (and the other Apple platforms with an app sandbox): the app's busy
    /// files and the flock probe. `busy`, the app's own list, is honoured by all three.
    package static func platform(busy: (@Sendable (RelativePath) -> Bool)? = nil) -> any InUseStrategy {
        #if os(macOS)
        LibprocInUseStrategy(busy: busy)
        #elseif canImport(Darwin)
        AppInUseStrategy(busy: busy)
        #else
        ProcInUseStrategy(busy: busy)
        #endif
    }
}
