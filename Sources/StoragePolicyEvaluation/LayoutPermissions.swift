// Layout `mode:`, `owner:` and `group:`, as tmpfiles' `d` lines give them. A directory the plan creates gets a
// set-perms action right after its mkdir; one that exists and drifted gets one only with `fix: true` (recording
// its identity, so apply changes exactly the directory judged here). Without `fix` the drift is a violation and
// nothing is ever chmodded or chowned that the run did not create.

import StoragePolicyFileSystem
import StoragePolicyModel
import StoragePolicyPlan

extension Preflight {
    /// The set-perms action for a layout directory this plan creates: everything the entry names.
    mutating func planPermissions(ofCreated entry: LayoutEntry) {
        guard entry.hasAttributes else { return }
        actions.append(Action(kind: .setPermissions(mode: entry.mode, owner: entry.owner?.id, group: entry.group?.id),
                              path: entry.path, rule: "layout", reason: "mode and owner of a new layout directory",
                              type: .directory))
    }

    /// Compares an existing layout directory with what the entry names: a repair with `fix: true`, else a
    /// violation naming each difference and the fix.
    mutating func checkPermissions(of entry: LayoutEntry, status: FileStatus) {
        guard entry.hasAttributes else { return }
        let drift = Self.drift(of: entry, status: status)
        guard !drift.isEmpty else { return }
        if entry.fix {
            let mode = entry.mode.flatMap { $0 == status.permissions ? nil : $0 }
            let owner = entry.owner.flatMap { $0.id == status.userID ? nil : $0.id }
            let group = entry.group.flatMap { $0.id == status.groupID ? nil : $0.id }
            actions.append(Action(kind: .setPermissions(mode: mode, owner: owner, group: group), path: entry.path,
                                  rule: "layout", reason: "layout directory drifted: " + drift.joined(separator: ", "),
                                  identity: status.identity, type: .directory))
        } else {
            violations.append(Violation(rule: "layout", path: entry.path,
                                        message: "layout directory '\(entry.path.escaped)' drifted: \(drift.joined(separator: ", ")); add 'fix: true' to the entry to repair it, or chmod/chown it by hand",
                                        severity: .error))
        }
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
