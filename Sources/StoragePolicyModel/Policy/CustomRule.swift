// A rule written in Swift: it judges each entry the walker sees in its scope and answers with verdicts
// limited to the built-in action kinds. It never touches the disk itself; apply does, through the journal.

@_spi(Layers) import StoragePolicyFileSystem

/// A rule YAML cannot express, written in Swift and evaluated in the same single walk as the built-in kinds.
///
/// The planner calls ``evaluate(_:)`` once for every entry in the rule's scope that its `match:`,
/// `exclude:` and `type:` select (regular files, directories and symlinks by default), from the walking
/// threads: an implementation must be `Sendable` and must not block for long. What it returns becomes
/// plan actions (delete, rename, set an extended attribute) or violations, which apply, the journal,
/// rollback and audit then treat exactly like those of built-in rules.
///
/// ```swift
/// struct EmptyFiles: CustomRule {
///     func evaluate(_ entry: CustomRuleEntry) -> [CustomRuleVerdict] {
///         guard entry.type == .regular, entry.size == 0 else { return [] }
///         return [.delete(reason: "zero bytes")]
///     }
/// }
/// ```
public protocol CustomRule: Sendable {
    /// One sentence saying what the rule checks, shown in audit reports (SARIF, JUnit, JSON) and by `explain`.
    var summary: String { get }

    /// Judges one entry. Called from a walking thread while the entry's directory is open; the entry and
    /// its lazily read metadata are valid only during the call.
    /// - Returns: nothing when the entry is fine, else the actions to take or the problems to report.
    func evaluate(_ entry: CustomRuleEntry) -> [CustomRuleVerdict]
}

extension CustomRule {
    /// The default summary names the Swift type implementing the rule.
    public var summary: String { "Custom rule \(Self.self)." }
}

/// What a custom rule says about one entry. Limited to what the engine already knows how to journal and
/// undo, so a custom rule can never do something apply could not roll back.
public enum CustomRuleVerdict: Sendable, Hashable {
    /// Delete the entry (files and symlinks only: a directory delete is reported as a violation instead).
    case delete(reason: String)
    /// Rename the entry within its directory, never replacing an existing entry.
    case rename(to: FileName, reason: String)
    /// Set an extended attribute on the entry (the old value is journaled and restored on rollback).
    case setExtendedAttribute(name: String, value: [UInt8], reason: String)
    /// Mark the entry excluded from backup with this platform's marker (Time Machine's attribute on Apple
    /// systems, `user.xdg.robots.backup` elsewhere).
    case excludeFromBackup(reason: String)
    /// Report a problem no action fixes.
    case violation(String)
}
