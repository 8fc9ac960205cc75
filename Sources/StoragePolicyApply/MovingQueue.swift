// A run's group of prepared steps, each handed on once: appended in order, then moved out in the same order.

/// A first-in, first-out queue of at most `capacity` elements that moves each element out (`next`) instead of
/// copying it: iterating an Array copies each element out and later destroys both the copy and the original,
/// which for a prepared step (its action's path, rule and reason, its intents) was a dozen retains and releases.
struct MovingQueue<Element>: ~Copyable {
    private let storage: UnsafeMutablePointer<Element>
    private let capacity: Int
    private var start = 0
    private var end = 0

    init(capacity: Int) {
        self.capacity = max(capacity, 1)
        storage = .allocate(capacity: self.capacity)
    }

    deinit {
        // What was never taken (a run stopped mid-group) is destroyed here.
        (storage + start).deinitialize(count: end - start)
        storage.deallocate()
    }

    /// Adds `element` after the others; at most `capacity` in all.
    mutating func append(_ element: consuming Element) {
        precondition(end < capacity, "MovingQueue is full")
        (storage + end).initialize(to: element)
        end += 1
    }

    /// The first element not yet taken, moved out; nil once all were.
    mutating func next() -> Element? {
        guard start < end else { return nil }
        defer { start += 1 }
        return (storage + start).move()
    }
}
