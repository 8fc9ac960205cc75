// A trash folder's layout and its conventions: Finder-style unique names (`name (2).ext`), FreeDesktop
// `.trashinfo` files, the xattr stamps of an app `.Trash`, and its index for items no xattr may be written
// to. The folder's own structure (`files/`, `info/`, the index) is never an item. Pure values and formats.

public struct TrashFolder: Sendable, Hashable {
    /// The folder, relative to the root.
    public var path: RelativePath
    /// `.freedesktop` or `.app` (never `.automatic` once resolved).
    public var layout: Layout

    public init(path: RelativePath, layout: Layout) {
        self.path = path
        self.layout = layout
    }

    /// The layout of a trash folder; a policy names it `TrashRetention.Layout`. Declared here, below the policy
    /// model, because the folder's conventions depend on it and both Evaluation and Apply use those.
    public enum Layout: String, Sendable, Hashable, CaseIterable {
        /// FreeDesktop when the folder has `files/` and `info/`, else app.
        case automatic = "auto"
        /// `files/NAME` with `info/NAME.trashinfo` (the XDG trash specification).
        case freedesktop
        /// Items directly in the folder, stamped by `policyctl trash` with an xattr.
        case app
    }

    package static let filesName = FileName(unchecked: Array("files".utf8))
    package static let infoName = FileName(unchecked: Array("info".utf8))
    package static let infoSuffix = Array(".trashinfo".utf8)
    /// An app trash's index: `.policyctl-info/NAME.trashinfo` (the FreeDesktop format) records when and from
    /// where an item was trashed when no xattr may be written to it (a file with several hard links: the
    /// stamp would land on every other name of the inode, possibly outside the root) or can be (a symlink).
    package static let indexName = FileName(unchecked: Array(".policyctl-info".utf8))

    /// The layout of an existing folder given which of `files/` and `info/` are directories: FreeDesktop
    /// when either is (a half-made FreeDesktop trash is still one: its `files/` is never an item).
    package static func detectedLayout(filesIsDirectory: Bool, infoIsDirectory: Bool) -> Layout {
        filesIsDirectory || infoIsDirectory ? .freedesktop : .app
    }

    /// Names an app trash never gives an item: its index, and the two that would make it look FreeDesktop.
    package static func isReservedInAppTrash(_ name: FileName) -> Bool {
        name == indexName || name == filesName || name == infoName
    }

    /// Where trashed items go: `files/` in the FreeDesktop layout, the folder itself in an app trash.
    package var itemsFolder: RelativePath { layout == .freedesktop ? path.appending(TrashFolder.filesName) : path }
    /// Where `.trashinfo` files go (FreeDesktop only).
    package var infoFolder: RelativePath? { layout == .freedesktop ? path.appending(TrashFolder.infoName) : nil }
    /// Where an app trash records items that carry no xattr stamps (app layout only).
    package var indexFolder: RelativePath? { layout == .app ? path.appending(TrashFolder.indexName) : nil }

    /// The `.trashinfo` name recording the item `name`.
    package static func infoName(for name: FileName) -> FileName {
        FileName(unchecked: name.bytes + infoSuffix)
    }

    /// The xattr holding the item's original root-relative path (raw bytes), so an app-layout trash can
    /// put it back; FreeDesktop keeps that in the `.trashinfo` instead.
    package static let originAttribute = "user.policyctl.origin"

    // MARK: Unique names

    /// The first of `name`, `name (2).ext`, `name (3).ext`, ... that `isTaken` says is free; the extension
    /// stays outside the counter (Finder's convention), and the name is shortened to fit `maxLength` bytes.
    package static func uniqueName(for name: FileName, isDirectory: Bool, maxLength: Int = 255,
                           isTaken: (FileName) throws -> Bool) rethrows -> FileName {
        if name.bytes.count <= maxLength, try !isTaken(name) { return name }
        let (stem, ext) = split(name.bytes, isDirectory: isDirectory)
        var counter = 2
        while true {
            let suffix = Array(" (\(counter))".utf8) + ext
            let room = max(1, maxLength - suffix.count)
            let candidate = FileName(unchecked: truncated(stem, to: room) + suffix)
            if try !isTaken(candidate) { return candidate }
            counter += 1
        }
    }

