// The prefetch's lock-free row of results: one writer, filled from the last slot down, each readable once published.
import Testing
import Synchronization
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem

@Suite("Descending slots") struct DescendingSlotsTests {
    final class Counted: Sendable {
        static let alive = Atomic<Int>(0)
        let value: Int
        init(_ value: Int) { self.value = value; Counted.alive.add(1, ordering: .relaxed) }
        deinit { Counted.alive.subtract(1, ordering: .relaxed) }
    }

    @Test("one writer only; slots read as nil until published, then as written")
    func publishFromTheTopDown() {
        let slots = DescendingSlots<Int>(count: 3)
        let writer = slots.claimWriter()!
        let secondRefused = slots.claimWriter() == nil
        #expect(secondRefused)
        let next = writer.next
        #expect(slots.published == 3 && next == 2)
        #expect(slots[2] == nil)
        writer.publish(20)
        writer.publish(10)
        let afterTwo = writer.next
        #expect(slots.published == 1 && afterTwo == 0)
        #expect([slots[0], slots[1], slots[2], slots[3], slots[-1]] == [nil, 10, 20, nil, nil])
        writer.publish(0)
        let afterAll = writer.next
        #expect(afterAll == -1 && slots[0] == 0)
    }

    @Test("releases exactly the published elements")
    func releasesPublished() {
        let before = Counted.alive.load(ordering: .relaxed)
        do {
            let slots = DescendingSlots<Counted>(count: 4)
            let writer = slots.claimWriter()!
            writer.publish(Counted(3))
            writer.publish(Counted(2))
            #expect(slots[3]?.value == 3)
            let alive = Counted.alive.load(ordering: .relaxed)
            #expect(alive == before + 2)
        }
        let after = Counted.alive.load(ordering: .relaxed)
        #expect(after == before)
    }

    @Test("a reader on another thread sees every published slot whole")
    func readerOnAnotherThread() {
        let count = 20_000
        let slots = DescendingSlots<[Int]>(count: count)
        let bad = Atomic<Int>(0)
        WorkerPool.shared.run(width: 2) { index in
            if index == 0 {
                let writer = slots.claimWriter()!
                while writer.next >= 0 { writer.publish([writer.next, writer.next * 2]) }
            } else {
                var seen = count
                while seen > 0 {
                    let low = slots.published
                    for i in low..<seen where slots[i] != [i, i * 2] { bad.add(1, ordering: .relaxed) }
                    seen = low
                }
            }
        }
        let torn = bad.load(ordering: .relaxed)
        #expect(torn == 0)
    }
}
