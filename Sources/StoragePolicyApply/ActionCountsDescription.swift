// What `print(result.counts)` shows: the verbs by name with their counts, not the private array behind them
// (`ActionCounts(values: [0, 0, 0, 0, 5, ...])` told a reader nothing about which number was which).

extension ActionCounts: CustomStringConvertible {
    /// `ActionCounts(delete: 5, mkdir: 1)`, in `StepVerb` order, verbs with no steps left out;
    /// `ActionCounts()` when nothing was counted.
    public var description: String {
        "ActionCounts(" + map { "\($0.verb.rawValue): \($0.count)" }.joined(separator: ", ") + ")"
    }
}
