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

    /// Starts `body` on every item on up to `width` pool threads and returns at once (on the caller's thread
    /// when no thread can be had); `wait` on what it returns.
    static func start<Item: Sendable>(_ items: [Item], width: Int,
                                      _ body: @escaping @Sendable (Item) throws(FileSystemError) -> Void) -> Started {
        let work = Shared(items, body)
        var threads: [WorkerPool.Completion] = []
        for _ in 0..<max(1, width) {
            guard let thread = WorkerPool.shared.start({ work.run() }) else { break }
            threads.append(thread)
        }
        if threads.isEmpty { work.run() }
        return Started(threads: threads, failure: { work.failure.withLock { $0 } })
    }

    /// Work `start` set going.
    struct Started {
        fileprivate let threads: [WorkerPool.Completion]
        fileprivate let failure: () -> FileSystemError?

        /// Returns once every item started has returned; throws the first failure.
        func wait() throws(FileSystemError) {
            for thread in threads { thread.wait() }
            if let error = failure() { throw error }
        }
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

/// Folder fsyncs started in batches and waited for together, before the commit record: the folders whose
/// times were just restored, then the other folders the run changed. Each fsync mostly waits on the disk (a
/// device flush, 0.3 ms here), and deletes spread over hundreds of folders dirty hundreds of them: up to 16
/// threads overlap those waits, and a file system with one journal commits theirs together. Only their order
/// changes: all of them are durable before the commit record is written, as before (Docs/journal.md). A batch
/// is one hand-over (threads started once, items taken by an atomic counter): a condition signalled per folder
/// was four futex calls a folder.
final class FolderSyncs {
    /// The run's thread only.
    @exclusivity(unchecked) private var started: [(batch: ParallelFileWork.Started, handles: Int)] = []
    /// The first failure of a batch already waited for.
    @exclusivity(unchecked) private var failure: FileSystemError?
    /// Most descriptors held by batches not yet waited for: a batch keeps its handles until then, and a run that
    /// dirtied thousands of folders must stay far below RLIMIT_NOFILE (1,024 by default, the directory cache's
    /// 256 besides).
    private static let handlesInFlight = 384

    /// Starts the fsyncs of `handles`, first waiting for the oldest batches while too many descriptors are held.
    /// After a failure nothing more is started: the commit will not be written.
    func add(_ handles: [DirectoryHandle]) {
        guard !handles.isEmpty else { return }
        while !started.isEmpty, started.reduce(0, { $0 + $1.handles }) + handles.count > Self.handlesInFlight { finishOldest() }
        guard failure == nil else { return }
        started.append((ParallelFileWork.start(handles, width: min(16, max(1, handles.count / 8))) { handle throws(FileSystemError) in
            try handle.sync()
        }, handles.count))
    }

    /// Every fsync started so far has returned; the first failure is thrown.
    func wait() throws(FileSystemError) {
        while !started.isEmpty { finishOldest() }
        if let first = failure {
            failure = nil
            throw first
        }
    }

    private func finishOldest() {
        let oldest = started.removeFirst()
        do throws(FileSystemError) { try oldest.batch.wait() } catch { if failure == nil { failure = error } }
    }

    /// A run that ends without waiting (an error before its commit): its fsyncs still finish before it goes.
    deinit { try? wait() }
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
