// What a trash folder holds, for `policyctl trash --list`: each item's name, where it came from and when it
// was trashed. The origin is the one `--restore` would use (TrashOrigins: the state folder's journal, or a
// `.trashinfo` / index entry root or the euid wrote in a trusted trash), never the item's own xattr; the date is
// read as retention reads it. Read-only; never follows a symlink; the folder's own structure is not listed.

@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyModel
@_spi(Layers) import StoragePolicyEvaluation

public struct TrashedItem: Sendable, Hashable {
    /// The name inside the trash (what `--restore` takes).
    public var name: FileName
    public var type: FileType
    /// Where it was trashed from, relative to the root, when a trusted record says (what `--restore` uses).
    public var original: RelativePath?
    /// When it was trashed: the `.trashinfo` DeletionDate (local time) or the stamp (RFC 3339, UTC).
    public var trashedAt: String?
    /// When it was trashed, in nanoseconds since the epoch, when the record's date is readable.
    public var trashedAtNs: Int64? = nil
    /// Its size in bytes: a directory's is the sum of its regular files (the trusted `directorysizes` cache's
    /// entry when current, else measured through descriptors, never following a symlink); a file's or
    /// symlink's st_size; nil when a directory could not be measured.
    public var size: Int64? = nil
}

package enum TrashListing {
    /// The items in `folder` (in `layout`, `.automatic` detects it), sorted by name; origins from `state`'s
    /// journal or trusted records (none at all in a folder that fails the trust rule).
    package static func items(in folder: RelativePath, root: DirectoryHandle, rootPath: String,
                             layout: TrashRetention.Layout, state: StateDirectory? = nil) throws(FileSystemError) -> [TrashedItem] {
        let directory: DirectoryHandle
        do { directory = try root.openDirectory(at: folder) } catch where error.errno == .noSuchFile { return [] }
        var resolved = layout
        if resolved == .automatic {
            let files = try directory.statusIfPresent(of: TrashFolder.filesName)
            let info = try directory.statusIfPresent(of: TrashFolder.infoName)
            resolved = TrashFolder.detectedLayout(filesIsDirectory: files?.type == .directory, infoIsDirectory: info?.type == .directory)
        }
        var out: [TrashedItem] = []
        let trash = TrashFolder(path: folder, layout: resolved)
        let trusted = Applier.trashTrustProblem(trash, root: root) == nil
        let journaled = trusted ? state.map { JournaledOrigin.read(from: $0, into: trash.itemsFolder) } ?? [:] : [:]
        /// The journal's record when it moved this very entry, else the trusted `.trashinfo` or index entry.
        func origin(_ name: FileName, _ status: FileStatus, records: RelativePath?) -> RelativePath? {
            guard trusted else { return nil }
            if let j = journaled[name], j.device == status.device, j.inode == status.inode { return j.from }
            guard let records, let bytes = Applier.trustedRecord(in: records, for: name, root: root)?.origin else { return nil }
            return relative(bytes, rootPath: rootPath)
        }
        if resolved == .freedesktop {
            // A half-made FreeDesktop trash (only info/) holds no items yet.
            let files: DirectoryHandle
            do { files = try directory.openDirectory(TrashFolder.filesName) } catch where error.errno == .noSuchFile { return [] }
            let info = try? directory.openDirectory(TrashFolder.infoName)
            let sizes = TrashSizesCache.read(trash, root: root)
            for entry in try files.entries() {
                guard let status = try files.statusIfPresent(of: entry.name) else { continue }
                let contents = try? info?.readFile(TrashFolder.infoName(for: entry.name), limit: 64 * 1024)
                let original = origin(entry.name, status, records: trash.infoFolder)
                let date = contents.flatMap(deletionDate)
                let size = status.type == .directory
                    ? TrashSizesCache.directorySize(entry.name, files: files, info: info, cache: sizes) : status.size
                out.append(TrashedItem(name: entry.name, type: status.type, original: original, trashedAt: date,
                                       trashedAtNs: contents.flatMap { TrashDates.read(trashInfo: $0).date }, size: size))
            }
        } else {
            let index = try? directory.openDirectory(TrashFolder.indexName)
            for entry in try directory.entries() where entry.name != TrashFolder.indexName {
                guard let status = try directory.statusIfPresent(of: entry.name) else { continue }
                let original = origin(entry.name, status, records: trash.indexFolder)
                var date: String? = nil
                var dateNs: Int64? = nil
                if status.type != .symlink {
                    if let stamp = (try? directory.extendedAttribute(Markers.trashStampAttribute, of: entry.name)) ?? nil {
                        dateNs = TrashDates.stamp(stamp)
                        date = dateNs.map { WallClock.rfc3339(ns: $0) } ?? "unreadable"
                    }
                }
                // Hard-linked files and symlinks are dated by the index entry root or the item's owner wrote.
                if date == nil, let index,
                   let info = try? index.status(of: TrashFolder.infoName(for: entry.name)), info.type == .regular,
                   info.userID == 0 || info.userID == status.userID,
                   let contents = try? index.readFile(TrashFolder.infoName(for: entry.name), limit: 64 * 1024) {
                    date = deletionDate(contents)
                    dateNs = TrashDates.read(trashInfo: contents).date
                }
                let size = status.type == .directory ? (try? TrashFolder.measureDirectory(entry.name, in: directory)) : status.size
                out.append(TrashedItem(name: entry.name, type: status.type, original: original, trashedAt: date,
                                       trashedAtNs: dateNs, size: size))
            }
        }
        return out.sorted { $0.name < $1.name }
    }

    /// A `.trashinfo` Path (absolute under the root, or root-relative) as a root-relative path.
    private static func relative(_ bytes: [UInt8], rootPath: String) -> RelativePath? {
        var root = Array(rootPath.utf8)
        while root.count > 1 && root.last == 0x2F { root.removeLast() }
        if bytes.starts(with: root + [0x2F]) { return RelativePath(bytes[(root.count + 1)...]) }
        return bytes.first == 0x2F ? nil : RelativePath(bytes)
    }

    /// The DeletionDate as written when it is a valid time (so it needs no escaping), else "unreadable".
    private static func deletionDate(_ contents: [UInt8]) -> String? {
        switch TrashDates.read(trashInfo: contents) {
        case .missing: return nil
        case .unreadable: return "unreadable"
        case .date:
            let key = Array("DeletionDate=".utf8)
            var inGroup = false
            for line in contents.split(separator: 0x0A) {
                var text = line
                if text.last == 0x0D { text = text.dropLast() }
                if text.first == 0x5B { inGroup = text.elementsEqual("[Trash Info]".utf8); continue }
                if inGroup, text.starts(with: key) { return String(decoding: text.dropFirst(key.count), as: UTF8.self) }
            }
            return nil
        }
    }
}
