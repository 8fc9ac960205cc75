// What a trash folder holds, for `policyctl trash --list`: each item's name, where it came from and when it
// was trashed, read from its `.trashinfo` or xattr stamps. Read-only; never follows a symlink.

public struct TrashedItem: Sendable, Hashable {
    /// The name inside the trash (what `--restore` takes).
    public var name: FileName
    public var type: FileType
    /// Where it was trashed from, relative to the root, when recorded.
    public var original: RelativePath?
    /// When it was trashed: the `.trashinfo` DeletionDate (local time) or the stamp (RFC 3339, UTC).
    public var trashedAt: String?
}

public enum TrashListing {
    /// The items in `folder` (in `layout`, `.automatic` detects it), sorted by name.
    public static func items(in folder: RelativePath, root: DirectoryHandle, rootPath: String,
                             layout: TrashRetention.Layout) throws(FileSystemError) -> [TrashedItem] {
        let directory: DirectoryHandle
        do { directory = try root.openDirectory(at: folder) } catch where error.errno == .noSuchFile { return [] }
        var resolved = layout
        if resolved == .automatic {
            let files = try directory.statusIfPresent(of: TrashFolder.filesName)
            let info = try directory.statusIfPresent(of: TrashFolder.infoName)
            resolved = files?.type == .directory && info?.type == .directory ? .freedesktop : .app
        }
        var out: [TrashedItem] = []
        if resolved == .freedesktop {
            let files = try directory.openDirectory(TrashFolder.filesName)
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
            for entry in try directory.entries() {
                guard let status = try directory.statusIfPresent(of: entry.name) else { continue }
                var original: RelativePath? = nil
                var date: String? = nil
                if status.type != .symlink {
                    original = (try? directory.extendedAttribute(TrashFolder.originAttribute, of: entry.name))?.flatMap { RelativePath($0) }
                    if let stamp = (try? directory.extendedAttribute(Markers.trashStampAttribute, of: entry.name)) ?? nil,
                       let seconds = Int64(String(decoding: stamp, as: UTF8.self)) {
                        date = WallClock.rfc3339(ns: seconds * 1_000_000_000)
                    }
                }
                out.append(TrashedItem(name: entry.name, type: status.type, original: original, trashedAt: date))
            }
        }
        return out.sorted { $0.name < $1.name }
    }

    private static func deletionDate(_ contents: [UInt8]) -> String? {
        let key = Array("DeletionDate=".utf8)
        for line in contents.split(separator: 0x0A) where line.starts(with: key) {
            return String(decoding: line.dropFirst(key.count), as: UTF8.self).trimmingWhitespace
        }
        return nil
    }
}
