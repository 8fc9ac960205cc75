// What started a transaction, typed. The raw values are the `kind` strings of the journal's begin records and of
// `policyctl journal --format json`, unchanged: journals written before this type read back the same.

/// What a transaction does: apply a plan, move to or restore from the trash, undo an earlier transaction, or
/// purge quarantined deletes for good (`purge`, journal format 2).
public enum TransactionKind: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    case apply, trash, restore, undo, purge

    public var description: String { rawValue }
}
