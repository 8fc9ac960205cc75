// A fixed row of slots that one writer fills from the last down, publishing each as it goes, so readers on
// other threads take the filled ones without a lock: what a stat prefetch needs, where the thread judging a
// large directory asks for entry i at the pace of the judging and a lock per entry would cost more than the
// stat saved. The single writer is a move-only token, claimed once, so "one writer" is not a convention.
import Synchronization

package final class DescendingSlots<Element: Sendable>: @unchecked Sendable {
    // @unchecked is sound: slot i is initialised once, by the one Writer (move-only, handed out once), and only
    // then published by storing `low = i` with release; a reader reads slot i only after an acquiring load of
    // `low` at or below i, and a published slot is never written again (`low` only decreases). Slots below
    // `low` are never read, and deinit (no other reference left) deinitialises exactly the published ones.
    private let slots: UnsafeMutablePointer<Element>
    /// How many slots there are.
    package let count: Int
    /// The lowest published slot; `count` while none is.
    private let low: Atomic<Int>
    private let claimed = Atomic<Bool>(false)

    package init(count: Int) {
        self.count = max(count, 0)
        slots = .allocate(capacity: max(count, 1))
        low = Atomic(max(count, 0))
    }

    deinit {
        let published = low.load(ordering: .acquiring)
        (slots + published).deinitialize(count: count - published)
        slots.deallocate()
    }

    /// The lowest published slot: every slot from here up may be read. `count` when none is yet.
    package var published: Int { low.load(ordering: .acquiring) }

    /// Slot `i` once the writer has published it; nil before (or out of range).
    package subscript(i: Int) -> Element? {
        guard i < count, i >= low.load(ordering: .acquiring) else { return nil }
        return slots[i]
    }

    /// The one writer; nil once it was claimed.
    package func claimWriter() -> Writer? {
        guard claimed.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else { return nil }
        return Writer(slots: self)
    }

    /// Fills the slots from the last down. Move-only: there is never a second handle to write with.
    package struct Writer: ~Copyable {
        private let slots: DescendingSlots

        fileprivate init(slots: DescendingSlots) { self.slots = slots }

        /// The slot the next `publish` fills; -1 when all are filled.
        package var next: Int { slots.low.load(ordering: .relaxed) - 1 }

        /// Fills slot `next` with `element` and publishes it.
        package func publish(_ element: Element) {
            let i = next
            precondition(i >= 0, "every slot is already filled")
            (slots.slots + i).initialize(to: element)
            slots.low.store(i, ordering: .releasing)
        }
    }
}
