// Before the walk: checks on a few known directories (layout, backup markers on scopes, trash layouts).
// Opens directories one component at a time, never following a symlink; changes nothing.

@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyModel
@_spi(Layers) import StoragePolicyPlan

package struct Preflight {
    package let root: DirectoryHandle
    package let policy: Policy
    let backupMarker: (name: String, value: [UInt8])

    package var actions: [Action] = []
    package var violations: [Violation] = []
    package var notes: [String] = []
    /// Directories that do not exist now but that the plan creates (mkdir).
    package private(set) var created: Set<RelativePath> = []

    package init(root: DirectoryHandle, policy: Policy, backupMarker: (name: String, value: [UInt8])) {
        self.root = root; self.policy = policy; self.backupMarker = backupMarker
    }

    /// What a path is right now, looked at component by component from the root without following links.
    package enum Presence {
        case directory(DirectoryHandle, FileStatus)
        /// Missing from this component on: `existing` is how much of it does exist.
        case missing(existing: RelativePath)
        /// Something other than a directory is in the way at `at`.
        case blocked(at: RelativePath, type: FileType)
        case unreadable(FileSystemError)
    }

    func presence(of path: RelativePath) -> Presence {
        var handle = root
        var status: FileStatus
        do { status = try root.status() } catch { return .unreadable(error) }
        var walked = RelativePath.root
        for component in path.components {
            let next = walked.appending(component)
            do {
                guard let s = try handle.statusIfPresent(of: component) else { return .missing(existing: walked) }
                guard s.type == .directory else { return .blocked(at: next, type: s.type) }
                guard !Preflight.isMountPoint(s, parent: status) else { return .blocked(at: next, type: .unknown) }
                handle = try handle.openDirectory(component)
                status = s
            } catch {
                // Named from the root, so a report says which directory on the way could not be opened.
                var located = error
                located.path = next
                return .unreadable(located)
            }
            walked = next
        }
        return .directory(handle, status)
    }

    /// The one test for "a mount point" on the way to a scope or layout directory: the directory is on
    /// another file system than its parent. (With mount IDs, a bind mount of the same file system is caught
    /// too: switch this function, and every caller follows.)
    static func isMountPoint(_ directory: FileStatus, parent: FileStatus) -> Bool {
        !directory.isOnSameMount(as: parent)
    }

    /// Why `path` cannot be used as a directory: on the way to it, or at it, is a symlink, a file, a mount
    /// point, or something that cannot be opened. Nil when it is a directory, or missing.
    func oddity(of path: RelativePath) -> (at: RelativePath, why: String)? {
        switch presence(of: path) {
        case .directory, .missing:
            return nil
        case .blocked(let at, let type):
            switch type {
            case .unknown: return (at, "a mount point (another file system): never crossed")
            case .symlink: return (at, "a symlink: never followed")
            default: return (at, "a \(type.rawValue), not a directory")
            }
        case .unreadable(let error):
            return (error.path.isRoot ? path : error.path, "a directory that cannot be opened: \(error.errno)")
        }
    }

    /// Every rule's scope that is not a directory the walk can enter is a violation naming the path and why:
    /// the rule judged nothing there, and that must never look like "no changes". (A backup rule's own scope
    /// is checked, with its own message, by checkBackupScopes.)
    mutating func checkScopes(_ rules: [CompiledRule]) {
        for rule in rules where !rule.rule.path.isRoot {
            if case .backup = rule.rule.kind, rule.match.isEmpty { continue }
            guard let (at, why) = oddity(of: rule.rule.path) else { continue }
            let scope = rule.rule.path
            let what = at == scope ? "the scope \(scope.escaped) is \(why)" : "\(at.escaped), on the way to the scope \(scope.escaped), is \(why)"
            violations.append(Violation(rule: rule.name, path: at, message: "\(what); the rule judged nothing there",
                                        severity: rule.rule.effectiveSeverity))
        }
    }

    // MARK: Layout

    mutating func checkLayout() {
        for entry in policy.layout {
            if entry.type != .directory {
                checkLayoutEntry(entry)
                continue
            }
            switch presence(of: entry.path) {
            case .directory(let handle, let status):
                checkPermissions(of: entry, status: status)
                if entry.excludeFromBackup {
                    checkMarker(handle, path: entry.path, identity: status.identity, rule: "layout", enforce: true, severity: .error)
                }
                if entry.cacheDirectoryTag {
                    checkCacheTag(handle, path: entry.path, identity: status.identity, rule: "layout", enforce: true, severity: .error)
                }
                if entry.includeInBackup {
                    let (removals, left) = BackupInclusion.markers(handle, path: entry.path, identity: status.identity,
                                                                   attribute: backupMarker.name)
                    actions += removals
                    violations += left
                }
            case .missing(let existing):
                planDirectories(entry.path, from: existing, rule: "layout", reason: "layout directory is missing")
                planPermissions(ofCreated: entry)
                if entry.excludeFromBackup {
                    actions.append(Action(kind: .setxattr(name: backupMarker.name, value: backupMarker.value), path: entry.path,
                                          rule: "layout", reason: "backup-exclusion marker for a new layout directory", type: .directory))
                }
                if entry.cacheDirectoryTag {
                    actions.append(Action(kind: .writeTag, path: entry.path, rule: "layout",
                                          reason: "CACHEDIR.TAG for a new layout directory", type: .directory))
                }
            case .blocked(let at, let type):
                let what = type == .unknown ? "a mount point" : "a \(type.rawValue)"
                violations.append(Violation(rule: "layout", path: at,
                                            message: "\(what) is where layout directory '\(entry.path.escaped)' needs a directory; it is never replaced",
                                            severity: .error))
            case .unreadable(let error):
                violations.append(Violation(rule: "layout", path: entry.path, message: "cannot check layout directory: \(error.errno)",
                                            severity: .error))
            }
        }
    }

    /// mkdir for every missing component of `path` below `existing`, parents first.
    mutating func planDirectories(_ path: RelativePath, from existing: RelativePath, rule: String, reason: String) {
        var current = existing
        for component in path.components.dropFirst(existing.isEmpty ? 0 : existing.components.count) {
            current = current.appending(component)
            if created.insert(current).inserted {
                actions.append(Action(kind: .mkdir, path: current, rule: rule, reason: reason, type: .directory))
            }
        }
    }

    // MARK: Rule scopes

    /// Backup rules without match globs mark their scope directory itself (with globs, the selected entries
    /// instead: a marker on the scope would exclude all of it). A scope the layout is about to create is
    /// marked after it is made.
    mutating func checkBackupScopes(_ rules: [CompiledRule]) {
        for rule in rules {
            guard case .backup(let backup) = rule.rule.kind, rule.match.isEmpty else { continue }
            switch presence(of: rule.rule.path) {
            case .directory(let handle, let status):
                checkMarker(handle, path: rule.rule.path, identity: status.identity, rule: rule.name,
                            enforce: rule.enforces, severity: rule.rule.effectiveSeverity)
                if backup.cacheDirectoryTag {
                    checkCacheTag(handle, path: rule.rule.path, identity: status.identity, rule: rule.name,
                                  enforce: rule.enforces, severity: rule.rule.effectiveSeverity)
                }
            case .missing:
                if created.contains(rule.rule.path) && rule.enforces {
                    actions.append(Action(kind: .setxattr(name: backupMarker.name, value: backupMarker.value), path: rule.rule.path,
                                          rule: rule.name, reason: "backup-exclusion marker for a new directory", type: .directory))
                    if backup.cacheDirectoryTag {
                        actions.append(Action(kind: .writeTag, path: rule.rule.path, rule: rule.name,
                                              reason: "CACHEDIR.TAG for a new directory", type: .directory))
                    }
                } else {
                    notes.append("rule '\(rule.name)': \(rule.rule.path.escaped) does not exist; nothing to mark")
                }
            case .blocked(let at, let type):
                violations.append(Violation(rule: rule.name, path: at,
                                            message: "the scope is not a directory (\(type.rawValue)); cannot mark it excluded from backup",
                                            severity: rule.rule.effectiveSeverity))
            case .unreadable(let error):
                violations.append(Violation(rule: rule.name, path: rule.rule.path,
                                            message: "cannot check the backup marker: \(error.errno)", severity: rule.rule.effectiveSeverity))
            }
        }
    }

    /// The layout a trash folder uses: FreeDesktop when it holds `files/` and `info/` directories.
    package func trashLayout(of rule: Rule) -> TrashRetention.Layout {
        guard case .trash(let retention) = rule.kind else { return .app }
        if retention.layout != .automatic { return retention.layout }
        guard case .directory(let handle, _) = presence(of: rule.path) else { return .app }
        let files = try? handle.statusIfPresent(of: FileName("files")!)
        let info = try? handle.statusIfPresent(of: FileName("info")!)
        return TrashFolder.detectedLayout(filesIsDirectory: files?.type == .directory, infoIsDirectory: info?.type == .directory)
    }

    /// True when the mount holding `path` keeps atime only approximately (relatime, noatime).
    func atimeIsRelaxed(at path: RelativePath) -> Bool {
        if case .directory(let handle, _) = presence(of: path) { return handle.atimeIsRelaxed }
        return root.atimeIsRelaxed
    }

    // MARK: Markers

    private mutating func checkMarker(_ handle: DirectoryHandle, path: RelativePath, identity: EntryIdentity, rule: String,
                                      enforce: Bool, severity: Rule.Severity) {
        let current: [UInt8]?
        do { current = try handle.extendedAttribute(backupMarker.name) } catch {
            let message = error.errno == .notSupported
                ? "the file system does not support extended attributes: cannot mark it excluded from backup"
                : "cannot read the backup marker: \(error.errno)"
            violations.append(Violation(rule: rule, path: path, message: message, severity: severity))
            return
        }
        guard !ExclusionMarker.satisfies(backupMarker, current: current) else { return }
        let what = current == nil ? "missing" : "has the wrong value"
        if enforce {
            actions.append(Action(kind: .setxattr(name: backupMarker.name, value: backupMarker.value), path: path, rule: rule,
                                  reason: "backup-exclusion marker \(what)", identity: identity, type: .directory))
        } else {
            violations.append(Violation(rule: rule, path: path, message: "backup-exclusion marker \(backupMarker.name) \(what)",
                                        severity: severity))
        }
    }

    private mutating func checkCacheTag(_ handle: DirectoryHandle, path: RelativePath, identity: EntryIdentity, rule: String,
                                        enforce: Bool, severity: Rule.Severity) {
        let signature = Array(Markers.cacheTagSignature.utf8)
        var valid = false
        if let status = try? handle.statusIfPresent(of: Markers.cacheTagName), status.type == .regular,
           let file = (try? handle.openFile(Markers.cacheTagName, options: [.readOnly, .noAccessTime, .nonBlocking]))
            ?? (try? handle.openFile(Markers.cacheTagName, options: [.readOnly, .nonBlocking])) {
            valid = Preflight.readPrefix(file, count: signature.count) == signature
        }
        guard !valid else { return }
        if enforce {
            actions.append(Action(kind: .writeTag, path: path, rule: rule, reason: "CACHEDIR.TAG missing or without the signature",
                                  identity: identity, type: .directory))
        } else {
            violations.append(Violation(rule: rule, path: path, message: "CACHEDIR.TAG missing or without the signature",
                                        severity: severity))
        }
    }

    /// The first `count` bytes of an open file (fewer when it is shorter): never the whole of a large file.
    static func readPrefix(_ file: FileDescriptor, count: Int) -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let r = systemCall(.read) { out.withUnsafeMutableBytes { system_read(file.rawValue, $0.baseAddress! + filled, count - filled) } }
            switch r {
            case .success(0): return Array(out[0..<filled])
            case .success(let n): filled += n
            case .failure: return nil
            }
        }
        return out
    }
}
