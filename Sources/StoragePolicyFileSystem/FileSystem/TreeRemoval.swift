// Removes a directory tree through directory descriptors (unlinkat entry by entry), iteratively, so deep
// trees need neither recursion nor one descriptor per level, and cost time linear in their depth. Never follows a symlink: one is unlinked, not entered.
// Never enters another mount (bind mounts included): a tree holding a mount point fails with EXDEV and keeps it.

extension DirectoryHandle {
    /// Removes `name` and, when it is a directory, everything beneath it. An entry that is already gone is
    /// not an error, so an interrupted removal can simply be run again. A mount point inside (or `name`
    /// itself being one) stops the removal with EXDEV ("mount point; not entered"): what is mounted there
    /// belongs to someone else, however it got into the tree.
    /// Past `deadline` it stops with `.pastDeadline` (ETIMEDOUT), leaving the rest for a later run.
    package func removeTree(_ name: FileName, deadline: ContinuousClock.Instant? = nil) throws(FileSystemError) {
        guard let status = try statusIfPresent(of: name) else { return }
        guard status.type == .directory else {
            try removeFileIfPresent(name)
            return
        }
        var removal = TreeRemoval(anchor: self, deadline: deadline)
        try removal.remove(name)
    }

    /// unlinkat without AT_REMOVEDIR, treating ENOENT as done.
    package func removeFileIfPresent(_ name: FileName) throws(FileSystemError) {
        do { try removeFile(name) } catch where error.errno == .noSuchFile {}
    }
}

/// One depth-first removal below an anchor directory. Each level remembers the subdirectories still to
/// visit, so a directory is listed once however many subdirectories it has; the levels' descriptors are a
/// DescriptorStack, so any depth costs about two opens per folder and a bounded number of descriptors.
private struct TreeRemoval {
    struct Level {
        /// Subdirectories still to remove; nil until the level has been listed.
        var pending: [FileName]?
        /// Times this level was listed: a directory that keeps refilling is reported, not looped on.
        var listings = 0
    }

    var stack: DescriptorStack
    var levels: [Level] = []
    let deadline: ContinuousClock.Instant?

    init(anchor: DirectoryHandle, deadline: ContinuousClock.Instant?) {
        stack = DescriptorStack(anchor: anchor)
        self.deadline = deadline
    }

    mutating func remove(_ name: FileName) throws(FileSystemError) {
        try enter(name, listings: 0)
        while !levels.isEmpty {
            if let deadline, ContinuousClock.now >= deadline {
                throw FileSystemError(.pastDeadline, path: try stack.top().path, errno: .timedOut)
            }
            let depth = levels.count - 1
            let directory = try stack.top()
            if levels[depth].pending == nil {
                levels[depth].listings += 1
                levels[depth].pending = try clearFiles(in: directory)
            }
            if let next = levels[depth].pending?.popLast() {
                do {
                    try enter(next, listings: 0)
                } catch where [.tooManySymbolicLinks, .notDirectory].contains(error.errno) {
                    // Replaced by a non-directory since the listing: remove it as one, never enter it.
                    try directory.removeFileIfPresent(next)
                } catch where error.errno == .noSuchFile {
                }
                continue
            }
            let finished = stack.levels[depth].name
            let listings = levels[depth].listings
            stack.pop()
            levels.removeLast()
            let parent = try stack.top()
            do {
                try parent.removeDirectory(finished)
            } catch where error.errno == .noSuchFile {
            } catch where error.errno == .directoryNotEmpty && listings < 8 {
                // Something appeared while we worked: list it again.
                do { try enter(finished, listings: listings) } catch where error.errno == .noSuchFile {}
            }
        }
    }

    /// Opens a subdirectory of the deepest level; a mount point (EXDEV from openDirectory) is said in plain words.
    private mutating func enter(_ name: FileName, listings: Int) throws(FileSystemError) {
        do { try stack.push(name) } catch where error.errno == .crossDevice {
            throw FileSystemError(.mountPoint, path: error.path, errno: .crossDevice)
        }
        levels.append(Level(pending: nil, listings: listings))
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
}
