// The FreeDesktop trash specification's directory size cache (1.0, "Directory size cache"): `$trash/directorysizes`,
// one line per directory item, `SIZE MTIME PERCENT-ENCODED-NAME`, where MTIME is the seconds-since-epoch mtime of
// the item's `.trashinfo` (so an entry goes stale when the item is replaced under the same name). Pure format here,
// and the measurement it caches: the sum of a directory's regular files, through descriptors, never following a
// symlink or crossing a mount. Who may read or write it (the trash trust rule) is the apply layer's business.

/// One line of `directorysizes`: a directory item's size in bytes and the mtime (seconds) of its `.trashinfo`.
package struct TrashDirectorySize: Sendable, Hashable {
    package var size: Int64
    package var infoModificationSeconds: Int64

    package init(size: Int64, infoModificationSeconds: Int64) {
        self.size = size; self.infoModificationSeconds = infoModificationSeconds
    }
}

extension TrashFolder {
    /// The cache's name in the trash folder.
    package static let directorySizesName = FileName(unchecked: Array("directorysizes".utf8))
    /// The most of it read: a line is ~300 bytes at worst, so this covers tens of thousands of items; a bigger
    /// (hostile or broken) file is not read at all, and every size is measured instead.
    package static let directorySizesLimit = 16 << 20

    /// The entries of a `directorysizes` file by item name. A line that does not parse (not three fields, a
    /// negative or non-decimal number, a name that decodes to nothing, "." or "..", or holds a "/" or NUL) is
    /// ignored, never fatal; of two lines for one name the last counts.
    package static func parseDirectorySizes(_ bytes: [UInt8]) -> [FileName: TrashDirectorySize] {
        var out: [FileName: TrashDirectorySize] = [:]
        for line in bytes.split(separator: 0x0A, omittingEmptySubsequences: true) {
            var text = line[...]
            if text.last == 0x0D { text = text.dropLast() }
            let fields = text.split(separator: 0x20, maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3, let size = decimal(fields[0]), let mtime = decimal(fields[1]),
                  let name = FileName(percentDecoded(Array(fields[2]))),
                  name.bytes != [0x2E], name.bytes != [0x2E, 0x2E] else { continue }
            out[name] = TrashDirectorySize(size: size, infoModificationSeconds: mtime)
        }
        return out
    }

    /// The file's contents for `entries`, sorted by name so the same cache is always the same bytes.
    package static func renderDirectorySizes(_ entries: [FileName: TrashDirectorySize]) -> [UInt8] {
        var out: [UInt8] = []
        for (name, entry) in entries.sorted(by: { $0.key < $1.key }) {
            out += Array("\(entry.size) \(entry.infoModificationSeconds) ".utf8)
            out += percentEncoded(name.bytes)
            out.append(0x0A)
        }
        return out
    }

    /// A non-negative decimal that fits in 63 bits (at most 19 digits), else nil.
    private static func decimal(_ bytes: ArraySlice<UInt8>) -> Int64? {
        guard !bytes.isEmpty, bytes.count <= 19, bytes.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        var n: Int64 = 0
        for b in bytes {
            let (m, o1) = n.multipliedReportingOverflow(by: 10)
            let (a, o2) = m.addingReportingOverflow(Int64(b - 0x30))
            guard !o1, !o2 else { return nil }
            n = a
        }
        return n
    }

    /// The sum of the sizes (st_size) of the regular files in the directory `name` of `parent`, however deep:
    /// opened one level at a time O_NOFOLLOW on the same mount (a symlink or a mount point inside is not
    /// entered, a symlink counts nothing), depth first with one open descriptor per level (a wide folder holds
    /// names, not descriptors), without recursion. An entry that vanished meanwhile counts nothing; any other
    /// failure (EACCES, EMFILE...) throws, so a size is never silently short.
    package static func measureDirectory(_ name: FileName, in parent: DirectoryHandle) throws(FileSystemError) -> Int64 {
        var total: Int64 = 0
        var frames: [(directory: DirectoryHandle, pending: [FileName])] = [(parent, [name])]
        while !frames.isEmpty {
            guard let next = frames[frames.count - 1].pending.popLast() else { frames.removeLast(); continue }
            let directory: DirectoryHandle
            do { directory = try frames[frames.count - 1].directory.openDirectory(next) }
            catch where [.noSuchFile, .notDirectory, .crossDevice, .tooManySymbolicLinks].contains(error.errno) { continue }
            var subfolders: [FileName] = []
            for entry in try directory.entries() where entry.type != .symlink {
                guard let status = try directory.statusIfPresent(of: entry.name) else { continue }
                switch status.type {
                case .regular: total = total.addingReportingOverflow(status.size).overflow ? .max : total + status.size
                case .directory: subfolders.append(entry.name)
                default: break
                }
            }
            frames.append((directory, subfolders))
        }
        return total
    }
}
