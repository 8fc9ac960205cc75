// A last-in-first-out queue of directories shared by the walker's threads.
// Never busy-waits: idle workers sleep on the stack's condition until work arrives or the walk is over.

/// LIFO keeps the walk depth-first, so the directories waiting (and the descriptors they pin) stay few.
/// Sendable because its one field is: the items live inside a `ConditionLocked` and are reached only through it.
/// SPI-public and inlinable for the reason ConditionLocked is: the walk above specialises it for its work items.
@_spi(Layers) public final class WorkStack<Item: Sendable>: Sendable {
    @usableFromInline struct State {
        @usableFromInline var items: [Item] = []
        @usableFromInline var closed = false
        /// Threads asleep in `pop` (for tests: a close must wake them all).
        @usableFromInline var waiting = 0
        @usableFromInline init() {}
    }

    @usableFromInline let state = ConditionLocked(State())

    @inlinable public init() {}

    @inlinable public func push(_ new: [Item]) {
        guard !new.isEmpty else { return }
        // One item can feed one sleeper; more may feed several, and a woken thread finding none sleeps again.
        state.withLock(wake: new.count == 1 ? .one : .all) { $0.items.append(contentsOf: new) }
    }

    /// The next item; nil once the stack is closed (the walk is over).
    @inlinable public func pop() -> Item? {
        // The fast path takes the lock once; `.some(nil)` is "closed", nil is "must sleep".
        let now = state.withLock { state -> Item?? in
            if state.closed { return .some(nil) }
            if let item = state.items.popLast() { return .some(item) }
            state.waiting += 1
            return nil
        }
        if let now { return now }
        return sleepThenPop()
    }

    /// The slow path of `pop`: sleeps (already counted in `waiting`) until there is an item or the stack closes.
    @usableFromInline func sleepThenPop() -> Item? {
        state.withLock(when: { $0.closed || !$0.items.isEmpty }) { state in
            state.waiting -= 1
            return state.closed ? nil : state.items.popLast()
        }
    }

    /// Ends the walk: every waiting and future `pop` returns nil.
    @inlinable public func close() {
        state.withLock(wake: .all) { state in
            state.closed = true
            state.items.removeAll()
        }
    }

    /// Threads asleep in `pop` right now.
    package var waiting: Int { state.withLock { $0.waiting } }
}
