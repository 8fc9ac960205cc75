// The walker's shared stack: LIFO, nothing lost between threads, and a close that wakes every sleeper (a walk
// whose last directory finishes while the other threads sleep must end, not hang).
import Testing
import Synchronization
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem

@Suite("Work stack") struct WorkStackTests {
    @Test("pops in last-in-first-out order, a pushed batch included")
    func lastInFirstOut() {
        let stack = WorkStack<Int>()
        stack.push([1, 2, 3])
        stack.push([4])
        #expect([stack.pop(), stack.pop(), stack.pop(), stack.pop()] == [4, 3, 2, 1])
        stack.close()
        #expect(stack.pop() == nil)
    }

    @Test("close wakes every thread asleep in pop, and later pops return nil at once")
    func closeWakesEveryWaiter() {
        let stack = WorkStack<Int>()
        let pool = WorkerPool()
        let got = Mutex<[Int?]>([])
        let waiters = (0..<3).compactMap { _ in pool.start { let item = stack.pop(); got.withLock { $0.append(item) } } }
        #expect(waiters.count == 3)
        // Wait (not by time) until all three are asleep in pop.
        while stack.waiting < 3 { system_sched_yield() }
        #expect(got.withLock { $0.isEmpty })
        stack.close()
        for waiter in waiters { waiter.wait() }
        #expect(got.withLock { $0 } == [nil, nil, nil])
        #expect(stack.waiting == 0)
        stack.push([7])
        #expect(stack.pop() == nil)
    }

    @Test("a push wakes a sleeper with the item")
    func pushWakesASleeper() {
        let stack = WorkStack<Int>()
        let pool = WorkerPool()
        let got = Mutex<Int?>(nil)
        let waiter = pool.start { let item = stack.pop(); got.withLock { $0 = item } }
        while stack.waiting < 1 { system_sched_yield() }
        stack.push([42])
        waiter?.wait()
        #expect(got.withLock { $0 } == 42)
    }

    /// Four threads push and pop at once, each item exactly once: the pop that takes the last item closes.
    /// A thread pops only after its own pushes, so no thread sleeps waiting for items only it would push.
    @Test("nothing is lost or handed out twice under four threads")
    func nothingLostUnderFourThreads() {
        let stack = WorkStack<Int>()
        let perThread = 5_000
        let total = 4 * perThread
        let seen = Mutex<[Int]>([])
        let popped = Atomic<Int>(0)
        WorkerPool.shared.run(width: 4) { index in
            for k in stride(from: 0, to: perThread, by: 4) {
                // A batch of one and a batch of three: the two wake paths (one sleeper, every sleeper).
                let value = index * perThread + k
                stack.push([value])
                stack.push([value + 1, value + 2, value + 3])
            }
            // The others may still be pushing while this one pops.
            var mine: [Int] = []
            while let item = stack.pop() {
                mine.append(item)
                if popped.add(1, ordering: .relaxed).newValue == total { stack.close() }
            }
            seen.withLock { $0.append(contentsOf: mine) }
        }
        let all = seen.withLock { $0 }
        #expect(all.count == total)
        #expect(Set(all).count == total)
        #expect(all.min() == 0 && all.max() == total - 1)
    }
}
