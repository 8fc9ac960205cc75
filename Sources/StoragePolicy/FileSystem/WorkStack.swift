// A last-in-first-out queue of directories shared by the walker's threads, and the threads themselves.
// Never busy-waits: idle workers sleep on a condition variable until work arrives or the walk is over.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// LIFO keeps the walk depth-first, so the directories waiting (and the descriptors they pin) stay few.
final class WorkStack<Item>: @unchecked Sendable {
    // @unchecked: every field is touched only with `mutex` held.
    private var items: [Item] = []
    private var closed = false
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    func push(_ new: [Item]) {
        guard !new.isEmpty else { return }
        pthread_mutex_lock(mutex)
        items.append(contentsOf: new)
        if new.count == 1 { pthread_cond_signal(condition) } else { pthread_cond_broadcast(condition) }
        pthread_mutex_unlock(mutex)
    }

    /// The next item; nil once the stack is closed (the walk is over).
    func pop() -> Item? {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while true {
            if closed { return nil }
            if let item = items.popLast() { return item }
            pthread_cond_wait(condition, mutex)
        }
    }

    /// Ends the walk: every waiting and future `pop` returns nil.
    func close() {
        pthread_mutex_lock(mutex)
        closed = true
        items.removeAll()
        pthread_cond_broadcast(condition)
        pthread_mutex_unlock(mutex)
    }
}

/// Runs `body(0..<count)` with index 0 on the calling thread and the others on new threads, and waits.
enum WorkerThreads {
    private final class Start {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }

    static func run(count: Int, _ body: @escaping @Sendable (Int) -> Void) {
        var threads: [pthread_t] = []
        for index in 1..<max(count, 1) {
            let start = Unmanaged.passRetained(Start { body(index) }).toOpaque()
            var thread = pthread_t()
            let r = pthread_create(&thread, nil, { raw in
                let start = Unmanaged<Start>.fromOpaque(raw!).takeRetainedValue()
                start.body()
                return nil
            }, start)
            if r == 0 {
                threads.append(thread)
            } else {
                // No thread: the work still gets done by the threads we have.
                Unmanaged<Start>.fromOpaque(start).release()
            }
        }
        body(0)
        for thread in threads { pthread_join(thread, nil) }
    }

    /// Cores this process may use.
    static var availableCores: Int {
        max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    }
}
