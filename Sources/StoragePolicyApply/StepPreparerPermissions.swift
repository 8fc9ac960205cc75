// Apply's half of layout `mode:` / `owner:` / `group:`: a set-perms step changes a directory only when it is the
// one judged. Created by this run (its mkdir made it), or the very directory the plan recorded (dev and ino),
// reached without following a symlink and checked on the descriptor that is then changed.

@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyPlan

extension StepPreparer {
    func preparePermissions(_ action: Action, set: Permissions) throws(FileSystemError) -> Preparation {
        let path = action.path
        if path.isRoot { return .skip("the root's own mode and owner are never changed") }
        guard let status = try directories.statusIfPresent(path) else { return .skip("vanished since the plan") }
        guard status.type == .directory else {
            return .skip("a \(status.type.rawValue) is where the layout directory must be; its mode and owner are never changed (a symlink is never followed)")
        }
        // The descriptor the change is made on, fstat-ed: what is checked is what is changed.
        let opened = try directories.directory(path).status()
        guard opened.device == status.device, opened.inode == status.inode else { return .skip("changed while it was opened; not touched") }
        if planned.contains(path) {
            // Made by this transaction's mkdir: its undo removes it, so there is nothing to record to put back.
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
        let previous = Permissions(mode: set.mode.map { _ in opened.permissions }, owner: set.owner.map { _ in opened.userID },
                                   group: set.group.map { _ in opened.groupID })
        return .changes([(.permissions(path: path, set: set, previous: previous), opened.identity)], destination: nil)
    }
}
