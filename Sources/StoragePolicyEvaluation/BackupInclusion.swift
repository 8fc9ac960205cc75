// Layout `backup: include`: the markers `backup: exclude` writes must not be on the directory. Apply removes them:
// the exclusion xattr (`unmark`), and a CACHEDIR.TAG that is a regular file with one link holding exactly the
// signature, or exactly what this engine writes (the signature and its comment lines) (`untag`). Anything else there (a tag with more in it, a symlink, a file with
// other hard links, which may be someone's file outside the root) is left alone and reported: never removed.

@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyPlan

package enum BackupInclusion {
    /// The two contents a removable CACHEDIR.TAG may have: the bare signature, or the engine's own tag.
    static let removable = [Array(Markers.cacheTagSignature.utf8), Array(Markers.cacheTagContents.utf8)]
    package static let longest = removable.map(\.count).max()!

    /// True when `contents` (read up to `longest + 1` bytes) is one of the removable tags.
    static func isRemovable(_ contents: [UInt8]?) -> Bool { contents.map { removable.contains($0) } ?? false }

    /// The removals a directory the layout includes needs, and findings for what is left alone.
    package static func markers(_ handle: DirectoryHandle, path: RelativePath, identity: EntryIdentity,
                        attribute: String) -> (actions: [Action], violations: [Violation]) {
        var actions: [Action] = []
        var found: [Violation] = []
        func report(_ message: String) { found.append(Violation(rule: "layout", path: path, message: message, severity: .error)) }
        if (try? handle.extendedAttribute(attribute)) != nil {
            actions.append(Action(kind: .unmark(name: attribute), path: path, rule: "layout",
                                  reason: "backup-exclusion marker \(attribute) is set, but the layout says 'backup: include'",
                                  identity: identity, type: .directory))
        }
        guard let status = (try? handle.statusIfPresent(of: Markers.cacheTagName)) ?? nil else { return (actions, found) }
        let tag = Markers.cacheTagName.escaped
        guard status.type == .regular else {
            report("\(tag) is a \(status.type.rawValue), not a file: never followed or removed; check it by hand")
            return (actions, found)
        }
        let signature = Array(Markers.cacheTagSignature.utf8)
        guard let file = try? handle.openFile(Markers.cacheTagName, options: [.readOnly, .nonBlocking]),
              let head = Preflight.readPrefix(file, count: longest + 1), head.starts(with: signature) else {
            return (actions, found)  // Not a cache tag: backup tools ignore it.
        }
        if status.linkCount > 1 {
            report("\(tag) with the cache signature is present, but the layout says 'backup: include'; it has \(status.linkCount) hard links, so it is left alone: remove it by hand")
        } else if !isRemovable(head) {
            report("\(tag) with the cache signature is present, but the layout says 'backup: include'; it holds more than the signature and is not the tag this engine writes, so it is left alone: remove it by hand")
        } else {
            actions.append(Action(kind: .untag, path: path.appending(Markers.cacheTagName), rule: "layout",
                                  reason: "\(tag) with the cache signature is present, but the layout says 'backup: include'",
                                  bytes: status.allocatedSize, identity: status.identity, type: .regular))
        }
        return (actions, found)
    }

    /// True for a staged entry undo reads as an `untag`: a CACHEDIR.TAG the size of a removable tag. (The journal
    /// does not name the action; a file deleted by another rule is unlinked, not staged, except under
    /// --all-or-nothing, where undo would write the engine's tag back for a deleted same-size CACHEDIR.TAG.)
    package static func isRemovedTag(_ path: RelativePath, _ identity: EntryIdentity?) -> Bool {
        path.lastComponent == Markers.cacheTagName && removable.contains { Int64($0.count) == identity?.size }
    }

    /// Why the CACHEDIR.TAG staged as `name` (where no one else can reach it) is not the one to remove; nil when
    /// it is: a regular file with one link holding exactly the signature.
    package static func stagedTagProblem(_ staging: DirectoryHandle, _ name: FileName) throws(FileSystemError) -> String? {
        guard let status = try staging.statusIfPresent(of: name), status.type == .regular else { return "no longer a file; kept" }
        if status.linkCount > 1 { return "has \(status.linkCount) hard links; kept" }
        let file = try staging.openFile(name, options: [.readOnly, .nonBlocking])
        return isRemovable(Preflight.readPrefix(file, count: longest + 1)) ? nil : "no longer holds exactly the signature; kept"
    }
}
