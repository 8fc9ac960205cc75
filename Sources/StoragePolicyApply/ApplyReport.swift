// What an apply did, action by action, and how it can fail. Reported, never printed: the executable decides
// how to show it. A failure always says whether the tree was put back.

@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyPlan

/// What an apply did, action by action: outcomes, counts, bytes freed, warnings.
public struct ApplyReport: Sendable {
    /// What happened to one action.
    public enum Outcome: Sendable, Hashable {
        /// Carried out.
        case done
        /// Nothing to do: already as the plan wants it (a directory that exists, an attribute already set).
        case unchanged(String)
        /// Not touched, and why: changed since the plan, vanished, a symlink where a directory was...
        case skipped(String)
    }

    /// One action and its outcome.
    public struct Item: Sendable {
        /// The action as planned.
        public var action: Action
        /// The action's name, or `restore` for an item put back from the trash.
        public var verb: StepVerb
        /// Done, unchanged or skipped (with why).
        public var outcome: Outcome
        /// Where the entry went (rename, trash with its unique name, restore), when it moved.
        public var destination: RelativePath?
        /// For an item skipped because a call on it failed (EACCES, EPERM, ENAMETOOLONG...): that error, with
        /// its path, errno and call. nil for done, unchanged and items skipped because they changed or vanished.
        public var error: FileSystemError?

        /// An item; `verb` defaults to the action's name.
        package init(action: Action, verb: StepVerb? = nil, outcome: Outcome, destination: RelativePath? = nil,
                    error: FileSystemError? = nil) {
            self.action = action; self.verb = verb ?? StepVerb(action.kind); self.outcome = outcome; self.destination = destination
            self.error = error
        }
    }

    /// The transaction id in the journal; nil when there was nothing to do.
    public var transaction: String?
    /// Every step in the order it ran, made from the compact record of outcomes as it is read (each read builds
    /// the whole array: to go through the items of a large apply, read ``lazyItems``). Setting it replaces them.
    public var items: [Item] {
        get { Array(lazyItems) }
        set { outcomes = Outcomes(newValue) }
    }
    /// Every step in the order it ran, each item made only when it is read: a large apply keeps, per step, one
    /// byte for its outcome and the plan's action it already holds, not an item.
    public var lazyItems: LazyItems { LazyItems(outcomes) }
    /// The steps' outcomes: counts per kind of outcome, and the reasons, destinations and errors of the few
    /// steps that have one (Docs/performance.md, issue 31).
    package var outcomes = Outcomes([])
    /// Actions carried out, per verb (`delete`, `rename`, `trash`, `mkdir`, `setxattr`, `write-tag`, `restore`...).
    public var counts = ActionCounts()
    /// Bytes freed by the deletions carried out (not those held in the quarantine: their bytes are freed by the
    /// purge that removes them).
    public var bytesFreed: Int64 = 0
    /// Deletions held in the quarantine (counted in `counts` as deletes), and their bytes.
    public var quarantined = 0
    public var bytesQuarantined: Int64 = 0
    /// Where and until when they are held, when any are: `.policyctl/quarantine/TX`, and each window's end (RFC 3339).
    public var quarantine: String?
    public var quarantineUntil: [String] = []
    /// Problems that did not undo the apply (e.g. staging not fully purged: `recover` finishes it).
    public var warnings: [String] = []

    /// Nothing done yet.
    package init() {}

    /// The items that were skipped.
    public var skipped: [Item] { outcomes.skippedSteps.map { outcomes.item($0) } }
    /// The items skipped because a call on them failed (each carries its `error`): what makes apply exit 1.
    public var failed: [Item] { outcomes.errors.keys.sorted().map { outcomes.item($0) } }
    /// How many actions were carried out.
    public var done: Int { counts.total }

    /// Bytes freed by the deletions carried out, per rule, by rule name (rules that freed nothing are absent).
    public var bytesFreedByRule: [String: Int64] { outcomes.bytesFreedByRule }
}

/// Why an apply failed, and whether the tree was put back.
public enum ApplyError: Error, Sendable, CustomStringConvertible {
    /// Refused before anything changed (blast-radius cap, time budget already spent).
    case refused(String)
    /// Failed before anything changed (the journal or staging folder could not be set up).
    case failed(FileSystemError)
    /// Failed midway and everything done was undone; `kept` lists what could not go back (kept in staging).
    case rolledBack(transaction: String, cause: String, undone: Int, kept: [String])
    /// Failed midway and the rollback itself hit errors: `policyctl recover` must finish it.
    case rollbackIncomplete(transaction: String, cause: String, failures: [String])

    /// One line for people, saying what was changed and what was undone.
    public var description: String {
        switch self {
        case .refused(let message): return message
        case .failed(let error): return "\(error); nothing was changed"
        case .rolledBack(let tx, let cause, let undone, let kept):
            var text = "\(cause); rolled back transaction \(tx) (\(undone) change\(undone == 1 ? "" : "s") undone)"
            if !kept.isEmpty { text += "; \(kept.count) item(s) could not go back and were kept: " + kept.joined(separator: "; ") }
            return text
        case .rollbackIncomplete(let tx, let cause, let failures):
            return "\(cause); the rollback of transaction \(tx) is incomplete (\(failures.joined(separator: "; "))); run 'policyctl recover'"
        }
    }
}
