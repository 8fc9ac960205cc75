// The check a whole-tree delete makes of the tree before and after it is staged: nothing in it may be newer
// than the plan or be a mount point. Walked depth first through a DescriptorStack (each folder opened once from
// its parent), so the check is linear in the tree's depth however deep a co-tenant made it, and stops at the
// run's deadline inside the walk instead of after it.

@_spi(Layers) import StoragePolicyFileSystem

extension StepVerifier {
    /// A whole-tree delete keeps the tree (so the entry and every folder above it) when anything in it was
    /// modified or changed after the plan: its mtime or its ctime is later. The ctime catches what keeps an old
    /// mtime: a file overwritten by `cp -p`, `rsync -a` or `tar x`, whose new size or content moved its ctime.
    /// It also keeps a tree holding a mount point (deleting would cross into another filesystem), and one whose
    /// folder was swapped for another while it was walked. Past the deadline it throws `.pastDeadline`.
    func newerEntry(inDirectory top: DirectoryHandle, at path: RelativePath) throws(FileSystemError) -> String? {
        var stack = DescriptorStack(anchor: top)
        // The subdirectories still to check of each level: [0] the top's, [n] those of the stack's level n-1.
        var pending: [[FileName]] = []
        switch try scan(top, &stack, at: path) {
        case .newer(let reason): return reason
        case .subdirectories(let names): pending.append(names)
        }
        while let deepest = pending.indices.last {
            if let deadline = options.deadline, ContinuousClock.now >= deadline {
                throw FileSystemError(.pastDeadline, path: path.appending(stack.relativePath), errno: .timedOut)
            }
            // A level with nothing left is left without reopening it: a chain never climbs back up.
            guard let next = pending[deepest].popLast() else {
                pending.removeLast()
                if !stack.isEmpty { stack.pop() }
                continue
            }
            let directory: DirectoryHandle
            do {
                directory = try stack.push(next)
            } catch where DirectoryCache.meansAbsent(error.errno) {
                continue
            } catch where DescriptorStack.isReplacement(error) {
                return "changed while being checked (\(error.path.escaped) was replaced by another folder); kept"
            }
            switch try scan(directory, &stack, at: path) {
            case .newer(let reason): return reason
            case .subdirectories(let names): pending.append(names)
            }
        }
        return nil
    }

    private enum Scan {
        case newer(String)
        case subdirectories([FileName])
    }

    /// One folder of the tree: why it keeps the tree, or its subdirectories.
    private func scan(_ directory: DirectoryHandle, _ stack: inout DescriptorStack, at path: RelativePath) throws(FileSystemError) -> Scan {
        var subdirectories: [FileName] = []
        for entry in try directory.entries() {
            guard let status = try directory.statusIfPresent(of: entry.name) else { continue }
            // Built only when it is reported: a deep tree's paths are long.
            func inner() -> String { path.appending(stack.relativePath).appending(entry.name).escaped }
            if !status.isOnSameMount(as: rootStatus) {
                return .newer("holds a mount point (\(inner())); never crossed")
            }
            if let planTimeNs, status.modificationTimeNs > planTimeNs {
                return .newer("holds \(inner()), modified since the plan; kept")
            }
            if let planTimeNs, status.changeTimeNs > planTimeNs {
                return .newer("holds \(inner()), changed since the plan (new ctime); kept")
            }
            if status.type == .directory { subdirectories.append(entry.name) }
        }
        return .subdirectories(subdirectories)
    }
}
