// The trash side of a run: the folders trash moves go into are resolved (and made, 0700) once, then checked
// again through the descriptors each move and restore uses. A trash folder is state (TrashTrust): one another
// user made or can write is never moved into or restored from; a restore never lands in someone else's folder.

extension ApplyRun {
    func prepareTrash(_ action: Action, into _: RelativePath) throws(FileSystemError) -> Preparation {
        let path = action.path
        guard let folder = trashFolderPath(of: action).flatMap({ trashFolders[$0] }) else { return .skip("no trash folder") }
        if path.hasPrefix(folder.path) { return .skip("is already in the trash folder") }
        if folder.path.hasPrefix(path) { return .skip("holds the trash folder itself") }
        let source = try directories.directory(containing: path)
        guard let status = try source.statusIfPresent(of: path.lastComponent!) else { return .skip("vanished since the plan") }
        // No xattr is ever written to an inode with other names (it may live outside the root) or to a symlink
        // (Linux refuses): an app trash records those in its index instead.
        let indexed = folder.layout == .app && (status.type == .symlink || (status.type != .directory && status.linkCount > 1))
        let itemsFolder = folder.itemsFolder
        let items = try directories.directoryIfPresent(itemsFolder)
        let records = folder.infoFolder ?? folder.indexFolder
        let recordsDirectory = try records.flatMap { p throws(FileSystemError) in try directories.directoryIfPresent(p) }
        // The folders as opened now (the cache reopens them by name each group): what the rename uses is checked.
        if let items, let problem = TrashTrust.problem(try items.status(), at: itemsFolder, role: itemsRole(folder)) {
            return .skip(problem)
        }
        if let records, let recordsDirectory,
           let problem = TrashTrust.problem(try recordsDirectory.status(), at: records, role: partRole(folder)) {
            return .skip(problem)
        }
        let isDirectory = action.type == .directory
        let taken = reserved[itemsFolder, default: []]
        // A name that cannot even be checked counts as taken: the next candidate is tried instead.
        let maxLength = folder.layout == .freedesktop || indexed ? 255 - TrashFolder.infoSuffix.count : 255
        func present(_ name: FileName, in directory: DirectoryHandle?) -> Bool {
            guard let directory else { return false }
            do { return try directory.statusIfPresent(of: name) != nil } catch { return true }
        }
        let name = TrashFolder.uniqueName(for: path.lastComponent!, isDirectory: isDirectory, maxLength: maxLength) { n in
            taken.contains(n) || (folder.layout == .app && TrashFolder.isReservedInAppTrash(n))
                || present(n, in: items) || present(TrashFolder.infoName(for: n), in: recordsDirectory)
        }
        reserved[itemsFolder, default: []].insert(name)
        let destination = itemsFolder.appending(name)
        if let infoFolder = folder.infoFolder {
            let absolute = Array(options.rootPath.utf8) + [0x2F] + path.bytes
            let contents = TrashFolder.trashInfo(absolutePath: absolute, deletedAt: nowSeconds)
            return .changes([
                (.create(path: infoFolder.appending(TrashFolder.infoName(for: name)), temp: temporaryName(), contents: contents), nil),
                (.rename(from: path, to: destination), action.identity),
            ], destination: destination)
        }
        if indexed, let indexFolder = folder.indexFolder {
            var changes: [(Change, EntryIdentity?)] = []
            if recordsDirectory == nil && !planned.contains(indexFolder) {
                planned.insert(indexFolder)
                changes.append((.mkdir(path: indexFolder), nil))
            }
            let contents = TrashFolder.indexEntry(origin: path, deletedAt: nowSeconds)
            changes.append((.create(path: indexFolder.appending(TrashFolder.infoName(for: name)), temp: temporaryName(), contents: contents), nil))
            changes.append((.rename(from: path, to: destination), action.identity))
            return .changes(changes, destination: destination)
        }
        var changes: [(Change, EntryIdentity?)] = [(.rename(from: path, to: destination), action.identity)]
        // The parent must open: a stamp left out silently would date the item by ctime instead.
        let stamp = try source.extendedAttribute(Markers.trashStampAttribute, of: path.lastComponent)
        let origin = try source.extendedAttribute(TrashFolder.originAttribute, of: path.lastComponent)
        changes.append((.setxattr(path: destination, attribute: Markers.trashStampAttribute,
                                  value: Array(String(nowSeconds).utf8), previous: stamp), action.identity))
        changes.append((.setxattr(path: destination, attribute: TrashFolder.originAttribute,
                                  value: path.bytes, previous: origin), action.identity))
        return .changes(changes, destination: destination)
    }

