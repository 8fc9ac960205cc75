// The trash folders one run moves items into: resolved (and made, 0700) once, before the first trash group,
// then checked again through the descriptors each move uses (StepVerifier). A trash folder is state
// (TrashTrust): one another user made or can write is never moved into; only the moves into it are skipped.
// Owned by the preparer, read by the verifier.

@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyPlan

package final class RunTrashFolders {
    private let ledger: StepLedger
    private let options: ApplyOptions
    /// The transaction's kind: `policyctl trash` names the folder itself, a plan names the destination.
    private let kind: TransactionKind
    private var directories: DirectoryCache { ledger.transaction.directories }

    private(set) var folders: [RelativePath: TrashFolder] = [:]
    /// Trash folders that could not be created or fail the trust rule, and why: moves into them are skipped.
    private(set) var unavailable: [RelativePath: String] = [:]
    /// FreeDesktop trash folders that are shared (root's, sticky, world-writable): their `files/` and `info/`
    /// must be the euid's own and 0700.
    private var shared: Set<RelativePath> = []
    /// Every folder of the trashes this run moves into: made 0700 when a mkdir makes one.
    private(set) lazy var structure: Set<RelativePath> = structurePaths()
    private(set) var resolved = false

    package init(ledger: StepLedger, options: ApplyOptions, kind: TransactionKind) {
        self.ledger = ledger
        self.options = options
        self.kind = kind
    }

    /// The trash folder a trash step moves into. `policyctl trash` names the folder; a plan names the
    /// destination (`T/files/NAME` in a FreeDesktop trash, `T/NAME` in an app trash), so enforced forbid
    /// lands exactly where `policyctl trash` would put the item, with the same records.
    func folderPath(of action: Action) -> RelativePath? {
        guard case .trash(let to) = action.kind else { return nil }
        if kind == .trash { return to }
        let items = to.parent
        if items.lastComponent == TrashFolder.filesName, !items.parent.isRoot, options.trashLayout != .app {
            return items.parent
        }
        return items
    }

    /// The resolved folder a trash step moves into, if any.
    package func folder(of action: Action) -> TrashFolder? { folderPath(of: action).flatMap { folders[$0] } }

    /// How the folder items go into is checked: `files/` of a FreeDesktop trash, or an app trash's folder itself.
    func itemsRole(_ folder: TrashFolder) -> TrashTrust.Role {
        folder.layout == .freedesktop ? partRole(folder) : .folder(sharedAllowed: false)
    }

    /// How `files/`, `info/` or the index is checked: the euid's own and 0700 inside a shared top folder.
    func partRole(_ folder: TrashFolder) -> TrashTrust.Role {
        shared.contains(folder.path) ? .partOfShared : .part
    }

    /// Every folder of every trash this run moves into (the folder, `files/`, `info/`, the index): a mkdir of
    /// one of them makes it 0700.
    private func structurePaths() -> Set<RelativePath> {
        var out = Set<RelativePath>()
        for i in ledger.steps.indices {
            guard let folder = folderPath(of: ledger.steps[action: i]), out.insert(folder).inserted else { continue }
            for part in [TrashFolder.filesName, TrashFolder.infoName, TrashFolder.indexName] { out.insert(folder.appending(part)) }
        }
        return out
    }

    // MARK: Resolving (once, before the first move)

    /// The folders are not resolved yet and `group` moves items into the trash.
    package func needed(by group: Range<Int>, of steps: StepList) -> Bool {
        !resolved && group.contains { steps.isTrashMove($0) }
    }

    /// Finds, checks and (when missing) makes every trash folder the steps move items into. A folder that fails
    /// the trust rule, or cannot be made, is noted: only the moves into it are skipped, naming why.
    package func resolve() throws {
        resolved = true
        var paths: [RelativePath] = []
        for i in ledger.steps.indices {
            if let f = folderPath(of: ledger.steps[action: i]), !paths.contains(f) { paths.append(f) }
        }
        for path in paths {
            do {
                if let refused = try resolve(path) { unavailable[path] = refused }
            } catch let error as FileSystemError where FailureScope(error).isItemLevel && !options.allOrNothing {
                // Only the moves into this folder depend on it: they are skipped, naming the error.
                unavailable[path] = "the trash folder \(path.escaped) could not be created (\(error.description))"
            }
        }
        if !paths.isEmpty {
            try ledger.transaction.makeDurable()
        }
    }

    /// nil when the trash folder at `path` is ready (found trusted, or made); else why moves into it are refused.
    private func resolve(_ path: RelativePath) throws -> String? {
        var layout = options.trashLayout
        let top: FileStatus
        switch try checkedDirectory(path, role: .folder(sharedAllowed: layout != .app)) {
        case .refused(let why): return why
        case .missing:
            if let why = try makeDirectory(path, role: .folder(sharedAllowed: false)) { return why }
            top = try directories.directory(path).status()
        case .trusted(let status): top = status
        }
        let existing = try directories.directory(path)
        if layout == .automatic {
            let files = try existing.statusIfPresent(of: TrashFolder.filesName)
            let info = try existing.statusIfPresent(of: TrashFolder.infoName)
            layout = TrashFolder.detectedLayout(filesIsDirectory: files?.type == .directory, infoIsDirectory: info?.type == .directory)
        }
        let folder = TrashFolder(path: path, layout: layout)
        folders[path] = folder
        if layout == .app {
            // An app trash's items live in the folder itself: a shared one would hand them to everyone.
            if let why = TrashTrust.problem(top, at: path, role: .folder(sharedAllowed: false)) { return why }
            if let index = folder.indexFolder, case .refused(let why) = try checkedDirectory(index, role: .part) { return why }
            return nil
        }
        if TrashTrust.isShared(top) { shared.insert(path) }
        let role = TrashTrust.partRole(under: top)
        for part in [folder.itemsFolder, folder.infoFolder!] {
            switch try checkedDirectory(part, role: role) {
            case .refused(let why): return why
            case .missing: if let why = try makeDirectory(part, role: role) { return why }
            case .trusted: break
            }
        }
        return nil
    }

    private enum CheckedFolder {
        case missing
        case trusted(FileStatus)
        case refused(String)
    }

    /// The folder at `path`: looked at without following a symlink, then opened (O_NOFOLLOW) and checked on
    /// its descriptor, so what passes is what later steps use.
    private func checkedDirectory(_ path: RelativePath, role: TrashTrust.Role) throws(FileSystemError) -> CheckedFolder {
        guard let found = try directories.statusIfPresent(path) else { return .missing }
        if found.type != .directory { return .refused(TrashTrust.problem(found, at: path, role: role)!) }
        let status = try directories.directory(path).status()
        if let why = TrashTrust.problem(status, at: path, role: role) { return .refused(why) }
        return .trusted(status)
    }

    /// Creates a folder the trash needs, as a change of its own (journaled, undone on rollback), then makes it
    /// 0700 on its own descriptor and checks it. Someone who made the name first (between the look and the
    /// mkdir) gets EEXIST: what is there is then checked like any existing folder. nil when it is ready.
    private func makeDirectory(_ path: RelativePath, role: TrashTrust.Role) throws -> String? {
        guard try directories.directoryIfPresent(containing: path) != nil else {
            throw FileSystemError(.mkdirat, path: path, errno: .noSuchFile)
        }
        let transaction = ledger.transaction
        let intent = transaction.intend(.mkdir(path: path), action: -1, identity: nil)
        try transaction.makeDurable()
        // (A Result, not catch-where: the 6.3 compiler trips over a typed error used inside that clause.)
        let made = Result { () throws(FileSystemError) in try transaction.perform(intent) }
        if case .failure(let failure) = made {
            guard failure.errno == .fileExists else { throw failure }
            switch try checkedDirectory(path, role: role) {
            case .trusted: return nil
            case .refused(let why): return why
            case .missing: return "the trash folder \(path.escaped) could not be created (\(failure.description))"
            }
        }
        ledger.touch(path)
        ledger.report.counts[.mkdir] += 1
        return try makePrivate(path, role: role)
    }

    /// Mode 0700 for a trash folder this run made (on its descriptor, whatever the umask left), checked after:
    /// nil when it is ours and trusted, else why not (it was swapped for someone else's since the mkdir).
    @discardableResult
    func makePrivate(_ path: RelativePath, role: TrashTrust.Role = .part) throws(FileSystemError) -> String? {
        let handle = try directories.directory(path)
        let status = try handle.status()
        if status.userID == system_geteuid(), status.permissions & 0o7777 != TrashTrust.createdMode {
            try handle.setPermissions(TrashTrust.createdMode)
        }
        return TrashTrust.problem(try handle.status(), at: path, role: role)
    }
}
