// The one error type of the StorageEngine facade: each case keeps the underlying typed error, and a
// policy problem keeps its file:line:col. Never loses the cause to a string.

import StoragePolicyFileSystem
import StoragePolicyModel
import StoragePolicyEvaluation
import StoragePolicyApply

/// Why a ``StorageEngine`` call failed. Every case says whether the tree may have changed.
public enum EngineError: Error, Sendable, CustomStringConvertible {
    /// The policy is invalid (or its file cannot be read); each diagnostic carries its location when it
    /// has one. Nothing was read under the root.
    case invalidPolicy(PolicyLoadError)
    /// The root (or the engine's state folder under it) cannot be opened, read or set up. Nothing was changed.
    case fileSystem(FileSystemError)
    /// Another apply, recover or trash holds the root's lock, and the engine was told not to wait.
    /// Nothing was changed.
    case lockHeld(pid: Int32?)
    /// The state folder (ROOT/.policyctl or the `stateDirectory`) cannot be set up or locked. Nothing was changed.
    case stateFolder(FileSystemError)
    /// A plan made for another root, or by another policy, was handed to `apply`. Nothing was changed.
    case stalePlan(String)
    /// The plan holds an action its policy never makes (it was edited after it was made). Nothing was changed.
    case planRefused(InvalidPlanAction)
    /// A saved plan was made with another policy file or for another root than the caller names (exit 65).
    case planMismatch(String)
    /// The policy file a saved plan names cannot be read (other than being gone, which makes the plan stale).
    /// Nothing was changed.
    case planPolicyUnreadable(path: String, FileSystemError)
    /// Apply was refused, failed before changing anything, or failed and rolled back (see ``ApplyError``).
    case apply(ApplyError)
    /// Recovery of an interrupted apply could not finish; the journal still holds the transaction.
    case recovery(RecoveryError)
    /// Any other error from the layers below, kept as is.
    case other(any Error)

    /// Where in the policy the first problem is, for a policy error that has a location.
    public var location: PolicyLocation? {
        guard case .invalidPolicy(let error) = self else { return nil }
        return error.diagnostics.first { $0.severity == .error && $0.location != nil }?.location
            ?? error.diagnostics.first { $0.location != nil }?.location
    }

    /// True when the tree may have been changed and `recover` should run (a rollback that could not finish).
    public var needsRecovery: Bool {
        switch self {
        case .apply(.rollbackIncomplete), .recovery: return true
        default: return false
        }
    }

    /// One line (or, for a policy, one line per diagnostic) for people.
    public var description: String {
        switch self {
        case .invalidPolicy(let error): return error.description
        case .fileSystem(let error): return "\(error); nothing was changed"
        case .lockHeld(let pid): return LockHeld(pid: pid).description + "; nothing was changed"
        case .stateFolder(let error): return "cannot set up the state folder: \(error); nothing was changed"
        case .stalePlan(let why): return "\(why); nothing was changed"
        case .planRefused(let invalid): return "plan refused: \(invalid); nothing was changed"
        case .planMismatch(let why): return "plan refused: \(why); nothing was changed"
        case .planPolicyUnreadable(let path, let error): return "\(path): cannot read the plan's policy: \(error.errno); nothing was changed"
        case .apply(let error): return error.description
        case .recovery(let error): return error.description
        case .other(let error): return "\(error)"
        }
    }

    /// Maps an error from the layers below onto a case.
    static func wrap(_ error: any Error) -> EngineError {
        switch error {
        case let e as EngineError: return e
        case let e as PolicyLoadError: return .invalidPolicy(e)
        case let e as FileSystemError: return .fileSystem(e)
        case let e as LockHeld: return .lockHeld(pid: e.pid)
        case let e as ApplyError: return .apply(e)
        case let e as RecoveryError: return .recovery(e)
        default: return .other(error)
        }
    }
}
