// A mutex with one condition variable, for the hand-offs between the walk's threads and between the plan
// writer's two threads. The pthread objects live on the heap: they must never move once initialised.

final class ConditionLock: @unchecked Sendable {
    // @unchecked: the pthread calls are the synchronisation.
    private let mutex: UnsafeMutablePointer<CInterop.Mutex>
    private let condition: UnsafeMutablePointer<CInterop.Condition>

    init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: CInterop.Mutex())
        system_pthread_mutex_init(mutex)
        condition = .allocate(capacity: 1)
        condition.initialize(to: CInterop.Condition())
        system_pthread_cond_init(condition)
    }

    deinit {
        system_pthread_cond_destroy(condition)
        system_pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Runs `body` holding the mutex.
    func withLock<R>(_ body: () throws -> R) rethrows -> R {
        system_pthread_mutex_lock(mutex)
        defer { system_pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// Sleeps until signalled; only inside `withLock` (the mutex is released while waiting).
    func wait() { system_pthread_cond_wait(condition, mutex) }

    /// Wakes one waiter; inside `withLock`.
    func signal() { system_pthread_cond_signal(condition) }

    /// Wakes every waiter; inside `withLock`.
    func broadcast() { system_pthread_cond_broadcast(condition) }
}
