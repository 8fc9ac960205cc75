// One root opened for one engine call: the root by descriptor, its state folder set up (or found), the lock
// taken, recovery run first. The only place the library's callers (the engine, and through it the CLI) get
// a lock or run recovery; every step is reported as an ApplyEvent, nothing is printed.

@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyModel
@_spi(Layers) import StoragePolicyApply

/// The root opened and its state folder set up, for one ``StorageEngine`` call.
struct EngineSession {
    let state: StateDirectory
    /// Canonical (realpath), as the journal and `.trashinfo` files record it.
    let rootPath: String

    /// Opens `root` and its state folder (`stateDirectory`, or ROOT/.policyctl, created only when `create`);
    /// nil when there is no state folder and `create` is false (nothing was ever applied here).
    /// Sends ``ApplyEvent/opened(root:)`` once the root is open, then any state notices.
    static func open(root: String, stateDirectory: String?, create: Bool,
                     events: (ApplyEvent) -> Void) throws(EngineError) -> EngineSession? {
        let handle: DirectoryHandle
        do { handle = try DirectoryHandle.open(root: root) } catch { throw .fileSystem(error) }
        let rootPath = PathNormalization.canonical(root)
        events(.opened(root: rootPath))
        let state: StateDirectory?
        do {
            if let stateDirectory {
                state = try StateDirectory.open(root: handle, stateDirectory: stateDirectory)
            } else {
                state = try StateDirectory.open(root: handle, create: create)
            }
        } catch let error as FileSystemError {
            throw .stateFolder(error)
        } catch {
            throw EngineError.wrap(error)
        }
        guard let state else { return nil }
        for notice in state.notices { events(.stateNotice(notice)) }
        return EngineSession(state: state, rootPath: rootPath)
    }

    /// Takes the root's lock, waiting for another run when `wait` (``ApplyEvent/waitingForLock(pid:)``), or
    /// sending ``ApplyEvent/lockHeld(pid:)`` and throwing ``EngineError/lockHeld(pid:)``.
    func lock(wait: Bool, events: (ApplyEvent) -> Void) throws(EngineError) -> ApplyLock {
        do {
            return try state.lock(wait: wait) { pid in events(.waitingForLock(pid: pid)) }
        } catch let held as LockHeld {
            events(.lockHeld(pid: held.pid))
            throw .lockHeld(pid: held.pid)
        } catch let error as FileSystemError {
            throw .stateFolder(error)
        } catch {
            throw EngineError.wrap(error)
        }
    }

    /// Finishes or rolls back an interrupted apply. Sends ``ApplyEvent/recovered(_:)`` when there was something
    /// to say. Never rotates or compacts the journal: only an apply does (`rotateJournal`), never a read, an undo,
    /// a recover or a dry run.
    func recover(holding lock: ApplyLock, events: (ApplyEvent) -> Void) throws(EngineError) -> RecoveryReport {
        let report: RecoveryReport
        do { report = try Recovery.run(holding: lock) } catch { throw EngineError.wrap(error) }
        if !report.nothingToDo || !report.damaged.isEmpty { events(.recovered(report)) }
        return report
    }

    /// An apply's journal upkeep, after recovery: past 16 MiB the older transactions' records move to a history
    /// file (JournalRotation), keeping `retention.keep` transactions and every one whose quarantine holds entries.
    /// A failure is a warning: the journal stays as it was, whole.
    func rotateJournal(holding lock: ApplyLock, retention: Policy.JournalRetention, events: (ApplyEvent) -> Void) {
        do {
            let protected = try QuarantineStore.transactionsHolding(lock.state)
            if let report = try JournalRotation.rotateIfLarge(holding: lock, retention: retention, protected: protected) {
                events(.journalRotated(report))
            }
        } catch {
            events(.warning("the journal was not rotated (\(error)); it is kept whole and rotation is tried again by the next apply"))
        }
    }
}
