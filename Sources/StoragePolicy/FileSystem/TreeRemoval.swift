// Removes a directory tree through directory descriptors (unlinkat entry by entry), iteratively, so deep
// trees need neither recursion nor one descriptor per level. Never follows a symlink: one is unlinked, not entered.
// Never enters another mount (bind mounts included): a tree holding a mount point fails with EXDEV and keeps it.

extension DirectoryHandle {
    /// How many directory descriptors one removal keeps open at most; deeper levels are reopened by name.
    static let treeRemovalOpenLimit = 48

    /// Removes `name` and, when it is a directory, everything beneath it. An entry that is already gone is
    /// not an error, so an interrupted removal can simply be run again. A mount point inside (or `name`
    /// itself being one) stops the removal with EXDEV ("mount point; not entered"): what is mounted there
    /// belongs to someone else, however it got into the tree.
    package func removeTree(_ name: FileName) throws(FileSystemError) {
        guard let status = try statusIfPresent(of: name) else { return }
        guard status.type == .directory else {
            try removeFileIfPresent(name)
            return
        }
        var removal = TreeRemoval(anchor: self)
        try removal.remove(name)
    }

    /// unlinkat without AT_REMOVEDIR, treating ENOENT as done.
    func removeFileIfPresent(_ name: FileName) throws(FileSystemError) {
        do { try removeFile(name) } catch where error.errno == .noSuchFile {}
    }
}

/// One depth-first removal below an anchor directory. Each level remembers the subdirectories still to
/// visit, so a directory is listed once however many subdirectories it has.
private struct TreeRemoval {
    struct Level {
        var name: FileName
        /// nil when closed to stay under the descriptor limit; reopened by name from the nearest open ancestor.
        var handle: DirectoryHandle?
        /// Subdirectories still to remove; nil until the level has been listed.
        var pending: [FileName]?
        /// Times this level was listed: a directory that keeps refilling is reported, not looped on.
        var listings = 0
    }

    let anchor: DirectoryHandle
    var levels: [Level] = []

    init(anchor: DirectoryHandle) { self.anchor = anchor }

    mutating func remove(_ name: FileName) throws(FileSystemError) {
        levels = [Level(name: name, handle: try TreeRemoval.open(name, in: anchor))]
        while !levels.isEmpty {
            let depth = levels.count - 1
            let directory = try handle(at: depth)
            if levels[depth].pending == nil {
                levels[depth].listings += 1
                levels[depth].pending = try clearFiles(in: directory)
            }
            if let next = levels[depth].pending?.popLast() {
                let child: DirectoryHandle
                do {
                    child = try TreeRemoval.open(next, in: directory)
                } catch where [.tooManySymbolicLinks, .notDirectory].contains(error.errno) {
                    // Replaced by a non-directory since the listing: remove it as one, never enter it.
                    try directory.removeFileIfPresent(next)
                    continue
                } catch where error.errno == .noSuchFile {
                    continue
                }
                levels.append(Level(name: next, handle: child))
                closeOldHandles()
                continue
            }
            let finished = levels.removeLast()
            let parent = levels.isEmpty ? anchor : try handle(at: levels.count - 1)
            do {
                try parent.removeDirectory(finished.name)
            } catch where error.errno == .noSuchFile {
            } catch where error.errno == .directoryNotEmpty && finished.listings < 8 {
                // Something appeared while we worked: list it again.
                levels.append(Level(name: finished.name, handle: finished.handle, pending: nil, listings: finished.listings))
            }
        }
    }

    /// Opens a subdirectory; openDirectory refuses a mount point (EXDEV), said here in plain words.
    private static func open(_ name: FileName, in parent: DirectoryHandle) throws(FileSystemError) -> DirectoryHandle {
        do { return try parent.openDirectory(name) } catch where error.errno == .crossDevice {
            throw FileSystemError(.mountPoint, path: error.path, errno: .crossDevice)
        }
    }

    /// Unlinks every non-directory in `directory` and returns the names of its subdirectories.
    private func clearFiles(in directory: DirectoryHandle) throws(FileSystemError) -> [FileName] {
        var subdirectories: [FileName] = []
        for entry in try directory.entries() {
            var type = entry.type
            if type == nil {
                guard let status = try directory.statusIfPresent(of: entry.name) else { continue }
                type = status.type
            }
            if type == .directory {
                subdirectories.append(entry.name)
            } else {
                try directory.removeFileIfPresent(entry.name)
            }
        }
        return subdirectories
    }

    /// The handle of level `depth`, reopening closed levels one component at a time (never following a symlink).
    private mutating func handle(at depth: Int) throws(FileSystemError) -> DirectoryHandle {
        if let h = levels[depth].handle { return h }
        var start = depth
        while start >= 0 && levels[start].handle == nil { start -= 1 }
        var current = start >= 0 ? levels[start].handle! : anchor
        for i in (start + 1)...depth {
            current = try TreeRemoval.open(levels[i].name, in: current)
            levels[i].handle = current
        }
        closeOldHandles()
        return current
    }

    /// Keeps at most `treeRemovalOpenLimit` descriptors: the deepest levels stay open, the shallow ones close.
    private mutating func closeOldHandles() {
        let open = levels.indices.filter { levels[$0].handle != nil }
        guard open.count > DirectoryHandle.treeRemovalOpenLimit else { return }
        for i in open.prefix(open.count - DirectoryHandle.treeRemovalOpenLimit) { levels[i].handle = nil }
    }
}
