// The walk's side of a rule kind: one judge per compiled rule, chosen once, so the evaluator meets every entry
// without switching on the kind. A class-bound protocol: `any EntryJudge` is a reference and a witness table (one
// indirect call per entry and rule, never a box or an allocation), and each kind's judge is a final class in its
// Kinds/ file whose Sendable conformance the compiler checks: judges hold only `let` settings, shared by every
// walking thread; what a thread gathers goes into its EvaluationResults (records(_:)).

@_spi(Layers) import StoragePolicyFileSystem

/// How one rule kind judges what the walk lists. The defaults (below) judge nothing.
package protocol EntryJudge: AnyObject, Sendable {
    /// The expire judge, whose verdicts come first (an entry it deletes meets no other rule); nil for the others.
    var expiry: ExpireJudge? { get }

    /// Once per directory, before its entries: where the directory sits for the rule (trash folders), and
    /// whether every entry's size must be measured. May record what the directory holds.
    func prepare(_ evaluator: Evaluator, _ rule: CompiledRule, _ listing: DirectoryListing,
                 worker: EvaluationResults) -> (role: Evaluator.TrashRole, measuresAll: Bool)

    /// A directory judged as one of the entries of the rule's scope, when it is visited; `directory` holds
    /// its parent's components below the scope.
    func judgeDirectory(_ evaluator: Evaluator, _ rule: CompiledRule, directory: ArraySlice<ArraySlice<UInt8>>,
                        _ judgement: inout DirectoryJudgement, worker: EvaluationResults)

    /// Whether the walk must go below subdirectory `directory/name` for the rule: by default, when its `match`
    /// could select something there.
    func needsBelow(_ rule: CompiledRule, _ directory: ArraySlice<ArraySlice<UInt8>>, _ name: ArraySlice<UInt8>) -> Bool

    /// The entries of one listing the rule gathered in `EntryScratch.gathered`, judged together once the
    /// listing is done (naming compares siblings' names), in the order they were gathered.
    func judgeGathered(_ evaluator: Evaluator, _ rule: CompiledRule, _ listing: DirectoryListing, _ entries: [Int],
                       worker: EvaluationResults)

    /// Entry `i` of a listing (a regular file, directory or symlink that is not structure).
    func judgeEntry(_ evaluator: Evaluator, _ view: Evaluator.RuleView, _ listing: DirectoryListing, _ i: Int,
                    name: ArraySlice<UInt8>, type: FileType, status: inout EntryStatus, scratch: inout EntryScratch,
                    worker: EvaluationResults)
}

extension EntryJudge {
    package var expiry: ExpireJudge? { nil }

    package func prepare(_ evaluator: Evaluator, _ rule: CompiledRule, _ listing: DirectoryListing,
                 worker: EvaluationResults) -> (role: Evaluator.TrashRole, measuresAll: Bool) {
        (.ignored, false)
    }

    package func judgeDirectory(_ evaluator: Evaluator, _ rule: CompiledRule, directory: ArraySlice<ArraySlice<UInt8>>,
                        _ judgement: inout DirectoryJudgement, worker: EvaluationResults) {}

    package func needsBelow(_ rule: CompiledRule, _ directory: ArraySlice<ArraySlice<UInt8>>, _ name: ArraySlice<UInt8>) -> Bool {
        rule.matchCouldMatchBelow(directory, name)
    }

    package func judgeGathered(_ evaluator: Evaluator, _ rule: CompiledRule, _ listing: DirectoryListing, _ entries: [Int],
                       worker: EvaluationResults) {}

    package func judgeEntry(_ evaluator: Evaluator, _ view: Evaluator.RuleView, _ listing: DirectoryListing, _ i: Int,
                    name: ArraySlice<UInt8>, type: FileType, status: inout EntryStatus, scratch: inout EntryScratch,
                    worker: EvaluationResults) {}
}

/// What the rules of the parent's scopes decide about a directory as it is visited.
package struct DirectoryJudgement {
    let listing: DirectoryListing
    package let name: ArraySlice<UInt8>
    /// A scope, a layout directory or the way to one: never expired or made a trash item.
    let structural: Bool
    /// The parent's entries that expire `keep` protects.
    package let kept: KeptEntries
    /// The first enforcing expire verdict: the directory goes if it ends up empty.
    var deletion: Verdict?
    var auditDeletions: [Verdict]
    var trashItem: TrashItem?
}

/// What the judges of one directory's entries gather for after the entries are listed.
package struct EntryScratch {
    /// The directory's number in this thread's quota ledger, once a quota counted a file in it.
    var quotaDirectory: UInt32? = nil
    /// Entries their rules judge together after the listing (EntryJudge.judgeGathered), by rule number.
    var gathered: [(rule: Int, entry: Int)] = []
}

/// An entry's status, read when the first verdict needs it (the listing keeps it); a failure is recorded once,
/// and every later reader gets nil. A value passed inout: nothing is allocated per entry.
package struct EntryStatus {
    let listing: DirectoryListing
    package let index: Int
    private var failed = false

    package init(_ listing: DirectoryListing, _ index: Int) { self.listing = listing; self.index = index }

    package mutating func read(_ evaluator: Evaluator, worker: EvaluationResults) -> FileStatus? {
        if failed { return nil }
        do { return try listing.status(index) } catch {
            failed = true
            evaluator.recordStatusFailure(listing, index, worker: worker)
            return nil
        }
    }
}
