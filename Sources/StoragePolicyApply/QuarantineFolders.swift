// Where quarantined deletes wait: ROOT/.policyctl/quarantine/<tx>/<until>/<n>, or with --state-dir (the state may
// be on another volume, and a rename must stay on the root's) a fresh ROOT/.policyctl-quarantine-<tx>/<until>/<n>.
// Every folder is state: made by mkdirat 0700 (failing if the name exists: a planted folder is never reused), opened
// O_NOFOLLOW and checked through its descriptor (owned by the euid, mode 0700, on the root's device), and, once the
// transaction committed, the transaction's folder must also be the very one its commit record names (dev, ino).

@_spi(Layers) import StoragePolicyFileSystem

/// A folder's device and inode, as a commit record names the quarantine folder it made.
package struct FolderIdentity: Sendable, Hashable {
    package var device: UInt64
    package var inode: UInt64
    package init(device: UInt64, inode: UInt64) { self.device = device; self.inode = inode }
}

/// A quarantined entry's place: the transaction whose quarantine holds it, its window's end, and its name there.
package struct QuarantineSlot: Sendable, Hashable {
    /// The transaction that quarantined it (its folder's name).
    package var transaction: String
    /// The window's end, `20261209T054020Z` (WallClock.compactUTC): the subfolder's name.
    package var until: String
    /// The entry's name in that subfolder: a sequence number.
    package var name: FileName

    package init(transaction: String, until: String, name: FileName) {
        self.transaction = transaction; self.until = until; self.name = name
    }

    /// `until` is a name the engine makes: 16 characters `YYYYMMDDThhmmssZ`.
    static func isValidUntil(_ text: String) -> Bool {
        let b = Array(text.utf8)
        guard b.count == 16, b[8] == 0x54, b[15] == 0x5A else { return false }
        return b.enumerated().allSatisfy { i, c in i == 8 || i == 15 || (0x30...0x39).contains(c) }
    }

    /// The instant `until` names, in nanoseconds; nil when it is not one.
    static func instant(_ until: String) -> Int64? {
        guard isValidUntil(until) else { return nil }
        let b = Array(until.utf8)
        let rfc = String(decoding: b[0..<4], as: UTF8.self) + "-" + String(decoding: b[4..<6], as: UTF8.self) + "-"
            + String(decoding: b[6..<8], as: UTF8.self) + "T" + String(decoding: b[9..<11], as: UTF8.self) + ":"
            + String(decoding: b[11..<13], as: UTF8.self) + ":" + String(decoding: b[13..<15], as: UTF8.self) + "Z"
        return WallClock.parseRFC3339(rfc)
    }

    var untilName: FileName { FileName(unchecked: Array(until.utf8)) }
}

extension StateDirectory {
    static let quarantineFolderName = FileName(unchecked: Array("quarantine".utf8))

    /// The folder every transaction's quarantine folder is made in: `.policyctl/quarantine`, or the root itself.
    func quarantineParent(create: Bool) throws(FileSystemError) -> DirectoryHandle? {
        if isExternal { return root }
        do {
            let display = describe(StateDirectory.quarantineFolderName)
            if try directory.statusIfPresent(of: StateDirectory.quarantineFolderName) == nil {
                guard create else { return nil }
                do {
                    try directory.makeDirectory(StateDirectory.quarantineFolderName, permissions: 0o700)
                    try directory.sync()
                } catch where error.errno == .fileExists {}
            }
            let parent = try StateDirectory.openRefusingLinks(StateDirectory.quarantineFolderName, in: directory, path: display,
                                                              fix: UntrustedState.inRootFix(display))
            try StateDirectory.verify(parent, path: display, device: rootStatus.device, fix: UntrustedState.inRootFix(display))
            return parent
        } catch {
            throw StateDirectory.fileSystemError(error)
        }
    }

    /// Transaction `id`'s quarantine folder's name inside `quarantineParent`.
    package func quarantineName(for id: String) -> FileName {
        FileName(unchecked: Array(((isExternal ? Markers.quarantinePrefix : "") + id).utf8))
    }

    /// Where transaction `id`'s quarantine is, root-relative, as the begin record and messages name it.
    package func quarantinePath(for id: String) -> String {
        isExternal ? Markers.quarantinePrefix + id : ".policyctl/quarantine/" + id
    }

    /// The transactions with a quarantine folder now (by name only: what rotation keeps whole).
    package func quarantinedTransactions() throws(FileSystemError) -> [String] {
        guard let parent = try quarantineParent(create: false) else { return [] }
        let prefix = isExternal ? Array(Markers.quarantinePrefix.utf8) : []
        return try parent.entries().compactMap { entry -> String? in
            guard entry.name.bytes.starts(with: prefix) else { return nil }
            let id = String(decoding: entry.name.bytes.dropFirst(prefix.count), as: UTF8.self)
            return JournalRecord.isValidTransaction(id) ? id : nil
        }.sorted()
    }

    /// Creates transaction `id`'s quarantine folder and one subfolder per window end, each mkdirat 0700 (failing
    /// when the name exists) and checked through its descriptor; the parents are fsynced.
    func createQuarantine(for id: String, untils: [String]) throws(FileSystemError) -> QuarantineFolders {
        guard let parent = try quarantineParent(create: true) else { throw FileSystemError(.mkdirat, path: .root, errno: .noSuchFile) }
        let name = quarantineName(for: id)
        try parent.makeDirectory(name, permissions: 0o700)
        try parent.sync()
        let folder: DirectoryHandle
        do { folder = try openVerifiedQuarantine(name, in: parent, id: id, identity: nil) } catch { throw StateDirectory.fileSystemError(error) }
        var windows: [String: DirectoryHandle] = [:]
        for until in untils {
            let sub = FileName(unchecked: Array(until.utf8))
            try folder.makeDirectory(sub, permissions: 0o700)
            do { windows[until] = try openVerifiedWindow(sub, in: folder, id: id) } catch { throw StateDirectory.fileSystemError(error) }
        }
        try folder.sync()
        let status = try folder.status()
        return QuarantineFolders(transaction: id, name: name, parent: parent, folder: folder, windows: windows,
                                 identity: FolderIdentity(device: status.device, inode: status.inode))
    }

