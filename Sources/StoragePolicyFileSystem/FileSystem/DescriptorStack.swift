// The folders from an anchor down to the one a subtree walk is in, each opened from its parent (openat with
// O_NOFOLLOW|O_DIRECTORY, never across a mount), so a walk costs one open per folder instead of reopening every
// folder from the top: linear in depth, where reopening from the top is quadratic (a co-tenant builds a
// 20,000-deep chain in seconds). Holding every level open would pass RLIMIT_NOFILE (1024 by default), so at
// most `limit` stay open: the deepest quarter, and checkpoints spaced evenly above it. A closed level is
// reopened by name from the nearest open ancestor (never through ".."), and must be the folder that was closed
// (same device and inode): a folder swapped meanwhile is refused, never entered. Reopening keeps new
// checkpoints in the span it crosses, so climbing back up costs about one more open per level, not one per
// level above it. Explicit arrays throughout: no recursion, whatever the depth.

/// A walk's path below an anchor directory, as a bounded stack of directory descriptors.
package struct DescriptorStack {
    package struct Level {
        package var name: FileName
        /// nil while closed to stay under `limit`.
        package var handle: DirectoryHandle?
        /// Its device and inode, noted when it was first closed: what a reopened handle must show.
        package var identity: (device: UInt64, inode: UInt64)?
    }

    /// How many descriptors one walk holds at most (apply's directory cache holds up to 256 more).
    static let defaultLimit = 128

    package let anchor: DirectoryHandle
    package let limit: Int
    package private(set) var levels: [Level] = []
    /// Indices of the levels now open, ascending.
    private var openLevels: [Int] = []
    /// Levels above the deepest quarter stay open only at multiples of this; doubled when too many are open.
    private var spacing = 1
    /// openat calls made, reopenings included: tests assert a walk stays linear in depth.
    private(set) var opens = 0

    /// Folders are opened O_NOATIME where permitted (a look that must change nothing, as the in-use check's).
    package let leavingAtime: Bool

    package init(anchor: DirectoryHandle, limit: Int = DescriptorStack.defaultLimit, leavingAtime: Bool = false) {
        self.anchor = anchor
        self.limit = max(8, limit)
        self.leavingAtime = leavingAtime
    }

    private func open(_ name: FileName, in parent: DirectoryHandle) throws(FileSystemError) -> DirectoryHandle {
        leavingAtime ? try parent.openDirectoryLeavingAtime(name) : try parent.openDirectory(name)
    }

    /// The error a reopened level that is no longer the folder it was throws.
    package static func isReplacement(_ error: FileSystemError) -> Bool {
        if case .refused = error.operation, error.errno == .stale { return true }
        return false
    }

    package var depth: Int { levels.count }
    /// Descriptors held now (never more than `limit`, give or take the one just opened).
    var openCount: Int { openLevels.count }
    package var isEmpty: Bool { levels.isEmpty }
    private var window: Int { limit / 4 }

    /// The names from the anchor to the deepest level: the walk's relative path, built only when it is reported.
    package var relativePath: RelativePath {
        var bytes: [UInt8] = []
        for level in levels {
            if !bytes.isEmpty { bytes.append(0x2F) }
            bytes += level.name.bytes
        }
        return RelativePath(unchecked: bytes)
    }

    /// The deepest level's directory (the anchor when the stack is empty), reopened if it was closed.
    package mutating func top() throws(FileSystemError) -> DirectoryHandle {
        levels.isEmpty ? anchor : try handle(at: levels.count - 1)
    }

    /// Opens `name` inside the deepest level and makes it the deepest. Refuses a symlink (ELOOP/ENOTDIR) and a
    /// mount point (EXDEV), as `openDirectory` does.
    @discardableResult
    package mutating func push(_ name: FileName) throws(FileSystemError) -> DirectoryHandle {
        let parent = try top()
        opens += 1
        let handle = try open(name, in: parent)
        levels.append(Level(name: name, handle: handle))
        openLevels.append(levels.count - 1)
        try closeSurplus()
        return handle
    }

    /// Leaves the deepest level (its descriptor closes with its handle).
    package mutating func pop() {
        let last = levels.count - 1
        if levels[last].handle != nil { openLevels.removeLast() }
        levels.removeLast()
    }

    /// The handle of level `index`, reopening closed levels one component at a time from the nearest open one.
    package mutating func handle(at index: Int) throws(FileSystemError) -> DirectoryHandle {
        if let handle = levels[index].handle { return handle }
        var start = index - 1
        while start >= 0 && levels[start].handle == nil { start -= 1 }
        let span = index - start
        // Half the free descriptors go to checkpoints spread over the span (the target always among them): the
        // climb that follows reopens only between two of them, with the other half free for its own.
        let free = max(0, limit - openLevels.count)
        let kept = max(1, min(span, free / 2))
        let step = (span + kept - 1) / kept
        var current = start >= 0 ? levels[start].handle! : anchor
        var reopened: [Int] = []
        for i in (start + 1)...index {
            opens += 1
            let handle = try open(levels[i].name, in: current)
            let status = try handle.status()
            if let identity = levels[i].identity, identity.device != status.device || identity.inode != status.inode {
                throw FileSystemError(.refused("replaced while being walked (another folder has this name now); not entered"),
                                      path: handle.path, errno: .stale)
            }
            if (index - i) % step == 0 {
                levels[i].handle = handle
                reopened.append(i)
            }
            current = handle
        }
        // Every reopened level lies between `start` and the end of `open` (all deeper ones are closed).
        let insertion = openLevels.firstIndex { $0 > start } ?? openLevels.count
        openLevels.insert(contentsOf: reopened, at: insertion)
        return current
    }

    /// Keeps at most `limit` open: a level leaving the deepest quarter stays open only at a multiple of
    /// `spacing`; when that is still too many, the spacing doubles and the checkpoints off it close.
    private mutating func closeSurplus() throws(FileSystemError) {
        if openLevels.count > window {
            let leaving = openLevels.count - window - 1
            let index = openLevels[leaving]
            if index % spacing != 0 {
                try close(index)
                openLevels.remove(at: leaving)
            }
        }
        guard openLevels.count > limit else { return }
        spacing *= 2
        let checkpoints = openLevels.count - window
        var kept: [Int] = []
        kept.reserveCapacity(openLevels.count)
        for (n, index) in openLevels.enumerated() {
            if n < checkpoints && index % spacing != 0 { try close(index) } else { kept.append(index) }
        }
        openLevels = kept
    }

    /// Closes level `index`, noting its identity first so a reopening can tell it is still the same folder.
    private mutating func close(_ index: Int) throws(FileSystemError) {
        guard let handle = levels[index].handle else { return }
        if levels[index].identity == nil {
            let status = try handle.status()
            levels[index].identity = (status.device, status.inode)
        }
        levels[index].handle = nil
    }
}
