// Which trash the FreeDesktop specification gives a user on another volume: `$topdir/.Trash/$uid` when
// `$topdir/.Trash` is a real folder (not a symlink) owned by root with the sticky bit, else `$topdir/.Trash-$uid`.
// The same test discovery applies (TrashDiscoverer.sharedProblem); the folder picked is then an ordinary trash
// folder of a transaction rooted at `$topdir`, so the trash trust rule (TrashTrust, RunTrashFolders) checks it and
// a missing one is made 0700 by a journaled mkdir, as for any trash folder.

@_spi(Layers) import StoragePolicyFileSystem

package enum TrashVolume {
    /// The trash folder for `uid` relative to the volume's top `top`, and a note when a `.Trash` there was not used.
    package static func folder(top: DirectoryHandle, uid: UInt32) -> (folder: RelativePath, note: String?) {
        let shared = FileName(unchecked: Array(".Trash".utf8))
        let own = RelativePath(unchecked: Array(".Trash-\(uid)".utf8))
        guard let status = try? top.statusIfPresent(of: shared) else { return (own, nil) }
        if let problem = TrashDiscoverer.sharedProblem(status) {
            return (own, ".Trash \(problem): not used (the specification asks for a sticky folder owned by root); .Trash-\(uid) instead")
        }
        return (RelativePath(unchecked: Array(".Trash/\(uid)".utf8)), nil)
    }
}
