// What one step of a transaction does, typed: apply decides by it (an attribute set or removed) and never by
// text. The raw values are the exact words the journal, the JSON lines and the text output have always carried;
// the case order is the order counts are shown in.

@_spi(Layers) import StoragePolicyPlan

/// The verb of one step: a plan action's name, or what a trash restore or an undo does.
public enum StepVerb: String, Sendable, Hashable, CaseIterable, Comparable, CustomStringConvertible {
    case delete, trash, restore, rename, mkdir, setxattr
    case writeTag = "write-tag"
    /// Undo: a file the transaction created (a CACHEDIR.TAG) removed.
    case remove
    /// Undo: a CACHEDIR.TAG the transaction removed written back.
    case retag
    /// Undo: a directory the transaction created removed.
    case rmdir
    case unmark
    /// Undo: an attribute the transaction set removed (it was absent before).
    case unset
    case untag
    /// A layout directory's mode, owner and group set (or, in an undo, put back).
    case setPermissions = "set-perms"
    /// A layout file or symlink created.
    case mkfile, symlink
    /// A quarantine window emptied for good (a `purge` transaction, journal format 2).
    case purge

    /// The verb of a plan action: its name.
    public init(_ kind: Action.Kind) {
        switch kind {
        case .delete: self = .delete
        case .rename: self = .rename
        case .trash: self = .trash
        case .mkdir: self = .mkdir
        case .setxattr: self = .setxattr
        case .writeTag: self = .writeTag
        case .unmark: self = .unmark
        case .untag: self = .untag
        case .setPermissions: self = .setPermissions
        case .mkfile: self = .mkfile
        case .symlink: self = .symlink
        }
    }

    public static func < (a: StepVerb, b: StepVerb) -> Bool { a.ordinal < b.ordinal }

    package static let count = allCases.count

    /// The case's position in `allCases` (and in the order counts are shown), without building `allCases`.
    var ordinal: Int {
        switch self {
        case .delete: 0
        case .trash: 1
        case .restore: 2
        case .rename: 3
        case .mkdir: 4
        case .setxattr: 5
        case .writeTag: 6
        case .remove: 7
        case .retag: 8
        case .rmdir: 9
        case .unmark: 10
        case .unset: 11
        case .untag: 12
        case .setPermissions: 13
        case .mkfile: 14
        case .symlink: 15
        case .purge: 16
        }
    }

    public var description: String { rawValue }
}
