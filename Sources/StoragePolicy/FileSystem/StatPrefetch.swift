// Statuses of one large directory's entries, fetched ahead by an idle walking thread while the thread that
// read the directory judges it: a flat folder of 200,000 files no longer leaves the second core waiting.
// The helper stats from the last entry down, the visiting thread asks from the first up; they meet. It only
// caches: what the visitor sees (and when) is decided by the listing exactly as in a one-thread walk, and
// every stat is the same statx(AT_SYMLINK_NOFOLLOW) through the directory's descriptor, with the same mount
// and time-range checks.
internal import CPosix
import Synchronization

final class StatPrefetch: @unchecked Sendable {
    // @unchecked: entries at `low` and above are written by the helper before it publishes `low` (release)
    // and read by the visiting thread only after it loads `low` (acquire); the rest is immutable.
    let descriptor: Int32
    let path: RelativePath
    let directoryStatus: FileStatus
    private let names: [UInt8]
    private let starts: [Int]
    private let types: [FileType?]
    private let count: Int
    private let willStat: (@Sendable (RelativePath) -> Void)?
    private let statuses: UnsafeMutablePointer<FileStatus>
    /// Per entry: `fetchedOK`, `notFetched`, `mountPoint`, `timeOutOfRange`, or a positive errno.
    private let codes: UnsafeMutablePointer<Int32>

    /// The highest entry the visiting thread has asked about: the helper stops at or below it.
    let cursor = Atomic<Int>(0)
    /// The lowest entry the helper has finished: every entry from here up has its code written.
    let low: Atomic<Int>
    /// `open` until a thread claims it; `withdrawn` when the visit ended first; `done` when the helper stopped.
    private let state = Atomic<Int>(StatPrefetch.open)
    private let stop = Atomic<Bool>(false)

    private static let open = 0, running = 1, withdrawn = 2, done = 3
    static let fetchedOK: Int32 = 0, notFetched: Int32 = -1, mountPoint: Int32 = -2, timeOutOfRange: Int32 = -3

    init(descriptor: Int32, path: RelativePath, directoryStatus: FileStatus, names: [UInt8], starts: [Int],
         types: [FileType?], count: Int, willStat: (@Sendable (RelativePath) -> Void)?) {
        self.descriptor = descriptor; self.path = path; self.directoryStatus = directoryStatus
        self.names = names; self.starts = starts; self.types = types; self.count = count; self.willStat = willStat
        statuses = .allocate(capacity: max(count, 1))
        codes = .allocate(capacity: max(count, 1))
        low = Atomic(count)
    }

    deinit {
        // Entries at `low` and above hold initialized statuses only where their code says fetchedOK;
        // FileStatus is a plain value (no references), so the memory is simply released.
        statuses.deallocate()
        codes.deallocate()
    }

    /// Run by the helper thread: stats entries from the last down until it meets the visiting thread.
    /// Directories (and entries of unknown type) are left to the visitor: it rarely stats them.
    func run() {
        guard state.compareExchange(expected: StatPrefetch.open, desired: StatPrefetch.running,
                                    ordering: .acquiringAndReleasing).exchanged else { return }
        var j = count - 1
        while j > cursor.load(ordering: .relaxed) && !stop.load(ordering: .relaxed) {
            if let type = types[j], type != .directory {
                fetch(j)
            } else {
                codes[j] = StatPrefetch.notFetched
            }
            low.store(j, ordering: .releasing)
            j -= 1
        }
        state.store(StatPrefetch.done, ordering: .releasing)
    }

    /// Called by the visiting thread when its visit ends (the listing's descriptor and arrays are about to
    /// be reused): afterwards the helper touches nothing of this directory.
    func withdraw() {
        if state.compareExchange(expected: StatPrefetch.open, desired: StatPrefetch.withdrawn,
                                 ordering: .acquiringAndReleasing).exchanged { return }
        stop.store(true, ordering: .relaxed)
        // The helper checks `stop` between two stats: the wait is one system call at most.
        while state.load(ordering: .acquiring) != StatPrefetch.done { system_sched_yield() }
    }

    /// Entry `i`'s prefetched result, when the helper has done it: the status, or the failure code.
    func result(_ i: Int) -> (status: FileStatus?, code: Int32)? {
        guard i >= low.load(ordering: .acquiring) else { return nil }
        let code = codes[i]
        if code == StatPrefetch.notFetched { return nil }
        return (code == StatPrefetch.fetchedOK ? statuses[i] : nil, code)
    }

    private func fetch(_ j: Int) {
        if let willStat {
            let name = names[starts[j]..<(starts[j + 1] - 1)]
            willStat(path.isEmpty ? RelativePath(unchecked: Array(name)) : RelativePath(unchecked: path.bytes + [0x2F] + name))
        }
        var s = cposix_stat()
        let start = starts[j]
        let r = names.withUnsafeBufferPointer { buffer in
            systemCall(.stat) {
                cposix_stat_at(descriptor, UnsafeRawPointer(buffer.baseAddress! + start).assumingMemoryBound(to: CChar.self), &s)
            }
        }
        switch r {
        case .success:
            let status = FileStatus(s)
            if !status.isOnSameMount(as: directoryStatus) {
                codes[j] = StatPrefetch.mountPoint
            } else if status.hasTimeOutOfRange {
                codes[j] = StatPrefetch.timeOutOfRange
            } else {
                (statuses + j).initialize(to: status)
                codes[j] = StatPrefetch.fetchedOK
            }
        case .failure(let e):
            codes[j] = e.rawValue
        }
    }
}
