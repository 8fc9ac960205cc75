// The groups a run journals its steps in: each group's intents are made durable by one fsync. The first group
// holds `ApplyOptions.groupSize` steps, each next one twice as many, up to 16 times that, so a small apply
// journals in small steps and a large one needs few fsyncs. A group never spans two phases (Applier.Phase):
// mkdirs are made before the trash folders they hold are resolved.

package struct StepGroups {
    private let firstSize: Int
    private var size: Int
    private var start = 0

    package init(firstSize: Int) {
        self.firstSize = firstSize
        size = firstSize
    }

    /// The most steps a group holds.
    package static func largest(firstSize: Int) -> Int { firstSize * 16 }

    /// The next group of `steps` (the run's, read as they are now), or nil after the last.
    mutating func next(of steps: StepList) -> Range<Int>? {
        next(count: steps.count) { steps.phase($0) }
    }

    mutating func next(of steps: [Step]) -> Range<Int>? {
        next(count: steps.count) { Applier.phase(of: steps[$0].action) }
    }

    private mutating func next(count: Int, phase phaseOf: (Int) -> Applier.Phase) -> Range<Int>? {
        guard start < count else { return nil }
        var end = start + 1
        let phase = phaseOf(start)
        while end < count && end - start < size && phaseOf(end) == phase { end += 1 }
        defer {
            start = end
            size = min(size * 2, Self.largest(firstSize: firstSize))
        }
        return start..<end
    }
}
