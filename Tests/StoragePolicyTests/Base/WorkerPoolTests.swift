import Testing
import Synchronization
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem

@Suite struct WorkerPoolTests {
    @Test func runGivesEveryIndexOnceAndWaitsForAll() {
        let seen = Mutex<[Int]>([])
        WorkerPool.shared.run(width: 6) { index in seen.withLock { $0.append(index) } }
        #expect(seen.withLock { $0.sorted() } == [0, 1, 2, 3, 4, 5])
    }

    @Test func widthOneRunsOnTheCallerAlone() {
        let seen = Mutex<[Int]>([])
        let before = WorkerPool.shared.threadCount
        WorkerPool.shared.run(width: 1) { index in seen.withLock { $0.append(index) } }
        #expect(seen.withLock { $0 } == [0])
        #expect(WorkerPool.shared.threadCount == before)
    }

    /// Ten gangs one after another need no more threads than the widest of them: idle threads are reused.
    @Test func idleThreadsAreReused() {
        let pool = WorkerPool()
        for _ in 0..<10 { pool.run(width: 3) { _ in } }
        #expect(pool.threadCount <= 2)
    }

    /// A job that waits for a later job cannot starve it: the pool grows instead of queueing behind a sleeper.
    @Test func aWaitingJobDoesNotBlockTheNext() {
        let pool = WorkerPool()
        let gate = ConditionLocked(false)
        let first = pool.start { gate.withLock(when: { $0 }) { _ in } }
        let second = pool.start { gate.withLock(wake: .all) { $0 = true } }
        second?.wait()
        first?.wait()
        #expect(gate.withLock { $0 })
        #expect(pool.threadCount == 2)
    }

    /// `compute` runs its body on a pool thread while the caller goes on, and `value` waits for it.
    @Test func computeRunsBesideTheCaller() {
        let pool = WorkerPool()
        let gate = ConditionLocked(false)
        let pending = pool.compute { () -> Int in
            gate.withLock(when: { $0 }) { _ in }
            return 42
        }
        // The body waits for this thread: had it run here, this line would never be reached.
        gate.withLock(wake: .all) { $0 = true }
        #expect(pending.value == 42)
        #expect(pending.value == 42)
        #expect(pool.threadCount == 1)
    }

    @Test func conditionLockedWaitsForItsPredicate() {
        let queue = ConditionLocked([Int]())
        let pool = WorkerPool()
        let consumer = pool.start {
            let got = queue.withLock(when: { $0.count == 3 }) { $0 }
            queue.withLock(wake: .all) { $0 = got.map { $0 * 10 } }
        }
        for value in 1...3 { queue.withLock(wake: .all) { $0.append(value) } }
        consumer?.wait()
        #expect(queue.withLock { $0 } == [10, 20, 30])
    }
}
