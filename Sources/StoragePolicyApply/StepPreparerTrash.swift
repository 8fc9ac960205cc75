// The preparer's trash side: a trash move picks a free name in its (resolved, trusted) folder and plans the
// record that dates it; a restore plans the item's way back and the removal of its records. The folders are
// checked as opened now; the verifier checks them again just before the rename. A restore never lands in
// someone else's folder, and never comes out of a folder another user can write (TrashTrust).

@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyPlan

extension StepPreparer {
    func prepareTrash(_ action: Action) throws(FileSystemError) -> Preparation {
        let path = action.path
        guard let folder = trash.folder(of: action) else { return .skip("no trash folder") }
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
        if let items, let problem = TrashTrust.problem(try items.status(), at: itemsFolder, role: trash.itemsRole(folder)) {
            return .skip(problem)
        }
        if let records, let recordsDirectory,
           let problem = TrashTrust.problem(try recordsDirectory.status(), at: records, role: trash.partRole(folder)) {
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

    /// An undo's restore of a quarantined delete: still in its slot (the transaction's folder the very one its
    /// commit named), still the entry quarantined, going back into the folder it left (the same folder, or one this
    /// undo makes as recorded), owned by root, the euid or the entry's owner, where nothing has its name now.
    func prepareQuarantineRestore(_ action: Action, slot: QuarantineSlot, folder: FolderIdentity,
                                  parent: FolderRecord?) throws(FileSystemError) -> Preparation {
        let origin = action.path
        guard let window = try ledger.transaction.otherQuarantineWindow(slot, folder: folder) else {
            return .skip("its quarantine window was purged: deleted for good")
        }
        guard let item = try window.statusIfPresent(of: slot.name) else {
            return .skip("no longer in the quarantine of \(slot.transaction) (put back by an earlier undo?)")
        }
        if let identity = action.identity, let why = Self.heldMismatch(item, identity) { return .skip(why) }
        if let why = try destinationProblem(origin, parent: parent, itemOwner: item.userID) { return .skip(why) }
        if item.type == .directory { restoring.insert(origin) }
        return .changes([(.unquarantine(slot: slot, folder: folder, to: origin), action.identity)], destination: nil)
    }

    /// Why a quarantined entry found as `status` is not the one recorded as `identity`: another inode, or a file
    /// whose size or mtime changed (nothing should write there: it is in a 0700 folder of the engine's).
    static func heldMismatch(_ status: FileStatus, _ identity: EntryIdentity) -> String? {
        guard status.device == identity.device, status.inode == identity.inode else {
            return "not the entry the transaction quarantined (another inode in its place); left in the quarantine"
        }
        if status.type != .directory, status.size != identity.size || status.modificationTimeNs != identity.modificationTimeNs {
            return "changed in the quarantine since (size or mtime); left there"
        }
        return nil
    }

    /// Why an entry may not go back to `origin` now: its folder is gone (and this undo does not make it), is not
    /// the folder it left (another inode: replaced since, perhaps by another user), or is someone else's (the trash
    /// restore's rule); or something has its name. Nil when it may. Asked when prepared and again just before.
    func destinationProblem(_ origin: RelativePath, parent: FolderRecord?, itemOwner: UInt32) throws(FileSystemError) -> String? {
        let folderName = origin.parent.isRoot ? "." : origin.parent.escaped
        guard let destination = try directories.directoryIfPresent(containing: origin) else {
            // A folder an earlier step of this undo makes (as recorded) or puts back: there once this step runs.
            if planned.contains(origin.parent) || restoring.contains(origin.parent) { return nil }
            return "its folder \(folderName) is gone; left in the quarantine"
        }
        let status = try destination.status()
        // A folder this undo made is not the recorded inode: it is the one recreated as recorded (mode and owner
        // set by its own step). Any other must be the very folder the entry left: then it goes back exactly where
        // it was, whoever owns that folder (a root file in a user's folder goes back there). Only a record without
        // the folder (a journal that names none) falls back on the trash restore's rule of owners.
        if !planned.contains(origin.parent) {
            if let parent {
                if status.device != parent.identity.device || status.inode != parent.identity.inode {
                    return "its folder \(folderName) is not the one it was taken from (replaced since); not put into another folder; left in the quarantine"
                }
            } else if let problem = TrashTrust.destinationProblem(status, at: origin.parent, itemOwner: itemOwner) {
                return problem
            }
        }
        if let found = try destination.statusIfPresent(of: origin.lastComponent!) {
            return "\(origin.escaped) exists (a \(found.type.rawValue)); nothing replaced; left in the quarantine"
        }
        return nil
    }

    func prepareRestore(_ action: Action, to original: RelativePath, cleanup: RestoreCleanup) throws(FileSystemError) -> Preparation {
        if case .quarantine(let slot, let folder, let parent) = cleanup {
            return try prepareQuarantineRestore(action, slot: slot, folder: folder, parent: parent)
        }
        if let reason = Self.forbiddenDestination(original, source: action.path) { return .skip(reason) }
        // Out of a folder root or the euid owns and no one else can write (the trash's, as opened now) only.
        let source = try directories.directory(containing: action.path)
        if let problem = TrashTrust.problem(try source.status(), at: action.path.parent, role: .part) { return .skip(problem) }
        guard let item = try source.statusIfPresent(of: action.path.lastComponent!) else { return .skip("vanished since the plan") }
        guard let destination = try directories.directoryIfPresent(containing: original) else {
            return .skip("the folder it goes back to, \(original.parent.isRoot ? "." : original.parent.escaped), is gone; not restored (no folder is made)")
        }
        if let problem = TrashTrust.destinationProblem(try destination.status(), at: original.parent, itemOwner: item.userID) {
            return .skip(problem)
        }
        if try directories.exists(original) { return .skip("\(original.escaped) exists; nothing replaced") }
        var changes: [(Change, EntryIdentity?)] = [(.rename(from: action.path, to: original), action.identity)]
        switch cleanup {
        case .trashInfo(let info):
            if try directories.statusIfPresent(info) != nil {
                changes.append((.stage(path: info, name: ledger.transaction.stagingName()), nil))
            }
        case .quarantine:
            break
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
}