    /// `report.final.pdf` -> (`report.final`, `.pdf`); a leading-dot name and directories have no extension.
    package static func split(_ bytes: [UInt8], isDirectory: Bool) -> (stem: [UInt8], ext: [UInt8]) {
        guard !isDirectory, let dot = bytes.lastIndex(of: 0x2E), dot > 0, dot < bytes.count - 1 else { return (bytes, []) }
        return (Array(bytes[..<dot]), Array(bytes[dot...]))
    }

    /// Cuts to at most `count` bytes without splitting a UTF-8 sequence.
    static func truncated(_ bytes: [UInt8], to count: Int) -> [UInt8] {
        guard bytes.count > count else { return bytes }
        var end = count
        while end > 0 && bytes[end] & 0xC0 == 0x80 { end -= 1 }
        return Array(bytes[..<end])
    }

    // MARK: .trashinfo

    /// The `.trashinfo` contents for an item that was at `absolutePath`, deleted at `seconds` (epoch).
    package static func trashInfo(absolutePath: [UInt8], deletedAt seconds: Int64) -> [UInt8] {
        trashInfo(path: absolutePath, deletionDate: WallClock.localTimestamp(seconds: seconds))
    }

    /// An app trash index entry: the root-relative origin and the time in UTC with a `Z`, so the record
    /// does not depend on the zone of whoever reads it.
    package static func indexEntry(origin: RelativePath, deletedAt seconds: Int64) -> [UInt8] {
        trashInfo(path: origin.bytes, deletionDate: WallClock.rfc3339(ns: seconds * 1_000_000_000))
    }

    private static func trashInfo(path: [UInt8], deletionDate: String) -> [UInt8] {
        var out = Array("[Trash Info]\nPath=".utf8)
        out += percentEncoded(path)
        out += Array("\nDeletionDate=\(deletionDate)\n".utf8)
        return out
    }

    /// The original path bytes recorded in a `.trashinfo` (percent-decoded), if it has one.
    package static func originalPath(inTrashInfo contents: [UInt8]) -> [UInt8]? {
        var sawHeader = false
        for line in contents.split(separator: 0x0A, omittingEmptySubsequences: true) {
            var l = Array(line)
            if l.last == 0x0D { l.removeLast() }
            if l.first == 0x5B { sawHeader = l.elementsEqual(Array("[Trash Info]".utf8)); continue }
            let key = Array("Path=".utf8)
            if sawHeader, l.starts(with: key) { return percentDecoded(Array(l[key.count...])) }
        }
        return nil
    }

    /// RFC 3986 percent-encoding of a path: unreserved characters and `/` stay, every other byte is `%XX`.
    package static func percentEncoded(_ bytes: [UInt8]) -> [UInt8] {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        for b in bytes {
            switch b {
            case 0x41...0x5A, 0x61...0x7A, 0x30...0x39, 0x2D, 0x2E, 0x5F, 0x7E, 0x2F: out.append(b)
            default: out += [0x25, hex[Int(b >> 4)], hex[Int(b & 0xF)]]
            }
        }
        return out
    }

    static func percentDecoded(_ bytes: [UInt8]) -> [UInt8] {
        func value(_ c: UInt8) -> UInt8? {
            switch c {
            case 0x30...0x39: c - 0x30
            case 0x41...0x46: c - 0x41 + 10
            case 0x61...0x66: c - 0x61 + 10
            default: nil
            }
        }
        var out: [UInt8] = []
        var i = 0
        while i < bytes.count {
            if bytes[i] == 0x25, i + 2 < bytes.count, let h = value(bytes[i + 1]), let l = value(bytes[i + 2]) {
                out.append(h << 4 | l)
                i += 3
            } else {
                out.append(bytes[i])
                i += 1
            }
        }
        return out
    }
}
