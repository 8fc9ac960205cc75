// Walks a tree through directory descriptors on several threads, handing each directory to a visitor and
// telling it, bottom-up, when a subtree is done. Never follows a symlink, never enters another mount (bind
// mounts on the same device included: mount ids are compared, not devices).
// It lives in the evaluation layer, beside the planner's visitor, though it is file-system work: the walk is
// generic over its visitor, and only within one module does the optimiser specialise it. Declared in the layer
// below, every directory and entry went through the unspecialised walk (witness calls, generic metadata for its
// nodes and work items: about 9 % of a plan's instructions, Docs/performance.md). What it is handed and what it
// reads (WalkVisitor, DirectoryListing, WalkDirectory) stay in FileSystem/.
import Synchronization
@_spi(Layers) import StoragePolicyFileSystem

package struct Walker: Sendable {
    package let root: String
    package let options: WalkOptions

    package init(root: String, options: WalkOptions = WalkOptions()) {
        self.root = root; self.options = options
    }

    /// The number of threads a walk uses.
    package var threadCount: Int { options.threads > 0 ? options.threads : WorkerPool.availableCores }

    /// Walks the whole tree. Throws only when the root itself cannot be opened or read; everything below
    /// it that cannot be walked goes to `couldNotEnter`. Returns each thread's worker.
    package func walk<V: WalkVisitor>(_ visitor: V) throws(FileSystemError) -> (root: FileStatus, workers: [V.Worker]) {
        let counter = WalkDirectory.Counter()
        let rootDirectory = try WalkDirectory.open(root: root, counter: counter)
        let run = WalkRun(visitor: visitor, rootStatus: rootDirectory.status, counter: counter,
                          budget: options.openDirectoryBudget ?? Walker.defaultBudget(), threads: threadCount,
                          willStat: options.willStat, cancellation: options.cancellation)
        let listing = DirectoryListing()
        listing.willStat = options.willStat
        try listing.load(rootDirectory, skipStateDirectory: true)
        let workers = Mutex<[V.Worker]>([])
        let first = visitor.makeWorker()
        workers.withLock { $0.append(first) }
        run.start(rootDirectory, listing: listing, worker: first)
        // The walking threads are the pool's: index 0 is this thread, the rest are borrowed for the walk.
        WorkerPool.shared.run(width: run.threads) { index in
            let worker = index == 0 ? first : visitor.makeWorker()
            if index != 0 { workers.withLock { $0.append(worker) } }
            run.work(worker)
        }
        // A cancelled walk's visitor saw part of the tree: nothing of it may become a plan.
        if options.cancellation?.isCancelled == true { throw FileSystemError(.cancelled, path: .root, errno: .interrupted) }
        return (rootDirectory.status, workers.withLock { $0 })
    }

    /// A quarter of the descriptor limit, within 8...256: leaves room for everything else the process opens.
    static func defaultBudget() -> Int {
        guard let limit = system_openFileLimit() else { return 64 }
        let soft = limit.unlimited ? 4096 : Int(clamping: limit.soft)
        return min(256, max(8, soft / 4))
    }
}

/// One walk in progress: the shared stack and the tree of unfinished directories.
private final class WalkRun<V: WalkVisitor>: Sendable {
    let visitor: V
    /// The root's status: every directory walked must be on its mount.
    let rootStatus: FileStatus
    let counter: WalkDirectory.Counter
    let budget: Int
    let threads: Int
    let willStat: (@Sendable (RelativePath) -> Void)?
    let cancellation: CancellationFlag?
    let stack = WorkStack<Work>()

    /// What a walking thread takes from the stack: a directory, or the stats of a large directory another
    /// thread is judging (see StatPrefetch).
    enum Work: Sendable {
        case directory(Pending)
        case prefetch(StatPrefetch)
    }

    /// A directory that has been visited and waits for its entered subdirectories.
    final class Node: Sendable {
        let parent: Node?
        let state: V.Directory
        let pending = Atomic<Int>(0)
        init(parent: Node?, state: V.Directory) { self.parent = parent; self.state = state }
    }

    /// A subdirectory to walk: opened from `anchor` through `chain` (ancestors whose descriptors were
    /// closed), then `name`. Holds no path of its own: the directories waiting at every level of a deep tree
    /// would otherwise hold paths (and chains) as long as the depth, the square of the depth in all.
    struct Pending: Sendable {
        var parent: Node
        var anchor: WalkDirectory
        var chain: WalkChain?
        var name: FileName

        /// The links from the anchor down, in order.
        var links: [WalkLink] {
            var links: [WalkLink] = []
            var current = chain
            while let c = current { links.append(c.link); current = c.parent }
            return links.reversed()
        }

        var path: RelativePath {
            guard chain != nil else { return anchor.path.appending(name) }
            var bytes = anchor.path.bytes
            for component in links.map(\.name) + [name] {
                if !bytes.isEmpty { bytes.append(0x2F) }
                bytes.append(contentsOf: component.bytes)
            }
            return RelativePath(unchecked: bytes)
        }
    }

    init(visitor: V, rootStatus: FileStatus, counter: WalkDirectory.Counter, budget: Int, threads: Int,
         willStat: (@Sendable (RelativePath) -> Void)?, cancellation: CancellationFlag?) {
        self.visitor = visitor; self.rootStatus = rootStatus; self.counter = counter; self.budget = budget
        self.threads = threads; self.willStat = willStat; self.cancellation = cancellation
    }

