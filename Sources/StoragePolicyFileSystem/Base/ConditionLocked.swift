// A value that lives behind a mutex with one condition variable, in the style of swift-nio's ConditionLock<T>:
// threads that must wait for the value to change (a queue gaining work, a hand-off slot emptying) sleep on the
// condition instead of spinning. The state is reachable only inside `withLock`, so no field is ever "touched only
// with the lock held" by convention alone. For a value nobody waits on, use Synchronization's Mutex.
//
// `@_spi(Layers) public` and `@inlinable`, not `package`: its users are in the layers above, and this toolchain
// specialises a generic across modules only from a public inlinable body (a `package` one is called unspecialised,
// with a generic-metadata lookup per call: the walk's queue cost 3.6 % of a plan). The SPI keeps it out of the
// library's API: only a file that writes `@_spi(Layers) import StoragePolicyFileSystem` sees it.
@_spi(Layers) public final class ConditionLocked<State>: @unchecked Sendable {
    // @unchecked is sound: `state` is read or written only between `lock()` and `unlock(waking:)` below
    // (cond_wait releases and retakes the same mutex); it is `@usableFromInline` for the inlined `withLock`, which
    // holds the mutex while it runs `body`, so no two accesses can overlap and the dynamic exclusivity check (made in
    // the caller's module, where the inlined body runs) is skipped. The pthread objects live on the heap because they must never move
    // once initialised.
    @exclusivity(unchecked) @usableFromInline var state: State
    private let mutex: UnsafeMutablePointer<CInterop.Mutex>
    private let condition: UnsafeMutablePointer<CInterop.Condition>

    package init(_ state: State) {
        self.state = state
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

    /// Who to wake when a `withLock` body has changed the state.
    public enum Wake { case none, one, all }

    /// Runs `body` on the state with the mutex held, then wakes `wake` of the waiters.
    @inlinable
    public func withLock<R>(wake: Wake = .none, _ body: (inout State) throws -> R) rethrows -> R {
        lock()
        defer { unlock(waking: wake) }
        return try body(&state)
    }

    @usableFromInline func lock() { system_pthread_mutex_lock(mutex) }

    /// Releases the mutex while asleep on the condition, and holds it again on return.
    @usableFromInline func wait() { system_pthread_cond_wait(condition, mutex) }

    /// Wakes `wake` of the waiters, then releases the mutex (waking first: a woken waiter then finds the state
    /// exactly as this holder left it).
    @usableFromInline func unlock(waking wake: Wake) {
        switch wake {
        case .none: break
        case .one: system_pthread_cond_signal(condition)
        case .all: system_pthread_cond_broadcast(condition)
        }
        system_pthread_mutex_unlock(mutex)
    }

    /// Sleeps until `ready` holds for the state, then runs `body` on it (still holding the mutex) and wakes `wake`.
    /// A waiter is woken only by another `withLock(wake:)`; it checks `ready` again each time.
    @inlinable
    public func withLock<R>(when ready: (State) -> Bool, wake: Wake = .none,
                            _ body: (inout State) throws -> R) rethrows -> R {
        lock()
        defer { unlock(waking: wake) }
        while !ready(state) { wait() }
        return try body(&state)
    }
}
