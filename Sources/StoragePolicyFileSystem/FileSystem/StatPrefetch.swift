// Statuses of one large directory's entries, fetched ahead by an idle walking thread while the thread that
// read the directory judges it: a flat folder of 200,000 files no longer leaves the second core waiting.
// The helper stats from the last entry down, the visiting thread asks from the first up; they meet. It only
// caches: what the visitor sees (and when) is decided by the listing exactly as in a one-thread walk, and
// every stat is the same statx(AT_SYMLINK_NOFOLLOW) through the directory's descriptor, with the same mount
// and time-range checks.
internal import CPosix
import Synchronization

package final class StatPrefetch: Sendable {
    // Sendable without @unchecked: the fields below are constants, atomics, or primitives that own what they
    // guard (the results in DescendingSlots, the phase in a ConditionLocked).
    package let descriptor: Int32
    package let path: RelativePath
    package let directoryStatus: FileStatus
    private let names: [UInt8]
    private let starts: [Int]
    private let types: [FileType?]
    private let count: Int
    private let willStat: (@Sendable (RelativePath) -> Void)?
    /// Per entry, from the last down: the helper's result, published as soon as it has it.
    private let results: DescendingSlots<Fetched>

    /// The highest entry the visiting thread has asked about: the helper stops at or below it.
    let cursor = Atomic<Int>(0)
    /// `open` until a thread claims it; `withdrawn` when the visit ended first; `done` when the helper stopped.
    /// A withdrawing visitor sleeps on it until `done`.
    private let phase = ConditionLocked(Phase.open)
    private let stop = Atomic<Bool>(false)

    private enum Phase { case open, running, withdrawn, done }

    /// One entry's result: its status, a failure code, or left to the visitor.
    private enum Fetched: Sendable {
        case status(FileStatus)
        case failed(Int32)
        case notFetched
    }

    static let fetchedOK: Int32 = 0, notFetched: Int32 = -1, mountPoint: Int32 = -2, timeOutOfRange: Int32 = -3

    package init(descriptor: Int32, path: RelativePath, directoryStatus: FileStatus, names: [UInt8], starts: [Int],
         types: [FileType?], count: Int, willStat: (@Sendable (RelativePath) -> Void)?) {
        self.descriptor = descriptor; self.path = path; self.directoryStatus = directoryStatus
        self.names = names; self.starts = starts; self.types = types; self.count = count; self.willStat = willStat
        results = DescendingSlots(count: count)
    }

    /// Run by the helper thread: stats entries from the last down until it meets the visiting thread.
    /// Directories (and entries of unknown type) are left to the visitor: it rarely stats them.
    package func run() {
        let claimed = phase.withLock { phase -> Bool in
            guard phase == .open else { return false }
            phase = .running
            return true
        }
        guard claimed, let writer = results.claimWriter() else { return }
        while writer.next > cursor.load(ordering: .relaxed) && !stop.load(ordering: .relaxed) {
            let j = writer.next
            if let type = types[j], type != .directory {
                writer.publish(fetch(j))
            } else {
                writer.publish(.notFetched)
            }
        }
        phase.withLock(wake: .all) { $0 = .done }
    }

    /// Called by the visiting thread when its visit ends (the listing's descriptor and arrays are about to
    /// be reused): afterwards the helper touches nothing of this directory.
    func withdraw() {
        let wasOpen = phase.withLock { phase -> Bool in
            guard phase == .open else { return false }
            phase = .withdrawn
            return true
        }
        if wasOpen { return }
        stop.store(true, ordering: .relaxed)
        // The helper checks `stop` between two stats: this sleeps for one system call at most.
        phase.withLock(when: { $0 == .done }) { _ in }
    }

    /// True once a visitor has asked the helper to stop (for tests).
    var isStopping: Bool { stop.load(ordering: .relaxed) }

    /// Entry `i`'s prefetched result, when the helper has done it: the status, or the failure code.
    package func result(_ i: Int) -> (status: FileStatus?, code: Int32)? {
        switch results[i] {
        case nil, .notFetched: nil
        case .status(let status): (status, StatPrefetch.fetchedOK)
        case .failed(let code): (nil, code)
        }
    }

    private func fetch(_ j: Int) -> Fetched {
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
            if !status.isOnSameMount(as: directoryStatus) { return .failed(StatPrefetch.mountPoint) }
            if status.hasTimeOutOfRange { return .failed(StatPrefetch.timeOutOfRange) }
            return .status(status)
        case .failure(let e):
            return .failed(e.rawValue)
        }
    }
}