    func start(_ root: WalkDirectory, listing: DirectoryListing, worker: V.Worker) {
        share(listing)
        let state = visitor.visit(listing, parent: nil, worker: worker)
        listing.endVisit()
        let node = Node(parent: nil, state: state)
        schedule(node, directory: root, anchor: nil, chain: nil, listing: listing, worker: worker)
    }

    func work(_ worker: V.Worker) {
        let listing = DirectoryListing()
        listing.willStat = willStat
        share(listing)
        while let work = stack.pop() {
            // Between directories: a cancelled walk empties the stack, which wakes and ends every thread.
            if let cancellation, cancellation.isCancelled {
                stack.close()
                return
            }
            switch work {
            case .directory(let item): process(item, listing: listing, worker: worker)
            case .prefetch(let task): task.run()
            }
        }
    }

    /// With more than one thread, a large directory's stats can be handed to an idle one.
    private func share(_ listing: DirectoryListing) {
        guard threads > 1 else { return }
        listing.offer = { [stack] task in stack.push([.prefetch(task)]) }
    }

    private func process(_ item: Pending, listing: DirectoryListing, worker: V.Worker) {
        let directory: WalkDirectory
        let path = item.path
        do {
            directory = try open(item, path: path)
            if !directory.status.isOnSameMount(as: rootStatus) {
                skip(item, path, .otherFileSystem, worker: worker)
                return
            }
            try listing.load(directory, skipStateDirectory: false)
        } catch {
            let reason: WalkSkipReason = switch error.errno {
            case .noSuchFile: .vanished
            case .tooManySymbolicLinks, .notDirectory: .replaced
            default: .unreadable(error.errno)
            }
            skip(item, path, reason, worker: worker)
            return
        }
        let state = visitor.visit(listing, parent: item.parent.state, worker: worker)
        listing.endVisit()
        let node = Node(parent: item.parent, state: state)
        schedule(node, directory: directory, anchor: item.anchor, chain: item.chain, listing: listing, worker: worker)
    }

    /// Queues the subdirectories the visitor entered, keeping `directory` open as their anchor while the
    /// budget allows, else letting them reopen the path from this directory's own anchor.
    private func schedule(_ node: Node, directory: WalkDirectory, anchor: WalkDirectory?, chain: WalkChain?,
                          listing: DirectoryListing, worker: V.Worker) {
        let entered = listing.entered
        if entered.isEmpty {
            finish(node, worker: worker)
            return
        }
        node.pending.store(entered.count, ordering: .releasing)
        let keepOpen = anchor == nil || counter.live.load(ordering: .relaxed) <= budget
        let childAnchor = keepOpen ? directory : anchor!
        var childChain = keepOpen ? nil : chain
        if !keepOpen, let name = directory.path.lastComponent {
            // Shared by every child (and their descendants): one link per level, not one chain per child.
            childChain = WalkChain(WalkLink(name: name, device: directory.status.device, inode: directory.status.inode),
                                   parent: childChain)
        }
        var items: [Work] = []
        items.reserveCapacity(entered.count)
        // Reversed, so the stack hands them out in listing order.
        for i in entered.reversed() {
            items.append(.directory(Pending(parent: node, anchor: childAnchor, chain: childChain, name: listing.name(i))))
        }
        stack.push(items)
    }

    private func open(_ item: Pending, path target: RelativePath) throws(FileSystemError) -> WalkDirectory {
        guard item.chain != nil else {
            return try WalkDirectory.open(item.name, in: item.anchor.descriptor, path: target, counter: counter)
        }
        // Reopen the closed ancestors one by one, each checked against the identity it had when walked.
        var current = item.anchor.descriptor
        var owned: Int32 = -1
        defer { if owned >= 0 { _ = system_close(owned) } }
        var path = item.anchor.path
        for link in item.links {
            path = path.appending(link.name)
            let fd = try WalkDirectory.openDescriptor(link.name, in: current, path: path)
            if owned >= 0 { _ = system_close(owned) }
            owned = fd
            current = fd
            let status = try WalkDirectory.status(of: fd, path: path)
            guard status.device == link.device, status.inode == link.inode else {
                throw FileSystemError(.openat, path: path, errno: .notDirectory)
            }
        }
        return try WalkDirectory.open(item.name, in: current, path: target, counter: counter)
    }

    private func skip(_ item: Pending, _ path: RelativePath, _ reason: WalkSkipReason, worker: V.Worker) {
        visitor.couldNotEnter(path, because: reason, parent: item.parent.state, worker: worker)
        childDone(item.parent, worker: worker)
    }

    private func childDone(_ parent: Node, worker: V.Worker) {
        if parent.pending.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 {
            finish(parent, worker: worker)
        }
    }

    /// Finishes `node` and every ancestor it was the last to finish: iterative, so depth cannot overflow
    /// the stack.
    private func finish(_ node: Node, worker: V.Worker) {
        var current = node
        while true {
            visitor.finished(current.state, worker: worker)
            guard let parent = current.parent else {
                stack.close()
                return
            }
            guard parent.pending.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 else { return }
            current = parent
        }
    }
}
