// Where a trashed item goes back to, from records the engine owns: the journal of the transaction that moved it
// into the trash (in the trusted state folder), or a `.trashinfo` / index entry root or the euid wrote inside a
// trusted trash folder. Never the item's own `user.policyctl.origin` xattr (its owner can set it) nor a record
// in a folder that fails the trust rule: a co-tenant's script would otherwise be restored as another user's
// `.git/hooks/pre-commit`.

@_spi(Layers) import StoragePolicyFileSystem

/// The move into a trash the journal records: where from, and the entry it moved (device and inode).
package struct JournaledOrigin: Sendable, Equatable {
    package var from: RelativePath
    var device: UInt64
    var inode: UInt64
}


extension JournaledOrigin {
    /// The journal of `state`, read for `Applier.journaledOrigins` and `trash --list` (read-only, no lock needed:
    /// a torn last line is ignored like any other).
    package static func read(from state: StateDirectory, into itemsFolder: RelativePath) -> [FileName: JournaledOrigin] {
        guard (try? state.directory.statusIfPresent(of: Journal.fileName)) != nil,
              let file = try? state.openStateFile(Journal.fileName, options: [.readOnly]),
              let bytes = try? file.readAll(limit: 1 << 31) else { return [:] }
        struct Pending {
            var renames: [Intent] = []
            var skipped: Set<Int> = []
            var undone: Set<Int> = []
        }
        var pending: [String: Pending] = [:]
        var origins: [FileName: JournaledOrigin] = [:]
        _ = Journal.scan(bytes) { record, _ in
            let b = record.body
            switch record.kind {
            case .intent:
                guard let intent = Intent(b), case .rename(let from, let to) = intent.change,
                      to.parent == itemsFolder || from.parent == itemsFolder else { return }
                pending[b.tx, default: Pending()].renames.append(intent)
            case .skip:
                if let action = b.action, pending[b.tx] != nil { pending[b.tx]!.skipped.insert(action) }
            case .undone:
                if pending[b.tx] != nil { pending[b.tx]!.undone.formUnion(b.ops ?? []) }
            case .end:
                // Transactions hold the lock, so their end records come in the order they happened.
                guard let t = pending.removeValue(forKey: b.tx),
                      b.outcome.flatMap(TransactionSummary.Outcome.init(rawValue:)) == .committed else { return }
                for intent in t.renames.sorted(by: { $0.op < $1.op })
                where !t.skipped.contains(intent.action) && !t.undone.contains(intent.op) {
                    guard case .rename(let from, let to) = intent.change else { continue }
                    if from.parent == itemsFolder, let name = from.lastComponent { origins[name] = nil }
                    if to.parent == itemsFolder, let name = to.lastComponent, let identity = intent.identity, !from.isRoot {
                        origins[name] = JournaledOrigin(from: from, device: identity.device, inode: identity.inode)
                    }
                }
            default:
                break
            }
        }
        return origins
    }
}

extension Applier {
    /// For each name in `itemsFolder`, the move into it the journal records last: renamed there (`NAME`) by a
    /// committed transaction, in a step that was neither skipped nor undone, and not renamed out again by a
    /// later one (a restore, an undo). Empty when there is no journal or it cannot be read (nothing is trusted then).
    func journaledOrigins(into itemsFolder: RelativePath) -> [FileName: JournaledOrigin] {
        JournaledOrigin.read(from: lock.state, into: itemsFolder)
    }

    /// Why the trash `trash` may not be restored from: the folder, `files/` and `info/` (or the index) as opened
    /// now (O_NOFOLLOW, fstat on the descriptor) fail the trust rule. nil when trusted or missing.
    func trashTrustProblem(_ trash: TrashFolder) -> String? { Applier.trashTrustProblem(trash, root: lock.state.root) }

    /// ``trashTrustProblem(_:)`` under `root` (also for `trash --list`).
    static func trashTrustProblem(_ trash: TrashFolder, root: DirectoryHandle) -> String? {
        func look(_ path: RelativePath, role: TrashTrust.Role) -> (String?, FileStatus?) {
            do {
                let found: FileStatus?
                if path.isRoot { found = try root.status() } else {
                    found = try root.openDirectory(at: path.parent).statusIfPresent(of: path.lastComponent!)
                }
                guard let found else { return (nil, nil) }
                if found.type != .directory { return (TrashTrust.problem(found, at: path, role: role), found) }
                let status = try root.openDirectory(at: path).status()
                return (TrashTrust.problem(status, at: path, role: role), status)
            } catch {
                return ("the trash folder \(path.escaped) cannot be checked (\(error)); nothing is restored from it", nil)
            }
        }
        let (topProblem, top) = look(trash.path, role: .folder(sharedAllowed: trash.layout == .freedesktop))
        if let topProblem { return topProblem }
        guard top != nil else { return nil }
        let role = TrashTrust.partRole(under: top)
        for part in [trash.layout == .freedesktop ? trash.itemsFolder : nil, trash.infoFolder, trash.indexFolder].compactMap({ $0 }) {
            if let problem = look(part, role: role).0 { return problem }
        }
        return nil
    }

    /// The original path a `.trashinfo` (FreeDesktop `info/`, or an app trash's index) records for `name`, and
    /// the file's path: only a file root or the euid wrote and no one else can change (its folder was checked).
    func trustedRecord(in folder: RelativePath, for name: FileName) -> (origin: [UInt8], path: RelativePath)? {
        Applier.trustedRecord(in: folder, for: name, root: lock.state.root)
    }

    /// ``trustedRecord(in:for:)`` under `root` (also for `trash --list`).
    static func trustedRecord(in folder: RelativePath, for name: FileName, root: DirectoryHandle) -> (origin: [UInt8], path: RelativePath)? {
        let entry = TrashFolder.infoName(for: name)
        guard let directory = try? root.openDirectory(at: folder),
              let status = try? directory.status(of: entry), TrashTrust.recordProblem(status) == nil,
              let contents = try? directory.readFile(entry, limit: 64 * 1024),
              let origin = TrashFolder.originalPath(inTrashInfo: contents) else { return nil }
        return (origin, folder.appending(entry))
    }

    /// The skip reason for an item with no trusted origin, and how to put it back by hand.
    static func noTrustedRecord(_ item: RelativePath, rootPath: String, claimed: [UInt8]?) -> String {
        var root = rootPath
        while root.count > 1 && root.hasSuffix("/") { root.removeLast() }
        let claim = claimed.map { " (its user.policyctl.origin says \(RelativePath(unchecked: $0).escaped), but the item's owner can set that)" } ?? ""
        return "no trusted record of where it came from\(claim): neither this state folder's journal nor a .trashinfo "
            + "root or uid \(system_geteuid()) wrote names it; put it back by hand after checking it (mv -n \(root)/\(item.escaped) DESTINATION)"
    }
}
