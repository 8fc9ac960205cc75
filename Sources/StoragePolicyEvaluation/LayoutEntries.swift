// Layout entries beyond "this directory exists": `mode:`, `owner:` and `group:` as tmpfiles' `d` lines give them, and
// `type: file` / `type: symlink` (`f`, `L`). A directory the plan creates gets a set-perms action right after its
// mkdir; a directory or file that exists and drifted gets one only with `fix: true` (recording its identity, so apply
// changes exactly the entry judged here). Without `fix` the drift is a violation and nothing the run did not create
// is ever chmodded or chowned. A missing file or symlink is created (mkfile, symlink); a wrong type, target or
// content is reported and never replaced. A symlink has no mode or owner here (the loader refuses them).

@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyModel
@_spi(Layers) import StoragePolicyPlan

extension Preflight {
    /// The set-perms action for a layout directory this plan creates: everything the entry names.
    mutating func planPermissions(ofCreated entry: LayoutEntry) {
        guard entry.hasAttributes else { return }
        actions.append(Action(kind: .setPermissions(mode: entry.mode, owner: entry.owner?.id, group: entry.group?.id),
                              path: entry.path, rule: "layout", reason: "mode and owner of a new \(entry.noun)",
                              type: .directory))
    }

    /// Compares an existing layout directory with what the entry names: a repair with `fix: true`, else a
    /// violation naming each difference and the fix.
    mutating func checkPermissions(of entry: LayoutEntry, status: FileStatus) {
        guard entry.hasAttributes else { return }
        let drift = Self.drift(of: entry, status: status)
        guard !drift.isEmpty else { return }
        if entry.fix, let why = Self.fixRefusal(of: entry, status: status, euid: system_geteuid()) {
            // Root never raises an entry it did not make: reported with its owner and the fix, left alone.
            violations.append(Violation(rule: "layout", path: entry.path,
                                        message: "\(entry.noun) '\(entry.path.escaped)' drifted: \(drift.joined(separator: ", ")); not fixed: \(why)",
                                        severity: .error))
            return
        }
        if entry.fix {
            // A file's identity is recorded as a directory's is: apply changes only the regular file of one link
            // judged here, opened without following anything (StepPreparerPermissions.swift, LayoutFile).
            let mode = entry.mode.flatMap { $0 == status.permissions ? nil : $0 }
            let owner = entry.owner.flatMap { $0.id == status.userID ? nil : $0.id }
            let group = entry.group.flatMap { $0.id == status.groupID ? nil : $0.id }
            actions.append(Action(kind: .setPermissions(mode: mode, owner: owner, group: group), path: entry.path,
                                  rule: "layout", reason: "\(entry.noun) drifted: " + drift.joined(separator: ", "),
                                  identity: status.identity, type: status.type))
        } else {
            violations.append(Violation(rule: "layout", path: entry.path,
                                        message: "\(entry.noun) '\(entry.path.escaped)' drifted: \(drift.joined(separator: ", ")); add 'fix: true' to the entry to repair it, or chmod/chown it by hand",
                                        severity: .error))
        }
    }

