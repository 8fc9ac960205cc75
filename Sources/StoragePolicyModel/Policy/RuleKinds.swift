// Settings more than one rule kind shares; each kind's own settings are in its Kinds/<Kind>Syntax.swift. Their
// meaning is defined in Docs/policy-reference.md and implemented by the evaluator; nothing here reads the disk.

/// `unit:` of expire and quota: what is judged, and deleted, as one.
public enum RetentionUnit: String, Sendable, Hashable, CaseIterable {
    /// Every selected entry on its own (version 1.0 behaviour).
    case entry
    /// Each direct child folder of the scope, whole, dated by the newest entry inside it; files directly in
    /// the scope are units of their own.
    case directory
}
