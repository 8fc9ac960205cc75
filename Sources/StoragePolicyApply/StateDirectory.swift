// The engine's state: the lock file and the journal (ROOT/.policyctl, or a --state-dir outside the root) and
// one fresh staging folder per transaction on the root's own filesystem. Only state this euid created and
// still owns is used: every folder and file is opened without following a symlink and checked through its
// descriptor (owner, no group/other write, type, device); anything else is refused, naming the path and fix.

@_spi(Layers) import StoragePolicyFileSystem

/// The lock, the journal and the staging folders of one root.
package final class StateDirectory: Sendable {
    /// The root directory.
    package let root: DirectoryHandle
    /// The root's status when the state folder was opened.
    package let rootStatus: FileStatus
    /// Where the lock and the journal live: ROOT/.policyctl, or the --state-dir.
    package let directory: DirectoryHandle
    /// True when the lock and journal live in a --state-dir outside the root.
    package let isExternal: Bool
    /// How the state folder is named in messages: `.policyctl`, or the --state-dir as given.
    package let displayPath: String
    /// What was noticed and ignored while opening (a ROOT/.policyctl left alone because of --state-dir).
    package let notices: [String]

    static let lockName = FileName(unchecked: Array("lock".utf8))
    static let stagingName = FileName(unchecked: Array("staging".utf8))
    /// With --state-dir, each transaction stages into ROOT/.policyctl-staging-<id> (rename needs the root's
    /// filesystem). The planner never lists these names (see `Markers.isEngineState`).
    static let externalStagingPrefix = Markers.stagingPrefix

    private init(root: DirectoryHandle, rootStatus: FileStatus, directory: DirectoryHandle, isExternal: Bool,
                 displayPath: String, notices: [String]) {
        self.root = root; self.rootStatus = rootStatus; self.directory = directory
        self.isExternal = isExternal; self.displayPath = displayPath; self.notices = notices
    }

    /// Opens the state folder ROOT/.policyctl, creating it (mode 0700: staged files stay private) when
    /// `create` is set. Returns nil when it does not exist and `create` is false.
    /// - Throws: ``UntrustedState`` when it exists but this process did not make it (another owner, group or
    ///   other write permission, a symlink, not a directory, another filesystem).
    package static func open(root: DirectoryHandle, create: Bool) throws -> StateDirectory? {
        let rootStatus = try root.status()
        let display = Markers.stateDirectory.escaped
        if try root.statusIfPresent(of: Markers.stateDirectory) == nil {
            guard create else { return nil }
            do {
                try root.makeDirectory(Markers.stateDirectory, permissions: 0o700)
                try root.sync()
            } catch where error.errno == .fileExists {}
        }
        let directory = try openRefusingLinks(Markers.stateDirectory, in: root, path: display, fix: UntrustedState.inRootFix(display))
        try verify(directory, path: display, device: rootStatus.device, fix: UntrustedState.inRootFix(display))
        return StateDirectory(root: root, rootStatus: rootStatus, directory: directory, isExternal: false,
                              displayPath: display, notices: [])
    }

    /// Opens (creating it, mode 0700, when missing: its parent must exist) the state folder `path` outside the
    /// root, which keeps the lock and the journal. A ROOT/.policyctl is then never used: it is reported in
    /// `notices` and otherwise ignored.
    /// - Throws: ``UntrustedState`` when `path` is not this user's own private directory.
    package static func open(root: DirectoryHandle, stateDirectory path: String) throws -> StateDirectory {
        let rootStatus = try root.status()
        let fix = "give --state-dir a directory owned by uid \(system_geteuid()) with mode 0700 (for example under /var/lib/policyctl)"
        let opened = Result { () throws(FileSystemError) -> DirectoryHandle in try DirectoryHandle.open(root: path) }
        let directory: DirectoryHandle
        switch opened {
        case .success(let d): directory = d
        case .failure(let error) where error.errno == .noSuchFile: directory = try create(path, fix: fix)
        case .failure(let error) where error.errno == .tooManySymbolicLinks || error.errno == .notDirectory:
            throw UntrustedState(path: path, problem: "is not a directory (or is a symlink)", fix: fix)
        case .failure(let error):
            // A symlink on the way that PathChase refuses: the state folder is not where the path seems to lead.
            if case .refused(let why) = error.operation { throw UntrustedState(path: path, problem: why, fix: fix) }
            throw error
        }
        try verify(directory, path: path, device: nil, fix: fix)
        var notices: [String] = []
        if let status = try root.statusIfPresent(of: Markers.stateDirectory) {
            let owner = status.userID == system_geteuid() ? "" : " (owned by uid \(status.userID))"
            notices.append("\(Markers.stateDirectory.escaped)\(owner) in the root is ignored: state is kept in \(path) (--state-dir)")
        }
        return StateDirectory(root: root, rootStatus: rootStatus, directory: directory, isExternal: true,
                              displayPath: path, notices: notices)
    }

    /// Creates a missing --state-dir (0700) inside its existing parent.
    private static func create(_ path: String, fix: String) throws -> DirectoryHandle {
        let trimmed = path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
        let slash = trimmed.lastIndex(of: "/")
        let parentPath = slash.map { $0 == trimmed.startIndex ? "/" : String(trimmed[..<$0]) } ?? "."
        let last = slash.map { String(trimmed[trimmed.index(after: $0)...]) } ?? trimmed
        guard let name = FileName(last), last != ".", last != ".." else {
            throw UntrustedState(path: path, problem: "cannot be created", fix: fix)
        }
        let parent: DirectoryHandle
        do { parent = try DirectoryHandle.open(root: parentPath) } catch {
            throw UntrustedState(path: path, problem: "cannot be created: its parent \(parentPath) cannot be opened (\(error.reason))", fix: fix)
        }
        let made = Result { () throws(FileSystemError) in
            try parent.makeDirectory(name, permissions: 0o700)
            try parent.sync()
        }
        if case .failure(let error) = made, error.errno != .fileExists { throw error }
        return try openRefusingLinks(name, in: parent, path: path, fix: fix)
    }

    /// Opens a folder of state (O_NOFOLLOW): a symlink or a file in its place is refused as untrusted.
    static func openRefusingLinks(_ name: FileName, in parent: DirectoryHandle, path: String, fix: String) throws -> DirectoryHandle {
        let result = Result { () throws(FileSystemError) -> DirectoryHandle in try parent.openDirectory(name) }
        switch result {
        case .success(let directory): return directory
        case .failure(let error) where error.errno == .tooManySymbolicLinks || error.errno == .notDirectory:
            throw UntrustedState(path: path, problem: "is not a directory (a symlink or a file someone else put there)", fix: fix)
        case .failure(let error): throw error
        }
    }

    /// The rules for every folder of state: opened without following a symlink (the caller did), then checked
    /// on the descriptor, so nothing can be swapped in between the check and the use.
    static func verify(_ directory: DirectoryHandle, path: String, device: UInt64?, fix: String) throws {
        let status = try directory.status()
        try verify(status, path: path, type: .directory, device: device, fix: fix)
    }

    static func verify(_ status: FileStatus, path: String, type: FileType, device: UInt64?, fix: String) throws {
        guard status.type == type else {
            throw UntrustedState(path: path, problem: "is a \(status.type.rawValue), not a \(type.rawValue)", fix: fix)
        }
        let me = system_geteuid()
        guard status.userID == me else {
            throw UntrustedState(path: path, problem: "is owned by uid \(status.userID), not by uid \(me) that runs policyctl", fix: fix)
        }
        guard status.permissions & 0o022 == 0 else {
            throw UntrustedState(path: path, problem: "is writable by group or others (mode \(String(status.permissions, radix: 8)))", fix: fix)
        }
        if let device, status.device != device {
            throw UntrustedState(path: path, problem: "is on another filesystem than the root", fix: fix)
        }
    }

    /// Takes the exclusive apply lock. When another process holds it: with `wait`, calls `whileWaiting`
    /// once (with the holder's pid when known) and blocks; without, throws `LockHeld`.
    package func lock(wait: Bool, whileWaiting: (Int32?) -> Void = { _ in }) throws -> ApplyLock {
        let file = try openStateFile(StateDirectory.lockName)
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

    /// Opens (creating, 0600) the lock or journal file: O_NOFOLLOW, then checked through the descriptor.
    func openStateFile(_ name: FileName, options: FileDescriptor.Options = [.readWrite, .create]) throws -> FileDescriptor {
        let file: FileDescriptor
        let path = describe(name)
        do {
            file = try directory.openFile(name, options: options, permissions: 0o600)
        } catch where error.errno == .tooManySymbolicLinks {
            throw UntrustedState(path: path, problem: "is a symlink", fix: fileFix(path))
        }
        try StateDirectory.verify(try file.status(), path: path, type: .regular, device: nil, fix: fileFix(path))
        return file
    }

    /// `.policyctl/journal.jsonl` or `DIR/journal.jsonl`: how messages name a file of state.
    func describe(_ name: FileName) -> String {
        (displayPath.hasSuffix("/") ? displayPath : displayPath + "/") + name.escaped
    }

    private func fileFix(_ path: String) -> String {
        "it was not made by policyctl running as uid \(system_geteuid()): inspect it, then remove it (or pass --state-dir to keep state outside the root)"
    }

    func openJournal() throws(FileSystemError) -> Journal {
        // Journal opens it O_NOFOLLOW; the checks then run on that very descriptor.
        let journal = try Journal(in: directory)
        let path = describe(Journal.fileName)
        do { try StateDirectory.verify(try journal.file.status(), path: path, type: .regular, device: nil, fix: fileFix(path)) } catch {
            throw StateDirectory.fileSystemError(error)
        }
        return journal
    }

    /// An ``UntrustedState`` as the typed error apply's and staging's callers carry (EPERM, the problem and the
    /// fix in place of the system call's name).
    static func fileSystemError(_ error: any Error) -> FileSystemError {
        switch error {
        case let e as FileSystemError: return e
        case let e as UntrustedState:
            return FileSystemError(.refused("\(e.problem); \(e.fix)"), path: RelativePath(unchecked: Array(e.path.utf8)), errno: .notPermitted)
        default: return FileSystemError(.other("\(error)"), path: .root, errno: .ioError)
        }
    }

    // MARK: Staging

    /// The folder every staging folder of this state is created in: `.policyctl/staging`, or the root itself.
    func stagingParent(create: Bool) throws(FileSystemError) -> DirectoryHandle? {
        do { return try openStagingParent(create: create) } catch { throw StateDirectory.fileSystemError(error) }
    }

    private func openStagingParent(create: Bool) throws -> DirectoryHandle? {
        if isExternal { return root }
        let display = describe(StateDirectory.stagingName)
        if try directory.statusIfPresent(of: StateDirectory.stagingName) == nil {
            guard create else { return nil }
            do {
                try directory.makeDirectory(StateDirectory.stagingName, permissions: 0o700)
                try directory.sync()
            } catch where error.errno == .fileExists {}
        }
        let parent = try StateDirectory.openRefusingLinks(StateDirectory.stagingName, in: directory, path: display, fix: fileFix(display))
        try StateDirectory.verify(parent, path: display, device: rootStatus.device, fix: fileFix(display))
        return parent
    }

    /// The name of transaction `id`'s staging folder inside `stagingParent`.
    func stagingName(for id: String) -> FileName {
        FileName(unchecked: Array(((isExternal ? StateDirectory.externalStagingPrefix : "") + id).utf8))
    }

    /// Where transaction `id` stages, root-relative, as its begin record says and messages show it.
    func stagingPath(for id: String) -> String {
        isExternal ? StateDirectory.externalStagingPrefix + id : ".policyctl/staging/" + id
    }

    /// Creates transaction `id`'s staging folder: mkdirat 0700, failing if anything has the name already, then
    /// opened without following a symlink and checked (owner, mode, device) through the descriptor.
    func createStaging(for id: String) throws(FileSystemError) -> (parent: DirectoryHandle, staging: DirectoryHandle) {
        guard let parent = try stagingParent(create: true) else { throw FileSystemError(.mkdirat, path: .root, errno: .noSuchFile) }
        let name = stagingName(for: id)
        try parent.makeDirectory(name, permissions: 0o700)
        try parent.sync()
        do { return (parent, try openVerifiedStaging(name, in: parent, id: id)) } catch { throw StateDirectory.fileSystemError(error) }
    }

    /// Transaction `id`'s staging folder, checked; nil when there is none.
    func openStaging(for id: String) throws(FileSystemError) -> (parent: DirectoryHandle, staging: DirectoryHandle)? {
        guard let parent = try stagingParent(create: false) else { return nil }
        let name = stagingName(for: id)
        guard try parent.statusIfPresent(of: name) != nil else { return nil }
        do { return (parent, try openVerifiedStaging(name, in: parent, id: id)) } catch { throw StateDirectory.fileSystemError(error) }
    }

    private func openVerifiedStaging(_ name: FileName, in parent: DirectoryHandle, id: String) throws -> DirectoryHandle {
        let display = stagingPath(for: id)
        let staging = try StateDirectory.openRefusingLinks(name, in: parent, path: display, fix: fileFix(display))
        let status = try staging.status()
        try StateDirectory.verify(status, path: display, type: .directory, device: rootStatus.device, fix: fileFix(display))
        guard status.permissions & 0o077 == 0 else {
            throw UntrustedState(path: display, problem: "is readable by group or others (mode \(String(status.permissions, radix: 8)))",
                                 fix: fileFix(display))
        }
        return staging
    }
}

/// A state folder or file that this process did not make, or that others can change: never used.
public struct UntrustedState: Error, Sendable, CustomStringConvertible {
    /// The folder or file, as given or relative to the root (`.policyctl/journal.jsonl`).
    public var path: String
    /// What is wrong with it.
    public var problem: String
    /// What to do about it.
    public var fix: String

    /// `.policyctl: is owned by uid 12345, ...; refused: <fix>`.
    public var description: String { "\(path): \(problem); refused: \(fix)" }

    static func inRootFix(_ path: String) -> String {
        "it may have been written by another user: inspect it and remove it (rm -r), or pass --state-dir DIR to keep state outside the root"
    }
}

/// Another apply, recover or trash holds the lock of this root.
package struct LockHeld: Error, Sendable, CustomStringConvertible {
    /// The holder's pid, when the lock file says.
    package var pid: Int32?
    package init(pid: Int32?) { self.pid = pid }
    /// `another run holds the lock (pid N)`.
    package var description: String {
        "another run holds the lock" + (pid.map { " (pid \($0))" } ?? "")
    }
}
