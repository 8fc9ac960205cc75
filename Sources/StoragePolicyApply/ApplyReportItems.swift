// ApplyReport's record of what became of each step, kept compact: a large apply (190,000 steps) held an Item
// per step (the action copied, its verb, outcome, destination and error: about 0.2 KB each); it now holds one
// byte per step, the planned actions it shares with the plan (no copy), and a reason, destination or error
// only for the steps that have one. Items are made from it when they are read (Docs/performance.md, issue 31).

@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyPlan

extension ApplyReport {
    /// The steps' outcomes, by step number (the order steps run in).
    package struct Outcomes: Sendable {
        /// The planned actions, by plan index (shared with the plan's own array).
        private let actions: [Action]
        /// Step i's index in `actions`; nil when step i is action i.
        private let order: [UInt32]?
        /// Verbs that are not the action's name (`restore`, an undo's).
        private var verbs: [Int: StepVerb] = [:]
        /// Per step: `Code`.
        private var codes: [UInt8]
        /// The reason of each step unchanged or skipped (but for "not reached").
        private var reasons: [Int: String] = [:]
        /// Where a step's entry went, for the steps that moved one.
        private(set) var destinations: [Int: RelativePath] = [:]
        /// The error of each step skipped because a call on its entry failed.
        private(set) var errors: [Int: FileSystemError] = [:]

        private enum Code: UInt8 { case notReached, done, unchanged, skipped }
        /// The reason of a step that was never reached (the run stopped first).
        private static let notReached = "not reached"

        /// Steps running `actions` in `order` (nil: as they are), named by `verbs` where not by their action;
        /// every one "not reached" until it is recorded.
        package init(actions: [Action], order: [UInt32]?, verbs: [Int: StepVerb]) {
            self.actions = actions; self.order = order; self.verbs = verbs
            codes = [UInt8](repeating: Code.notReached.rawValue, count: order?.count ?? actions.count)
        }

        /// Outcomes holding `items` as they are.
        init(_ items: [Item]) {
            self.init(actions: items.map(\.action), order: nil, verbs: [:])
            for (i, item) in items.enumerated() {
                if item.verb != StepVerb(item.action.kind) { verbs[i] = item.verb }
                set(i, item.outcome)
                destinations[i] = item.destination
                errors[i] = item.error
            }
        }

        package var count: Int { codes.count }

        package mutating func set(_ i: Int, _ outcome: Outcome) {
            switch outcome {
            case .done:
                codes[i] = Code.done.rawValue
                // Most steps are done and have no reason: no hashing of i for them.
                if !reasons.isEmpty { reasons[i] = nil }
            case .unchanged(let why):
                codes[i] = Code.unchanged.rawValue
                reasons[i] = why
            case .skipped(let why):
                codes[i] = why == Self.notReached ? Code.notReached.rawValue : Code.skipped.rawValue
                reasons[i] = why == Self.notReached ? nil : why
            }
        }

        package mutating func setDestination(_ i: Int, _ destination: RelativePath?) { destinations[i] = destination }
        package mutating func setError(_ i: Int, _ error: FileSystemError?) { errors[i] = error }
        package func destination(_ i: Int) -> RelativePath? { destinations[i] }

        package func outcome(_ i: Int) -> Outcome {
            switch Code(rawValue: codes[i])! {
            case .done: .done
            case .unchanged: .unchanged(reasons[i] ?? "")
            case .skipped: .skipped(reasons[i] ?? "")
            case .notReached: .skipped(Self.notReached)
            }
        }

        /// The steps skipped (not reached included), in order.
        var skippedSteps: [Int] {
            codes.indices.filter { codes[$0] == Code.skipped.rawValue || codes[$0] == Code.notReached.rawValue }
        }

        /// Step i as an Item.
        package func item(_ i: Int) -> Item {
            // The tables are empty for most runs' steps: no lookup (a hash of i) in them then.
            Item(action: actions[planned(i)], verb: verbs.isEmpty ? nil : verbs[i], outcome: outcome(i),
                 destination: destinations.isEmpty ? nil : destinations[i], error: errors.isEmpty ? nil : errors[i])
        }

        @inline(__always) private func planned(_ i: Int) -> Int {
            if let order { Int(order[i]) } else { i }
        }

        /// True when step i was carried out.
        package func isDone(_ i: Int) -> Bool { codes[i] == Code.done.rawValue }

        /// Step i's action lent, not copied (a done step's fields, read without making its Item).
        package subscript(action i: Int) -> Action {
            _read { yield actions[planned(i)] }
        }

        /// Bytes the done deletes freed, per rule: one pass over the codes, no Item made.
        var bytesFreedByRule: [String: Int64] {
            var out: [String: Int64] = [:]
            // Deletes of one rule mostly run one after another: summed as a run, hashed once per run.
            var run: (rule: String, bytes: Int64)? = nil
            for i in codes.indices where isDone(i) && self[action: i].isDelete {
                let bytes = self[action: i].bytes
                if run?.rule == self[action: i].rule { run!.bytes += bytes; continue }
                if let run { out[run.rule, default: 0] += run.bytes }
                run = (self[action: i].rule, bytes)
            }
            if let run { out[run.rule, default: 0] += run.bytes }
            return out
        }
    }

    /// Every step's item, in the order the steps ran, each made when it is read.
    public struct LazyItems: RandomAccessCollection, Sendable {
        private let outcomes: Outcomes
        init(_ outcomes: Outcomes) { self.outcomes = outcomes }
        public var startIndex: Int { 0 }
        public var endIndex: Int { outcomes.count }
        public subscript(i: Int) -> Item { outcomes.item(i) }
    }
}