    /// A `type: file` or `type: symlink` entry: created when missing (its folders too), a wrong type, target or
    /// content reported and never replaced, a file's mode and owner compared as a directory's are.
    mutating func checkLayoutEntry(_ entry: LayoutEntry) {
        guard let name = entry.path.lastComponent else { return }
        let noun = entry.noun
        func violation(_ at: RelativePath, _ message: String) {
            violations.append(Violation(rule: "layout", path: at, message: message, severity: .error))
        }
        switch presence(of: entry.path.parent) {
        case .missing(let existing):
            planDirectories(entry.path.parent, from: existing, rule: "layout", reason: "folder of a \(noun) that is missing")
            planCreation(entry)
        case .blocked(let at, let type):
            let what = type == .unknown ? "a mount point" : "a \(type.rawValue)"
            violation(at, "\(what) is where the folder of \(noun) '\(entry.path.escaped)' needs a directory; it is never replaced")
        case .unreadable(let error):
            violation(entry.path, "cannot check \(noun): \(error.errno)")
        case .directory(let folder, let folderStatus):
            let found: FileStatus?
            do { found = try folder.statusIfPresent(of: name) } catch {
                violation(entry.path, "cannot check \(noun): \(error.errno)")
                return
            }
            guard let status = found else { planCreation(entry); return }
            let wanted: FileType = entry.type == .file ? .regular : .symlink
            guard status.type == wanted, status.isOnSameMount(as: folderStatus) else {
                let what = status.type == wanted ? "a mount point" : "a \(status.type.rawValue)"
                violation(entry.path, "\(what) is where \(noun) '\(entry.path.escaped)' must be; it is never replaced")
                return
            }
            if entry.type == .symlink {
                let target = try? folder.linkTarget(of: name)
                if let want = entry.target, target != want {
                    violation(entry.path, "\(noun) '\(entry.path.escaped)' points to '\(target.map(PathEscaping.escape) ?? "?")', not '\(PathEscaping.escape(want))'; it is never replaced (remove it and apply makes it again)")
                }
                return
            }
            if !entry.content.isEmpty, (try? folder.readFile(name, limit: entry.content.count + 1)) != entry.content {
                violation(entry.path, "\(noun) '\(entry.path.escaped)' holds other content than the policy's; it is never rewritten (remove it and apply makes it again)")
                // Never "fixed" by a chown or chmod: that would adopt bytes someone else wrote as the entry's.
                let drift = Self.drift(of: entry, status: status)
                if entry.fix && !drift.isEmpty {
                    violation(entry.path, "\(noun) '\(entry.path.escaped)' drifted: \(drift.joined(separator: ", ")); not fixed while its content is not the policy's (a chown or chmod would adopt another's bytes): remove it and apply makes it again")
                    return
                }
            }
            if status.linkCount > 1, !Self.drift(of: entry, status: status).isEmpty {
                // A mode or owner set through one name would change every other name's file too.
                violation(entry.path, "\(noun) '\(entry.path.escaped)' has \(status.linkCount) hard links; its mode and owner are never changed: \(Self.drift(of: entry, status: status).joined(separator: ", "))")
                return
            }
            checkPermissions(of: entry, status: status)
        }
    }

    /// The action that makes a missing layout file (with its mode and owner, set before it has its name) or symlink.
    mutating func planCreation(_ entry: LayoutEntry) {
        let kind: Action.Kind = entry.type == .file
            ? .mkfile(content: entry.content, mode: entry.mode, owner: entry.owner?.id, group: entry.group?.id)
            : .symlink(target: entry.target ?? [])
        actions.append(Action(kind: kind, path: entry.path, rule: "layout", reason: "\(entry.noun) is missing",
                              type: entry.type == .file ? .regular : .symlink))
    }

    /// Why `fix: true` must leave an existing entry alone, or nil when it may change it. Only an entry owned by
    /// root, by `euid` (the user running policyctl) or by the owner the entry names is changed: anything else was
    /// made by another user, and a chown or chmod by root would adopt it (a co-tenant's script made setuid root).
    /// The setuid and setgid bits go only on a file root already owns (or one this run creates, which is never
    /// judged here): a directory's setgid (group inheritance) raises no program and is left to the owner rule.
    static func fixRefusal(of entry: LayoutEntry, status: FileStatus, euid: UInt32) -> String? {
        fixRefusal(owner: status.userID, type: status.type, currentMode: status.permissions, mode: entry.mode,
                   namedOwner: entry.owner?.id, euid: euid)
    }

    /// The rule of `fixRefusal(of:status:euid:)` on plain values; apply's preparer asks it again on the descriptor
    /// it changes (StepPreparerPermissions), with the mode the step sets.
    package static func fixRefusal(owner: UInt32, type: FileType, currentMode: UInt32, mode: UInt32?, namedOwner: UInt32?,
                                   euid: UInt32) -> String? {
        guard owner == 0 || owner == euid || owner == namedOwner else {
            let whose = namedOwner.map { "the owner the entry names (uid \($0))" } ?? "an owner named by the entry"
            return "it is owned by uid \(owner), not by root, uid \(euid) that runs policyctl or \(whose): fix: true never changes another user's entry; inspect it, then chown it by hand or remove it so apply makes it"
        }
        if type != .directory, let mode, mode & 0o6000 != 0, mode & 0o6000 != currentMode & 0o6000, owner != 0 {
            return "the setuid and setgid bits (mode \(Action.octal(mode))) are set only on a file root already owns or this run creates, and uid \(owner) owns it: inspect it, then chown and chmod it by hand or remove it so apply makes it"
        }
        return nil
    }

    /// `mode 0755, not 0750` and the like, for each of mode, owner and group that differs.
    static func drift(of entry: LayoutEntry, status: FileStatus) -> [String] {
        var out: [String] = []
        if let mode = entry.mode, mode != status.permissions {
            out.append("mode \(Action.octal(status.permissions)), not \(Action.octal(mode))")
        }
        if let owner = entry.owner, owner.id != status.userID { out.append("owner uid \(status.userID), not \(owner.text("uid"))") }
        if let group = entry.group, group.id != status.groupID { out.append("group gid \(status.groupID), not \(group.text("gid"))") }
        return out
    }
}