    /// How the folder items go into is checked: `files/` of a FreeDesktop trash, or an app trash's folder itself.
    private func itemsRole(_ folder: TrashFolder) -> TrashTrust.Role {
        folder.layout == .freedesktop ? partRole(folder) : .folder(sharedAllowed: false)
    }

    /// How `files/`, `info/` or the index is checked: the euid's own and 0700 inside a shared top folder.
    private func partRole(_ folder: TrashFolder) -> TrashTrust.Role {
        sharedTrash.contains(folder.path) ? .partOfShared : .part
    }

    /// Just before a trash move: why the folder it goes into, as the rename will use it, is refused; nil when trusted.
    func trashDestinationProblem(_ i: Int) throws(FileSystemError) -> String? {
        guard case .trash = steps[i].action.kind, let destination = report.items[i].destination,
              let folder = trashFolderPath(of: steps[i].action).flatMap({ trashFolders[$0] }),
              let items = try directories.directoryIfPresent(containing: destination) else { return nil }
        return TrashTrust.problem(try items.status(), at: destination.parent, role: itemsRole(folder))
    }

    /// The trash folder a trash step moves into. `policyctl trash` names the folder; a plan names the
    /// destination (`T/files/NAME` in a FreeDesktop trash, `T/NAME` in an app trash), so enforced forbid
    /// lands exactly where `policyctl trash` would put the item, with the same records.
    func trashFolderPath(of action: Action) -> RelativePath? {
        guard case .trash(let to) = action.kind else { return nil }
        if metadata.kind == .trash { return to }
        let items = to.parent
        if items.lastComponent == TrashFolder.filesName, !items.parent.isRoot, options.trashLayout != .app {
            return items.parent
        }
        return items
    }

    /// Every folder of every trash this run moves into (the folder, `files/`, `info/`, the index): a mkdir of
    /// one of them makes it 0700.
    func trashStructurePaths() -> Set<RelativePath> {
        var out = Set<RelativePath>()
        for step in steps {
            guard let folder = trashFolderPath(of: step.action), out.insert(folder).inserted else { continue }
            for part in [TrashFolder.filesName, TrashFolder.infoName, TrashFolder.indexName] { out.insert(folder.appending(part)) }
        }
        return out
    }

    func prepareRestore(_ action: Action, to original: RelativePath, cleanup: RestoreCleanup) throws(FileSystemError) -> Preparation {
        if let reason = Self.forbiddenDestination(original, source: action.path) { return .skip(reason) }
        // Out of a folder root or the euid owns and no one else can write (the trash's, as opened now) only.
        let source = try directories.directory(containing: action.path)
        if let problem = TrashTrust.problem(try source.status(), at: action.path.parent, role: .part) { return .skip(problem) }
        guard let item = try source.statusIfPresent(of: action.path.lastComponent!) else { return .skip("vanished since the plan") }
        guard let destination = try directories.directoryIfPresent(containing: original) else {
            return .skip("its original folder \(original.parent.isRoot ? "." : original.parent.escaped) is gone; not restored")
        }
        if let problem = TrashTrust.destinationProblem(try destination.status(), at: original.parent, itemOwner: item.userID) {
            return .skip(problem)
        }
        if try exists(original) { return .skip("\(original.escaped) exists; nothing replaced") }
        var changes: [(Change, EntryIdentity?)] = [(.rename(from: action.path, to: original), action.identity)]
        switch cleanup {
        case .trashInfo(let info):
            if try statusIfPresent(info) != nil {
                changes.append((.stage(path: info, name: transaction.stagingName()), nil))
            }
        case .attributes(let stamp, let origin):
            if stamp != nil {
                changes.append((.setxattr(path: original, attribute: Markers.trashStampAttribute, value: nil, previous: stamp), action.identity))
            }
            if origin != nil {
                changes.append((.setxattr(path: original, attribute: TrashFolder.originAttribute, value: nil, previous: origin), action.identity))
            }
        }
        return .changes(changes, destination: original)
    }

    /// Checked again just before a restore's rename, on the entry as found then (`status`): the folder it goes
    /// into is still root's, the euid's or the item owner's.
    func restoreDestinationProblem(_ step: Step, item status: FileStatus) throws(FileSystemError) -> String? {
        guard step.restore != nil, case .rename(let to) = step.action.kind,
              let folder = try directories.directoryIfPresent(containing: to) else { return nil }
        return TrashTrust.destinationProblem(try folder.status(), at: to.parent, itemOwner: status.userID)
    }

