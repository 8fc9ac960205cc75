// A last-in-first-out queue of directories shared by the walker's threads, and the threads themselves.
// Never busy-waits: idle workers sleep on a condition variable until work arrives or the walk is over.

/// LIFO keeps the walk depth-first, so the directories waiting (and the descriptors they pin) stay few.
final class WorkStack<Item>: @unchecked Sendable {
    // @unchecked: every field is touched only with `lock` held.
    private var items: [Item] = []
    private var closed = false
    private let lock = ConditionLock()

    func push(_ new: [Item]) {
        guard !new.isEmpty else { return }
        lock.withLock {
            items.append(contentsOf: new)
            if new.count == 1 { lock.signal() } else { lock.broadcast() }
        }
    }

    /// The next item; nil once the stack is closed (the walk is over).
    func pop() -> Item? {
        lock.withLock {
            while true {
                if closed { return nil }
                if let item = items.popLast() { return item }
                lock.wait()
            }
        }
    }

    /// Ends the walk: every waiting and future `pop` returns nil.
    func close() {
        lock.withLock {
            closed = true
            items.removeAll()
            lock.broadcast()
        }
    }
}

/// Runs `body(0..<count)` with index 0 on the calling thread and the others on new threads, and waits.
enum WorkerThreads {
    private final class Start {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }

    static func run(count: Int, _ body: @escaping @Sendable (Int) -> Void) {
        var threads: [CInterop.Thread] = []
        for index in 1..<max(count, 1) {
            // No thread: the work still gets done by the threads we have.
            if let thread = start({ body(index) }) { threads.append(thread) }
        }
        body(0)
        for thread in threads { system_pthread_join(thread) }
    }

    /// Runs `body` on a new thread, to be joined with `system_pthread_join`; nil when none can be made.
    static func start(_ body: @escaping @Sendable () -> Void) -> CInterop.Thread? {
        let start = Unmanaged.passRetained(Start(body)).toOpaque()
        let thread = system_pthread_create({ raw in
            let start = Unmanaged<Start>.fromOpaque(raw!).takeRetainedValue()
            start.body()
            return nil
        }, start)
        if thread == nil { Unmanaged<Start>.fromOpaque(start).release() }
        return thread
    }

    /// Cores this process may use.
    static var availableCores: Int {
        system_processorCount()
    }
}
