// The engine's one pool of threads. The walk, the stat prefetch, the plan writer, the purge and the background
// unlinks all borrow threads here instead of each starting its own: a thread that finished a plan's walk serves
// the apply's unlinks in the same process. The pool grows when every thread is busy (a gang that waits on
// another gang's work can never deadlock for want of a thread) and keeps its idle threads sleeping on a
// condition, never spinning. This is the only place in the engine that creates a thread.

import Synchronization

package final class WorkerPool: Sendable {
    /// The process's pool.
    package static let shared = WorkerPool()

    private struct Job {
        let done: Completion
        let body: @Sendable () -> Void
    }

    private struct State {
        var jobs: [Job] = []
        /// Threads waiting for a job, or about to wait without running anything else first.
        var idle = 0
        /// Threads asked of the system that have not yet begun to wait.
        var starting = 0
    }

    private let state = ConditionLocked(State())
    private let started = Atomic<Int>(0)

    /// Cores this process may use.
    package static var availableCores: Int { system_processorCount() }

    /// Threads the pool has started so far (for tests and the benchmark notes).
    package var threadCount: Int { started.load(ordering: .relaxed) }

    /// Runs `body(0..<width)`: index 0 on the calling thread, the others on pool threads; returns when every
    /// index has returned. When no thread can be had, the missing indices run on the calling thread after 0
    /// (the work still gets done, only slower), so a body must never wait for another index to run beside it.
    package func run(width: Int, _ body: @escaping @Sendable (Int) -> Void) {
        let others = max(width, 1) - 1
        var completions: [Completion] = []
        completions.reserveCapacity(others)
        var inline: [Int] = []
        if others > 0 {
            for index in 1...others {
                if let done = start({ body(index) }) { completions.append(done) } else { inline.append(index) }
            }
        }
        body(0)
        for index in inline { body(index) }
        for done in completions { done.wait() }
    }

    /// Starts `body` on a pool thread; the returned completion's `wait` returns once it has run. Nil when the
    /// pool has no idle thread and the system refuses a new one.
    package func start(_ body: @escaping @Sendable () -> Void) -> Completion? {
        let done = Completion()
        let needsThread = state.withLock(wake: .one) { state -> Bool in
            state.jobs.append(Job(done: done, body: body))
            guard state.jobs.count > state.idle + state.starting else { return false }
            state.starting += 1
            return true
        }
        guard needsThread, !spawn() else { return done }
        // No new thread: take the job back, unless a thread that fell idle meanwhile already took it.
        let reclaimed = state.withLock { state -> Bool in
            state.starting -= 1
            guard let at = state.jobs.firstIndex(where: { $0.done === done }) else { return false }
            state.jobs.remove(at: at)
            return true
        }
        return reclaimed ? nil : done
    }

    /// `body`'s value, computed on a pool thread from now on while the caller goes on (here and now when no
    /// thread can be had); `value` waits for it.
    package func compute<Value: Sendable>(_ body: @escaping @Sendable () -> Value) -> Pending<Value> {
        let result = Pending<Value>.Result()
        if let done = start({ let value = body(); result.value.withLock { $0 = value } }) { return Pending(result, done) }
        result.value.withLock { $0 = body() }
        return Pending(result, nil)
    }

    /// A value `compute` is making.
    package final class Pending<Value: Sendable>: Sendable {
        fileprivate final class Result: Sendable { let value = Mutex<Value?>(nil) }
        private let result: Result
        private let done: Completion?

        fileprivate init(_ result: Result, _ done: Completion?) { self.result = result; self.done = done }

        /// True once the value is made (`value` then returns at once).
        package var isMade: Bool { result.value.withLock { $0 != nil } }

        /// Blocks until the value is made.
        package var value: Value {
            done?.wait()
            return result.value.withLock { $0! }
        }
    }

    /// A main thread's room for every pool thread: the engine's async calls run a whole plan or apply on one,
    /// and the platform default for secondary threads can be 512 KiB (Darwin); on Linux it is usually this already.
    private static let stackSize = 8 << 20

    /// One new thread serving the queue; false when the system refuses it.
    private func spawn() -> Bool {
        let box = Unmanaged.passRetained(Serve(self)).toOpaque()
        guard system_pthread_create({ raw in
            let serve = Unmanaged<Serve>.fromOpaque(raw!).takeRetainedValue()
            serve.pool.serve()
            return nil
        }, box, stackSize: WorkerPool.stackSize) != nil else {
            Unmanaged<Serve>.fromOpaque(box).release()
            return false
        }
        started.add(1, ordering: .relaxed)
        return true
    }

    private final class Serve {
        let pool: WorkerPool
        init(_ pool: WorkerPool) { self.pool = pool }
    }

    /// A pool thread's life: run a job, then sleep until another arrives. Threads are never joined; they end
    /// with the process.
    private func serve() {
        state.withLock { state in
            state.starting -= 1
            state.idle += 1
        }
        while true {
            let job = state.withLock(when: { !$0.jobs.isEmpty }) { state in
                state.idle -= 1
                return state.jobs.removeFirst()
            }
            job.body()
            // Counted idle before the job is reported done, so a caller that starts its next job at once
            // finds this thread instead of asking the system for another.
            state.withLock { state in state.idle += 1 }
            job.done.finish()
        }
    }

    /// The end of one started job.
    package final class Completion: Sendable {
        private let finished = ConditionLocked(false)

        /// Blocks until the job has run.
        package func wait() { finished.withLock(when: { $0 }) { _ in } }

        fileprivate func finish() { finished.withLock(wake: .all) { $0 = true } }
    }
}
