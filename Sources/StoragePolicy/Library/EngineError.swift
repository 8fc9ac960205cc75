// The one error type of the StorageEngine facade: one case per cause, each keeping the underlying typed error
// (a policy problem keeps its file:line:col). Never loses the cause to a string or to an `any Error`.
import Foundation

@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyModel
@_spi(Layers) import StoragePolicyEvaluation
@_spi(Layers) import StoragePolicyApply

/// Why a ``StorageEngine`` call failed. Every case says whether the tree may have changed.
///
/// A `LocalizedError`: `errorDescription` is the one line `policyctl` prints, `failureReason` what went
/// wrong, `recoverySuggestion` what to do about it (where there is something to do).
public enum EngineError: Error, Sendable, CustomStringConvertible, LocalizedError {
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
    /// The state folder, or a file in it, was not made by this user (another owner, group or other write, a
    /// symlink): it is never read or written. Nothing was changed.
    case untrustedState(UntrustedState)
    /// A plan made for another root, or by another policy, was handed to `apply`. Nothing was changed.
    case stalePlan(StalePlan)
    /// The plan holds an action its policy never makes (it was edited after it was made). Nothing was changed.
    case planRefused(InvalidPlanAction)
    /// A saved plan was made with another policy file or for another root than the caller names (exit 65).
    case planMismatch(PlanMismatch)
    /// The policy file a saved plan names cannot be read (other than being gone, which makes the plan stale).
    /// Nothing was changed.
    case planPolicyUnreadable(path: String, FileSystemError)
    /// Apply was refused, failed before changing anything, or failed and rolled back (see ``ApplyError``).
    case apply(ApplyError)
    /// Recovery of an interrupted apply could not finish; the journal still holds the transaction.
    case recovery(RecoveryError)
    /// `undo` was refused: no such transaction, it did not commit, or its journal was compacted. Nothing was changed.
    case undoRefused(UndoError)
    /// The call was cancelled (``StorageEngine/Cancellation/cancel()``, or SIGINT/SIGTERM in `policyctl`). A plan
    /// made nothing (`transaction` nil); an apply stopped between groups and rolled `transaction` back as
    /// `recover` would (the file deletes already made stay made), journaled with the reason `cancelled`:
    /// nothing is left for `recover`. The `async` calls throw `CancellationError` instead.
    case cancelled(transaction: String?)

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
        case .untrustedState(let error): return "\(error); nothing was changed"
        case .stalePlan(let why): return "\(why); nothing was changed"
        case .planRefused(let invalid): return "plan refused: \(invalid); nothing was changed"
        case .planMismatch(let why): return "plan refused: \(why); nothing was changed"
        case .planPolicyUnreadable(let path, let error): return "\(path): cannot read the plan's policy: \(error.errno); nothing was changed"
        case .apply(let error): return error.description
        case .recovery(let error): return error.description
        case .undoRefused(let error): return "undo refused: \(error.message)"
        case .cancelled(nil): return "cancelled; nothing was changed"
        case .cancelled(let id?): return "cancelled; transaction \(id) was rolled back (the file deletes already made stay made)"
        }
    }

    public var errorDescription: String? { description }

    /// What went wrong, without the advice.
    public var failureReason: String? {
        switch self {
        case .invalidPolicy: return "The policy is not valid."
        case .fileSystem(let error): return "A file system call failed: \(error)."
        case .lockHeld: return "Another apply, recover or trash is running on this root."
        case .stateFolder(let error): return "The state folder cannot be set up: \(error)."
        case .untrustedState(let error): return "The state folder \(error.path) \(error.problem)."
        case .stalePlan(let why): return "\(why)."
        case .planRefused(let invalid): return "The plan holds an action its policy never makes: \(invalid)."
        case .planMismatch(let why): return "\(why)."
        case .planPolicyUnreadable(let path, let error): return "The plan's policy \(path) cannot be read: \(error.errno)."
        case .apply(let error): return error.description
        case .recovery(let error): return error.description
        case .undoRefused(let error): return error.message
        case .cancelled: return "The call was cancelled."
        }
    }

    /// What to do about it, where there is something to do.
    public var recoverySuggestion: String? {
        switch self {
        case .invalidPolicy: return "Fix the policy at the locations given (policyctl validate FILE lists them)."
        case .lockHeld: return "Try again when the other run has finished, or wait for the lock (waitForLock)."
        case .untrustedState(let error): return error.fix
        case .stalePlan, .planMismatch: return "Make the plan again with the policy and root you apply it to."
        case .planRefused: return "Make the plan again; never edit a saved plan."
        case .apply(.rollbackIncomplete), .recovery: return "Run recover (policyctl recover ROOT) to finish the rollback."
        case .fileSystem, .stateFolder, .planPolicyUnreadable, .apply, .undoRefused, .cancelled: return nil
        }
    }

    /// Maps an error from the layers below onto a case. An error of no known kind (none is thrown today) is
    /// kept as a file system error naming it, never dropped.
    static func wrap(_ error: any Error) -> EngineError {
        switch error {
        case let e as EngineError: return e
        case let e as PolicyLoadError: return .invalidPolicy(e)
        case let e as FileSystemError where e.operation == .cancelled: return .cancelled(transaction: nil)
        case let e as FileSystemError: return .fileSystem(e)
        case let e as LockHeld: return .lockHeld(pid: e.pid)
        case let e as UntrustedState: return .untrustedState(e)
        case let e as ApplyError: return .apply(e)
        case let e as RecoveryError: return .recovery(e)
        case let e as UndoError: return .undoRefused(e)
        default: return .fileSystem(FileSystemError(.other("\(error)"), path: .root, errno: .ioError))
        }
    }
}
