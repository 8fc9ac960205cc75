// File-system work whose items wait on the disk far more than on the CPU: a commit's folder fsyncs, the purge of
// a staging folder. A few threads of the shared pool take the items in turn, whichever is free next; nothing is
// ordered among them, and the first failure stops the others from starting another item.

import Synchronization
@_spi(Layers) import StoragePolicyFileSystem

enum ParallelFileWork {
    /// Runs `body` on every item (until one fails) on `width` threads, the caller's among them; throws the first
    /// failure once every item started has returned.
    static func run<Item: Sendable>(_ items: [Item], width: Int,
                                    _ body: @escaping @Sendable (Item) throws(FileSystemError) -> Void) throws(FileSystemError) {
        let work = Shared(items, body)
        WorkerPool.shared.run(width: width) { _ in work.run() }
        if let error = work.failure.withLock({ $0 }) { throw error }
    }

    private final class Shared<Item: Sendable>: Sendable {
        let items: [Item]
        let body: @Sendable (Item) throws(FileSystemError) -> Void
        private let next = Atomic<Int>(0)
        let failure = Mutex<FileSystemError?>(nil)

        init(_ items: [Item], _ body: @escaping @Sendable (Item) throws(FileSystemError) -> Void) {
            self.items = items
            self.body = body
        }

        func run() {
            while true {
                let i = next.add(1, ordering: .relaxed).oldValue
                guard i < items.count, failure.withLock({ $0 == nil }) else { return }
                do throws(FileSystemError) {
                    try body(items[i])
                } catch {
                    failure.withLock { if $0 == nil { $0 = error } }
                    return
                }
            }
        }
    }
}

/// Folder fsyncs started as each folder is ready and waited for together, before the commit record: the folders
/// whose times were just restored are handed over one by one while the run restores the next, and the commit
/// adds the rest. Each fsync mostly waits on the disk (a device flush, 0.3 ms here), and deletes spread over
/// hundreds of folders dirty hundreds of them: up to `width` threads overlap those waits, and a file system with
/// one journal commits theirs together. Only their order changes: all of them are durable before the commit
/// record is written, as before (Docs/journal.md).
final class FolderSyncs {
    private struct State {
        /// A handle is let go (its descriptor closed) once taken: the queue holds only what waits.
        var queue: [DirectoryHandle?] = []
        var taken = 0
        var failure: FileSystemError?
        var closed = false
    }

    private let state = ConditionLocked(State())
    private let width: Int
    /// The run's thread only.
    @exclusivity(unchecked) private var threads: [WorkerPool.Completion] = []

    init(width: Int = 16) { self.width = width }

    /// A run that ends without waiting (an error before its commit): the threads finish what they took and leave.
    deinit { state.withLock(wake: .all) { $0.closed = true } }

    /// Starts `handle`'s fsync on a worker (or here, when no thread can be had).
    func add(_ handle: DirectoryHandle) {
        let waiting = state.withLock(wake: .one) { state -> Int in
            state.queue.append(handle)
            return state.queue.count - state.taken
        }
        // One more thread while the queue outgrows the ones there: a few folders need no crowd.
        guard threads.count < width, waiting > threads.count * 2 else { return }
        let state = self.state
        if let thread = WorkerPool.shared.start({ FolderSyncs.serve(state) }) {
            threads.append(thread)
        } else if threads.isEmpty {
            FolderSyncs.serve(state, untilEmpty: true)
        }
    }

    /// Every handle added so far is synced, or the first failure is thrown once none is running any more; the
    /// threads go back to the pool (a later `add` borrows them again).
    func wait() throws(FileSystemError) {
        if threads.isEmpty { FolderSyncs.serve(state, untilEmpty: true) }
        state.withLock(wake: .all) { $0.closed = true }
        for thread in threads { thread.wait() }
        threads.removeAll()
        let failure = state.withLock { state in
            defer { state = State() }
            return state.failure
        }
        if let failure { throw failure }
    }

    /// A thread's share: one fsync at a time, until the queue is empty and closed (`untilEmpty`: until empty).
    private static func serve(_ state: ConditionLocked<State>, untilEmpty: Bool = false) {
        var failure: FileSystemError?
        while true {
            let handle = state.withLock(when: { untilEmpty || $0.taken < $0.queue.count || $0.closed }) { state -> DirectoryHandle? in
                if let failure, state.failure == nil { state.failure = failure }
                // After a failure the rest is not started: the run stops and rolls back.
                if state.failure != nil { state.taken = state.queue.count }
                guard state.taken < state.queue.count else { return nil }
                defer { state.taken += 1 }
                return state.queue[state.taken].take()
            }
            guard let handle else { return }
            do throws(FileSystemError) { try handle.sync() } catch { failure = error }
        }
    }
}

extension Transaction {
    /// Removes everything in `staging` (through descriptors, never following a symlink), then the folder itself
    /// (`name` in `parent`). Past `deadline` it stops with `.pastDeadline`.
    static func purge(staging: DirectoryHandle, named name: FileName, in parent: DirectoryHandle,
                      deadline: ContinuousClock.Instant? = nil) throws(FileSystemError) {
        let entries = try staging.entries()
        // Unlinking waits on the disk far more than on the CPU: a few threads overlap those waits. Nothing is
        // ordered here: every staged entry is its own tree, and all of them go.
        try ParallelFileWork.run(entries, width: min(4, max(1, entries.count / 512))) { entry throws(FileSystemError) in
            if let deadline, ContinuousClock.now >= deadline {
                throw FileSystemError(.pastDeadline, path: staging.path, errno: .timedOut)
            }
            try removeStaged(entry, from: staging, deadline: deadline)
        }
        do { try parent.removeDirectory(name) } catch where error.errno == .noSuchFile {}
        try parent.sync()
    }

    private static func removeStaged(_ entry: DirectoryEntry, from staging: DirectoryHandle,
                                     deadline: ContinuousClock.Instant?) throws(FileSystemError) {
        // d_type spares a stat per staged file; anything else (or unknown) goes through removeTree.
        if let type = entry.type, type != .directory {
            do {
                try staging.removeFileIfPresent(entry.name)
                return
            } catch where error.errno == .isDirectory {}
        }
        try staging.removeTree(entry.name, deadline: deadline)
    }
}
