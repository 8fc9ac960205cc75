// The FreeDesktop `directorysizes` cache of a trash (format in TrashFolderSizes.swift), read and kept current.
// It is an input another user may have planted, so it is read only from a trash folder that passes the trash
// trust rule (TrashTrust, as restore checks it), and only when the file itself is one root or the euid wrote,
// with one link, that no one else can change; a shared (sticky, world-writable) top folder's cache is neither read
// nor written. An entry counts only while the item's `.trashinfo` has the mtime it records (a stale entry is
// ignored, whatever size it claims). Written after a transaction commits, atomically (a temp file, fsync, rename,
// fsync of the folder): it is an optimisation, so failing to write it is never an error of the run, and a crash
// between the commit and the rewrite leaves entries the next rewrite drops (their items are gone).

@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyPlan

package enum TrashSizesCache {
    /// The trusted cache of the FreeDesktop trash `trash`, or nil (not FreeDesktop, untrusted, shared, absent,
    /// unreadable or not a trusted file: the sizes are then measured).
    package static func read(_ trash: TrashFolder, root: DirectoryHandle) -> [FileName: TrashDirectorySize]? {
        guard let folder = trustedFolder(trash, root: root),
              let status = try? folder.statusIfPresent(of: TrashFolder.directorySizesName),
              TrashTrust.recordProblem(status) == nil,
              let bytes = try? folder.readFile(TrashFolder.directorySizesName, limit: TrashFolder.directorySizesLimit) else { return nil }
        return TrashFolder.parseDirectorySizes(bytes)
    }

    /// The mtime in whole seconds of `info/NAME.trashinfo`, what a cache entry for `name` must match.
    static func infoSeconds(_ name: FileName, info: DirectoryHandle?) -> Int64? {
        guard let info, let status = try? info.statusIfPresent(of: TrashFolder.infoName(for: name)) else { return nil }
        let ns = status.modificationTimeNs
        return ns >= 0 ? ns / 1_000_000_000 : (ns - 999_999_999) / 1_000_000_000
    }

    /// The size in bytes of the directory item `name` of `files`: the cache's when its entry is current, else
    /// measured (the sum of its regular files).
    static func directorySize(_ name: FileName, files: DirectoryHandle, info: DirectoryHandle?,
                              cache: [FileName: TrashDirectorySize]?) -> Int64? {
        if let entry = cache?[name], let seconds = infoSeconds(name, info: info), entry.infoModificationSeconds == seconds {
            return entry.size
        }
        return try? TrashFolder.measureDirectory(name, in: files)
    }

    /// Rewrites the cache of `trash` after a transaction: entries for `removed` names, for items no longer
    /// directories in `files/` and stale ones dropped; `added` directory items measured and entered. Creates the
    /// file only to enter something; does nothing for a trash that is not FreeDesktop or fails the trust rule.
    /// Never throws: the cache is an optimisation (a failure leaves the old file, or none).
    package static func update(_ trash: TrashFolder, root: DirectoryHandle, adding added: [FileName] = [], removing removed: [FileName] = []) {
        guard let folder = trustedFolder(trash, root: root) else { return }
        let existing = read(trash, root: root)
        if existing == nil && added.isEmpty { return }
        guard let files = try? folder.openDirectory(TrashFolder.filesName) else { return }
        let info = try? folder.openDirectory(TrashFolder.infoName)
        var entries = existing ?? [:]
        for name in removed { entries[name] = nil }
        for (name, entry) in entries {
            let status = try? files.statusIfPresent(of: name)
            if status?.type != .directory || infoSeconds(name, info: info) != entry.infoModificationSeconds { entries[name] = nil }
        }
        for name in added {
            guard let status = try? files.statusIfPresent(of: name), status.type == .directory,
                  let seconds = infoSeconds(name, info: info),
                  let size = try? TrashFolder.measureDirectory(name, in: files) else { continue }
            entries[name] = TrashDirectorySize(size: size, infoModificationSeconds: seconds)
        }
        if existing == entries { return }
        write(TrashFolder.renderDirectorySizes(entries), in: folder)
    }

    /// After an apply: each FreeDesktop trash (`T/files/NAME`) a done delete of a directory item emptied has the
    /// entries of those items dropped from its cache (nothing is read where no directory item was deleted).
    package static func afterDeletes(_ report: ApplyReport, root: DirectoryHandle) {
        guard report.counts.total > 0 else { return }
        var removed: [RelativePath: [FileName]] = [:]
        let outcomes = report.outcomes
        // Fields read in place, no Item made: the run's file deletes (most of its steps) are passed over cheaply.
        for i in 0..<outcomes.count where outcomes[action: i].type == .directory && outcomes[action: i].isDelete && outcomes.isDone(i) {
            let path = outcomes[action: i].path
            guard let name = path.lastComponent, path.parent.lastComponent == TrashFolder.filesName else { continue }
            removed[path.parent.parent, default: []].append(name)
        }
        for (folder, names) in removed {
            TrashSizesCache.update(TrashFolder(path: folder, layout: .freedesktop), root: root, removing: names)
        }
    }

    /// The trash folder opened, when `trash` is FreeDesktop, passes the trust rule and is not a shared top folder.
    private static func trustedFolder(_ trash: TrashFolder, root: DirectoryHandle) -> DirectoryHandle? {
        guard trash.layout == .freedesktop, Applier.trashTrustProblem(trash, root: root) == nil,
              let folder = try? root.openDirectory(at: trash.path), let status = try? folder.status(),
              status.type == .directory, !TrashTrust.isShared(status) else { return nil }
        return folder
    }

    /// `contents` as the folder's `directorysizes`: a temp file (0600, O_EXCL, never through a symlink),
    /// fsync, rename over the old file, fsync of the folder. A leftover temp file from a crash is replaced.
    private static func write(_ contents: [UInt8], in folder: DirectoryHandle) {
        let temp = FileName(unchecked: Array(".directorysizes.policyctl.tmp".utf8))
        func attempt() throws(FileSystemError) {
            let file = try folder.openFile(temp, options: [.writeOnly, .create, .exclusive], permissions: 0o600)
            try file.write(contents)
            try file.sync()
            try folder.rename(temp, to: TrashFolder.directorySizesName, noReplace: false)
            try folder.sync()
        }
        do { try attempt() } catch where error.errno == .fileExists {
            try? folder.removeFile(temp)
            do { try attempt() } catch { try? folder.removeFile(temp) }
        } catch {
            try? folder.removeFile(temp)
        }
    }
}
