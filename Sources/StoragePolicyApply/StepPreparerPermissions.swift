// Apply's half of layout `mode:` / `owner:` / `group:`: a set-perms step changes a directory or a layout file only
// when it is the one judged. A directory: created by this run (its mkdir made it), or the very directory the plan
// recorded (dev and ino), reached without following a symlink and checked on the descriptor that is then changed.
// A file (`type: file` with `fix: true`): always one that exists in the plan, opened relative to its folder's
// descriptor with O_NOFOLLOW|O_NONBLOCK|O_NOCTTY and no O_CREAT, fstat-ed, and changed on that descriptor only when
// it is a regular file with the plan's dev and ino and one link (LayoutFileAccess.open).

@_spi(Layers) import StoragePolicyEvaluation
@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyPlan

extension StepPreparer {
    func preparePermissions(_ action: Action, set: Permissions) throws(FileSystemError) -> Preparation {
        let path = action.path
        if path.isRoot { return .skip("the root's own mode and owner are never changed") }
        if action.type == .regular { return try prepareFilePermissions(action, set: set) }
        guard let status = try directories.statusIfPresent(path) else { return .skip("vanished since the plan") }
        guard status.type == .directory else {
            return .skip("a \(status.type.rawValue) is where the layout directory must be; its mode and owner are never changed (a symlink is never followed)")
        }
        // The descriptor the change is made on, fstat-ed: what is checked is what is changed.
        let opened = try directories.directory(path).status()
        guard opened.device == status.device, opened.inode == status.inode else { return .skip("changed while it was opened; not touched") }
        if planned.contains(path) {
            // Made by this transaction's mkdir: only the very directory its mkdirat made (the dev and ino the
            // transaction read from the descriptor it opened right after, owned by the euid) is changed. A
            // co-tenant who can write the folder may rename it away and put its own there in between.
            guard let made = ledger.transaction.madeDirectories[path] else {
                return .skip("not the directory this run made (replaced right after its mkdir); its mode and owner are left alone")
            }
            guard made.device == opened.device, made.inode == opened.inode, opened.userID == system_geteuid() else {
                return .skip("replaced since this run made it (now uid \(opened.userID)'s, another inode); its mode and owner are left alone")
            }
            // Its undo removes it, so there is nothing to record to put back.
            return set.matches(opened) ? .unchanged("mode and owner already as the layout says")
                : .changes([(.permissions(path: path, set: set, previous: nil), opened.identity)], destination: nil)
        }
        guard let identity = action.identity else {
            return .skip("appeared since the plan and not created by this run; its mode and owner are left alone")
        }
        guard identity.device == opened.device, identity.inode == opened.inode else {
            return .skip("replaced since the plan; its mode and owner are left alone")
        }
        if set.matches(opened) { return .unchanged("mode and owner already as the layout says") }
        if let why = ownerRefusal(action, set: set, opened) { return .skip(why) }
        return .changes([(.permissions(path: path, set: set, previous: set.previous(opened)), opened.identity)], destination: nil)
    }

    /// The plan's rule again, on the descriptor apply changes (Preflight.fixRefusal): an existing entry is
    /// changed only when root, the euid or the owner the layout entry names owns it, and a setuid or setgid bit
    /// goes only on a file root owns. Undo steps (rule `undo`) put back what a transaction changed and are
    /// judged by Undo; this holds the layout's own steps, saved plans included.
    private func ownerRefusal(_ action: Action, set: Permissions, _ opened: FileStatus) -> String? {
        guard action.rule == "layout" else { return nil }
        return Preflight.fixRefusal(owner: opened.userID, type: opened.type, currentMode: opened.permissions, mode: set.mode,
                                    namedOwner: options.layoutOwners[action.path], euid: system_geteuid())
    }

    /// A layout file's repair (`fix: true`): only the file the plan judged, opened without following anything.
    private func prepareFilePermissions(_ action: Action, set: Permissions) throws(FileSystemError) -> Preparation {
        guard let identity = action.identity, let name = action.path.lastComponent else {
            return .skip("the plan records no identity for the layout file; its mode and owner are left alone")
        }
        switch try LayoutFileAccess.open(name, in: directories.directory(containing: action.path), expecting: identity) {
        case .refused(let why):
            return .skip(why)
        case .opened(_, let opened):
            if set.matches(opened) { return .unchanged("mode and owner already as the layout says") }
            if let why = ownerRefusal(action, set: set, opened) { return .skip(why) }
            return .changes([(.permissions(path: action.path, set: set, previous: set.previous(opened)), opened.identity)],
                            destination: nil)
        }
    }
}

extension Permissions {
    /// What `status` has of each value this sets: what a rollback or undo puts back.
    func previous(_ status: FileStatus) -> Permissions {
        Permissions(mode: mode.map { _ in status.permissions }, owner: owner.map { _ in status.userID },
                    group: group.map { _ in status.groupID })
    }
}

/// A layout file opened so its mode and owner can be changed on its own descriptor (fchmod, fchown). The preparer,
/// the change itself, rollback and recovery all open it this way, each checking again: a co-tenant who can write the
/// folder may swap the name for a symlink, a FIFO, a device or another file at any moment, and none of those is ever
/// followed, opened blocking or changed.
enum LayoutFileAccess {
    enum Opening {
        case opened(FileDescriptor, FileStatus)
        case refused(String)
    }

    /// Opens `name` in `folder` when it is a regular file with `identity`'s dev and ino and one link: looked at
    /// first with fstatat(AT_SYMLINK_NOFOLLOW) (so a FIFO or device is never even opened), then opened O_RDONLY with
    /// O_NOFOLLOW|O_NONBLOCK|O_NOCTTY and no O_CREAT, then fstat-ed: what is checked is the descriptor changed.
    static func open(_ name: FileName, in folder: DirectoryHandle, expecting identity: EntryIdentity) throws(FileSystemError) -> Opening {
        guard let before = try folder.statusIfPresent(of: name) else { return .refused("vanished since the plan") }
        if let why = problem(before, identity) { return .refused(why) }
        let file: FileDescriptor
        do {
            file = try folder.openFile(name, options: [.readOnly, .nonBlocking, .noControllingTerminal])
        } catch where error.errno == .tooManySymbolicLinks {
            return .refused("became a symlink while it was opened; never followed, its mode and owner are left alone")
        } catch where error.errno == .noSuchFile {
            return .refused("vanished since the plan")
        }
        let opened = try file.status()
        if let why = problem(opened, identity) { return .refused("changed while it was opened: \(why)") }
        return .opened(file, opened)
    }

    private static func problem(_ status: FileStatus, _ identity: EntryIdentity) -> String? {
        guard status.type == .regular else {
            return "a \(status.type.rawValue) is where the layout file must be; never opened or followed, its mode and owner are never changed"
        }
        guard status.device == identity.device, status.inode == identity.inode else {
            return "replaced since the plan (another inode); its mode and owner are left alone"
        }
        guard status.linkCount == 1 else {
            return "has \(status.linkCount) hard links; its mode and owner are never changed (every name's file would change)"
        }
        return nil
    }

    /// Sets `set` on the file: owner first (a chown clears setuid and setgid bits), then the mode, exactly as asked.
    static func apply(_ set: Permissions, to file: FileDescriptor) throws(FileSystemError) {
        if set.owner != nil || set.group != nil { try file.setOwner(set.owner, group: set.group) }
        if let mode = set.mode { try file.setPermissions(mode) }
    }
}