    /// Transaction `id`'s quarantine folder, checked (and, with `identity`, the very folder its commit named);
    /// nil when it is not there.
    func openQuarantine(for id: String, identity: FolderIdentity?) throws(FileSystemError) -> QuarantineFolders? {
        guard JournalRecord.isValidTransaction(id), let parent = try quarantineParent(create: false) else { return nil }
        let name = quarantineName(for: id)
        guard try parent.statusIfPresent(of: name) != nil else { return nil }
        do {
            let folder = try openVerifiedQuarantine(name, in: parent, id: id, identity: identity)
            let status = try folder.status()
            return QuarantineFolders(transaction: id, name: name, parent: parent, folder: folder, windows: [:],
                                     identity: FolderIdentity(device: status.device, inode: status.inode))
        } catch {
            throw StateDirectory.fileSystemError(error)
        }
    }

    private func openVerifiedQuarantine(_ name: FileName, in parent: DirectoryHandle, id: String,
                                        identity: FolderIdentity?) throws -> DirectoryHandle {
        let display = quarantinePath(for: id)
        let fix = "it is not the quarantine folder policyctl made: inspect it and remove it; nothing in it is used"
        let folder = try StateDirectory.openRefusingLinks(name, in: parent, path: display, fix: fix)
        let status = try folder.status()
        try StateDirectory.verify(status, path: display, type: .directory, device: rootStatus.device, fix: fix)
        guard status.permissions & 0o077 == 0 else {
            throw UntrustedState(path: display, problem: "is readable by group or others (mode \(String(status.permissions, radix: 8)))", fix: fix)
        }
        if let identity, status.device != identity.device || status.inode != identity.inode {
            throw UntrustedState(path: display, problem: "is not the folder its transaction made (device \(status.device), inode \(status.inode); the journal says device \(identity.device), inode \(identity.inode))", fix: fix)
        }
        return folder
    }

    /// A window's subfolder of a checked quarantine folder, checked the same way.
    func openVerifiedWindow(_ name: FileName, in folder: DirectoryHandle, id: String) throws -> DirectoryHandle {
        let display = quarantinePath(for: id) + "/" + name.escaped
        let fix = "it is not a folder policyctl made: inspect it; nothing in it is used"
        let window = try StateDirectory.openRefusingLinks(name, in: folder, path: display, fix: fix)
        let status = try window.status()
        try StateDirectory.verify(status, path: display, type: .directory, device: rootStatus.device, fix: fix)
        guard status.permissions & 0o077 == 0 else {
            throw UntrustedState(path: display, problem: "is readable by group or others (mode \(String(status.permissions, radix: 8)))", fix: fix)
        }
        return window
    }
}

/// One transaction's quarantine folder, opened and checked, with the window subfolders opened so far.
package final class QuarantineFolders {
    package let transaction: String
    /// The folder's name in `parent`.
    let name: FileName
    let parent: DirectoryHandle
    let folder: DirectoryHandle
    /// Window subfolders by `until`, opened (and checked) on first use.
    private(set) var windows: [String: DirectoryHandle]
    package let identity: FolderIdentity

    init(transaction: String, name: FileName, parent: DirectoryHandle, folder: DirectoryHandle, windows: [String: DirectoryHandle],
         identity: FolderIdentity) {
        self.transaction = transaction; self.name = name; self.parent = parent; self.folder = folder; self.windows = windows
        self.identity = identity
    }

    /// The window subfolder `until`, checked; nil when it is not there (purged).
    func window(_ until: String, state: StateDirectory) throws(FileSystemError) -> DirectoryHandle? {
        if let open = windows[until] { return open }
        guard QuarantineSlot.isValidUntil(until) else { return nil }
        let name = FileName(unchecked: Array(until.utf8))
        guard try folder.statusIfPresent(of: name) != nil else { return nil }
        do {
            let handle = try state.openVerifiedWindow(name, in: folder, id: transaction)
            windows[until] = handle
            return handle
        } catch {
            throw StateDirectory.fileSystemError(error)
        }
    }

    /// Every window subfolder's name there now.
    func untils() throws(FileSystemError) -> [String] {
        try folder.entries().map { String(decoding: $0.name.bytes, as: UTF8.self) }.filter(QuarantineSlot.isValidUntil).sorted()
    }

    /// Removes empty window subfolders, then the folder itself when it is empty; fsyncs what changed. Never
    /// removes anything that holds an entry.
    func removeIfEmpty() throws(FileSystemError) {
        for until in try untils() {
            do { try folder.removeDirectory(FileName(unchecked: Array(until.utf8))) }
            catch where error.errno == .directoryNotEmpty || error.errno == .noSuchFile {}
        }
        windows = windows.filter { (try? folder.statusIfPresent(of: FileName(unchecked: Array($0.key.utf8)))) != nil }
        try folder.sync()
        guard try folder.entries().isEmpty else { return }
        do {
            try parent.removeDirectory(name)
            try parent.sync()
        } catch where error.errno == .directoryNotEmpty || error.errno == .noSuchFile {}
    }
}
