// What a trash folder holds, for `policyctl trash --list`: each item's name, where it came from and when it
// was trashed, read from its `.trashinfo`, its xattr stamps or the app trash's index. Read-only; never
// follows a symlink; the folder's own structure is not listed.

public struct TrashedItem: Sendable, Hashable {
    /// The name inside the trash (what `--restore` takes).
    public var name: FileName
    public var type: FileType
    /// Where it was trashed from, relative to the root, when recorded.
    public var original: RelativePath?
    /// When it was trashed: the `.trashinfo` DeletionDate (local time) or the stamp (RFC 3339, UTC).
    public var trashedAt: String?
}

package enum TrashListing {
    /// The items in `folder` (in `layout`, `.automatic` detects it), sorted by name.
    package static func items(in folder: RelativePath, root: DirectoryHandle, rootPath: String,
                             layout: TrashRetention.Layout) throws(FileSystemError) -> [TrashedItem] {
        let directory: DirectoryHandle
        do { directory = try root.openDirectory(at: folder) } catch where error.errno == .noSuchFile { return [] }
        var resolved = layout
        if resolved == .automatic {
            let files = try directory.statusIfPresent(of: TrashFolder.filesName)
            let info = try directory.statusIfPresent(of: TrashFolder.infoName)
            resolved = TrashFolder.detectedLayout(filesIsDirectory: files?.type == .directory, infoIsDirectory: info?.type == .directory)
        }
        var out: [TrashedItem] = []
        if resolved == .freedesktop {
            // A half-made FreeDesktop trash (only info/) holds no items yet.
            let files: DirectoryHandle
            do { files = try directory.openDirectory(TrashFolder.filesName) } catch where error.errno == .noSuchFile { return [] }
            let info = try? directory.openDirectory(TrashFolder.infoName)
            let root = Array(rootPath.utf8)
            for entry in try files.entries() {
                guard let status = try files.statusIfPresent(of: entry.name) else { continue }
                let contents = try? info?.readFile(TrashFolder.infoName(for: entry.name), limit: 64 * 1024)
                var original: RelativePath? = nil
                var date: String? = nil
                if let contents {
                    if let bytes = TrashFolder.originalPath(inTrashInfo: contents) {
                        if bytes.starts(with: root + [0x2F]) { original = RelativePath(bytes[(root.count + 1)...]) }
                        else if bytes.first != 0x2F { original = RelativePath(bytes) }
                    }
                    date = deletionDate(contents)
                }
                out.append(TrashedItem(name: entry.name, type: status.type, original: original, trashedAt: date))
            }
        } else {
            let index = try? directory.openDirectory(TrashFolder.indexName)
            for entry in try directory.entries() where entry.name != TrashFolder.indexName {
                guard let status = try directory.statusIfPresent(of: entry.name) else { continue }
                var original: RelativePath? = nil
                var date: String? = nil
                if status.type != .symlink {
                    original = (try? directory.extendedAttribute(TrashFolder.originAttribute, of: entry.name))?.flatMap { RelativePath($0) }
                    if let stamp = (try? directory.extendedAttribute(Markers.trashStampAttribute, of: entry.name)) ?? nil {
                        date = TrashDates.stamp(stamp).map { WallClock.rfc3339(ns: $0) } ?? "unreadable"
                    }
                }
                // Hard-linked files and symlinks: the index entry root or the item's owner wrote.
                if original == nil, date == nil, let index,
                   let info = try? index.status(of: TrashFolder.infoName(for: entry.name)), info.type == .regular,
                   info.userID == 0 || info.userID == status.userID,
                   let contents = try? index.readFile(TrashFolder.infoName(for: entry.name), limit: 64 * 1024) {
                    original = TrashFolder.originalPath(inTrashInfo: contents).flatMap { RelativePath($0) }
                    date = deletionDate(contents)
                }
                out.append(TrashedItem(name: entry.name, type: status.type, original: original, trashedAt: date))
            }
        }
        return out.sorted { $0.name < $1.name }
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
