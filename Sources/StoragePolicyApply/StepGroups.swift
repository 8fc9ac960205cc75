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

    /// The next group of `steps` (the run's, read as they are now), or nil after the last.
    mutating func next(of steps: [Step]) -> Range<Int>? {
        guard start < steps.count else { return nil }
        var end = start + 1
        let phase = Applier.phase(of: steps[start].action)
        while end < steps.count && end - start < size && Applier.phase(of: steps[end].action) == phase { end += 1 }
        defer {
            start = end
            size = min(size * 2, firstSize * 16)
        }
        return start..<end
    }
}
