// ROOT/.policyctl: the engine's state folder holding the lock file, the journal and the staging area, on
// the root's own filesystem. Never a symlink, never on another device, never scanned by the planner.

/// `ROOT/.policyctl`: the lock, the journal and the staging area of one root.
public final class StateDirectory: Sendable {
    /// The root directory.
    public let root: DirectoryHandle
    /// The root's status when the state folder was opened.
    public let rootStatus: FileStatus
    let directory: DirectoryHandle

    static let lockName = FileName(unchecked: Array("lock".utf8))
    static let stagingName = FileName(unchecked: Array("staging".utf8))

    private init(root: DirectoryHandle, rootStatus: FileStatus, directory: DirectoryHandle) {
        self.root = root; self.rootStatus = rootStatus; self.directory = directory
    }

    /// Opens the state folder under `root`, creating it (mode 0700: staged files stay private) when
    /// `create` is set. Returns nil when it does not exist and `create` is false.
    public static func open(root: DirectoryHandle, create: Bool) throws(FileSystemError) -> StateDirectory? {
        let rootStatus = try root.status()
        if try root.statusIfPresent(of: Markers.stateDirectory) == nil {
            guard create else { return nil }
            do {
                try root.makeDirectory(Markers.stateDirectory, permissions: 0o700)
                try root.sync()
            } catch where error.errno == .fileExists {}
        }
        let directory = try root.openDirectory(Markers.stateDirectory)
        guard try directory.status().device == rootStatus.device else {
            throw FileSystemError("open", path: directory.path, errno: .crossDevice)
        }
        return StateDirectory(root: root, rootStatus: rootStatus, directory: directory)
    }

    /// Takes the exclusive apply lock. When another process holds it: with `wait`, calls `whileWaiting`
    /// once (with the holder's pid when known) and blocks; without, throws `LockHeld`.
    public func lock(wait: Bool, whileWaiting: (Int32?) -> Void = { _ in }) throws -> ApplyLock {
        let file = try directory.openFile(StateDirectory.lockName, options: [.readWrite, .create], permissions: 0o600)
        if try !StateDirectory.tryLock(file) {
            let holder = ApplyLock.holder(in: self)
            guard wait else { throw LockHeld(pid: holder) }
            whileWaiting(holder)
            try file.lockExclusively(wait: true)
        }
        return ApplyLock(file: file, state: self)
    }

    /// Takes the lock if it is free; false when another process holds it.
    private static func tryLock(_ file: FileDescriptor) throws(FileSystemError) -> Bool {
        do { try file.lockExclusively(wait: false) } catch where error.errno == .wouldBlock { return false }
        return true
    }

    /// ROOT/.policyctl/staging, created on demand.
    func stagingParent(create: Bool) throws(FileSystemError) -> DirectoryHandle? {
        if try directory.statusIfPresent(of: StateDirectory.stagingName) == nil {
            guard create else { return nil }
            do {
                try directory.makeDirectory(StateDirectory.stagingName, permissions: 0o700)
                try directory.sync()
            } catch where error.errno == .fileExists {}
        }
        return try directory.openDirectory(StateDirectory.stagingName)
    }

    func openJournal() throws(FileSystemError) -> Journal { try Journal(in: directory) }
}

/// Another apply, recover or trash holds the lock of this root.
public struct LockHeld: Error, Sendable, CustomStringConvertible {
    /// The holder's pid, when the lock file says.
    public var pid: Int32?
    /// `another run holds the lock (pid N)`.
    public var description: String {
        "another run holds the lock" + (pid.map { " (pid \($0))" } ?? "")
    }
}
