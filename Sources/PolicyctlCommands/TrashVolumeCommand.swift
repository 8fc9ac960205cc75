// `policyctl trash FILE` where FILE is on another volume than the trash folder (a mount inside the root): the
// engine never crosses a mount, and a copy across volumes is not a move, so the item goes into that volume's
// own trash as the FreeDesktop specification says ($topdir/.Trash/$uid, else $topdir/.Trash-$uid), in a
// transaction rooted at the volume's top folder (its lock and journal in $topdir/.policyctl, where
// `policyctl recover --root $topdir` finds them). Volumes are told apart by the mount table.
import StoragePolicy

extension TrashCommand {
    /// `paths` on the trash folder's volume, and per other volume (its top folder, absolute) the paths under it,
    /// relative to that top. An item that is itself a mount point stays with the rest (the move refuses it).
    static func byVolume(_ paths: [RelativePath], folder: RelativePath, rootPath: String,
                         mountPoints: [String]) -> (same: [RelativePath], others: [(top: String, paths: [RelativePath])]) {
        let base = rootPath.hasSuffix("/") ? rootPath : rootPath + "/"
        /// The deepest mount point strictly inside the root holding `relative` (strictly below it when `below`).
        func top(of relative: RelativePath, below: Bool) -> String? {
            let absolute = base + relative.string
            return mountPoints.filter { m in
                m.hasPrefix(base) && m.count > base.count && (absolute.hasPrefix(m + "/") || (!below && absolute == m))
            }.max { $0.count < $1.count }
        }
        let folderTop = folder.isRoot ? nil : top(of: folder, below: false)
        var same: [RelativePath] = []
        var others: [String: [RelativePath]] = [:]
        var order: [String] = []
        for path in paths {
            guard path.isValidUTF8, let t = top(of: path, below: true), t != folderTop,
                  let inside = RelativePath(String((base + path.string).dropFirst(t.count + 1))) else {
                same.append(path)
                continue
            }
            if others[t] == nil { order.append(t) }
            others[t, default: []].append(inside)
        }
        return (same, order.map { ($0, others[$0]!) })
    }

    /// Trashes each group into its volume's trash; true when anything was skipped.
    func trashOnOtherVolumes(_ groups: [(top: String, paths: [RelativePath])], policyName: String) throws -> Bool {
        var skipped = false
        for (top, paths) in groups {
            if stateDir != nil {
                // One --state-dir holds one root's journal: another root's transactions do not go into it.
                for p in paths {
                    Terminal.out("skipped trash \(p.escaped) on the volume mounted at \(PrintableText.escapingControls(top)): with --state-dir its move cannot be journaled "
                        + "there; run policyctl trash --root \(PrintableText.escapingControls(top)) --trash-dir .Trash-\(system_geteuid()) \(p.escaped)")
                }
                skipped = true
                continue
            }
            let printer = ApplyEventPrinter(log: log)
            let picked: (folder: RelativePath, note: String?)
            do { picked = try StorageEngine.volumeTrashFolder(top: top) } catch { throw try failure(error, printer) }
            if let note = picked.note { Terminal.err("note: \(PrintableText.escapingControls(top + "/" + note))") }
            Terminal.err("note: \(paths.count == 1 ? paths[0].escaped : "\(paths.count) items") on the volume mounted at \(PrintableText.escapingControls(top)): "
                + "into its trash \(PrintableText.escapingControls(top))/\(picked.folder.escaped), not copied across volumes")
            let session = StorageEngine.Session(root: top, stateDirectory: nil, waitForLock: !noWait)
            let report: ApplyReport
            do {
                report = try StorageEngine.trash(paths, into: picked.folder, layout: .freedesktop, policy: policyName,
                                                 policyPath: policyPath, session: session, events: printer.render)
            } catch {
                throw try failure(error, printer)
            }
            if !report.skipped.isEmpty { skipped = true }
        }
        return skipped
    }
}