    static func forbiddenDestination(_ destination: RelativePath, source: RelativePath) -> String? {
        if destination.isRoot { return "the destination is the root itself" }
        if let first = destination.components.first, Markers.isEngineState(first.bytes) { return "the destination is inside .policyctl" }
        if destination.hasPrefix(source) { return "the destination is inside the entry itself" }
        return nil
    }

    // MARK: Resolving the trash folders (once, before the first move)

    /// Finds, checks and (when missing) makes every trash folder the steps move items into. A folder that fails
    /// the trust rule, or cannot be made, is noted: only the moves into it are skipped, naming why.
    func resolveTrashFolders() throws {
        var folders: [RelativePath] = []
        for step in steps {
            if let f = trashFolderPath(of: step.action), !folders.contains(f) { folders.append(f) }
        }
        for path in folders {
            do {
                if let refused = try resolveTrashFolder(path) { unavailableTrash[path] = refused }
            } catch let error as FileSystemError where FailureScope(error).isItemLevel && !options.allOrNothing {
                // Only the moves into this folder depend on it: they are skipped, naming the error.
                unavailableTrash[path] = "the trash folder \(path.escaped) could not be created (\(error.description))"
            }
        }
        if !folders.isEmpty {
            try transaction.makeDurable()
        }
    }

    /// nil when the trash folder at `path` is ready (found trusted, or made); else why moves into it are refused.
    private func resolveTrashFolder(_ path: RelativePath) throws -> String? {
        var layout = options.trashLayout
        let top: FileStatus
        switch try checkedTrashDirectory(path, role: .folder(sharedAllowed: layout != .app)) {
        case .refused(let why): return why
        case .missing:
            if let why = try makeTrashDirectory(path, role: .folder(sharedAllowed: false)) { return why }
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
        trashFolders[path] = folder
        if layout == .app {
            // An app trash's items live in the folder itself: a shared one would hand them to everyone.
            if let why = TrashTrust.problem(top, at: path, role: .folder(sharedAllowed: false)) { return why }
            if let index = folder.indexFolder, case .refused(let why) = try checkedTrashDirectory(index, role: .part) { return why }
            return nil
        }
        if TrashTrust.isShared(top) { sharedTrash.insert(path) }
        let role = TrashTrust.partRole(under: top)
        for part in [folder.itemsFolder, folder.infoFolder!] {
            switch try checkedTrashDirectory(part, role: role) {
            case .refused(let why): return why
            case .missing: if let why = try makeTrashDirectory(part, role: role) { return why }
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
    private func checkedTrashDirectory(_ path: RelativePath, role: TrashTrust.Role) throws(FileSystemError) -> CheckedFolder {
        guard let found = try statusIfPresent(path) else { return .missing }
        if found.type != .directory { return .refused(TrashTrust.problem(found, at: path, role: role)!) }
        let status = try directories.directory(path).status()
        if let why = TrashTrust.problem(status, at: path, role: role) { return .refused(why) }
        return .trusted(status)
    }

    /// Creates a folder the trash needs, as a change of its own (journaled, undone on rollback), then makes it
    /// 0700 on its own descriptor and checks it. Someone who made the name first (between the look and the
    /// mkdir) gets EEXIST: what is there is then checked like any existing folder. nil when it is ready.
    private func makeTrashDirectory(_ path: RelativePath, role: TrashTrust.Role) throws -> String? {
        guard try directories.directoryIfPresent(containing: path) != nil else {
            throw FileSystemError(.mkdirat, path: path, errno: .noSuchFile)
        }
        let intent = transaction.intend(.mkdir(path: path), action: -1, identity: nil)
        try transaction.makeDurable()
        // (A Result, not catch-where: the 6.3 compiler trips over a typed error used inside that clause.)
        let made = Result { () throws(FileSystemError) in try transaction.perform(intent) }
        if case .failure(let failure) = made {
            guard failure.errno == .fileExists else { throw failure }
            switch try checkedTrashDirectory(path, role: role) {
            case .trusted: return nil
            case .refused(let why): return why
            case .missing: return "the trash folder \(path.escaped) could not be created (\(failure.description))"
            }
        }
        touch(path)
        report.counts[.mkdir] += 1
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
