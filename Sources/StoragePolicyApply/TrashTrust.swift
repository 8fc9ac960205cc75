// Trash folders are state: an item is moved into, or restored from, a trash folder (and its `files/`, `info/`
// and index) only when root or the euid owns it and no one else can write it, checked with fstat on a
// descriptor opened O_NOFOLLOW. Otherwise a co-tenant who made the folder (in a 1777 root, where it was
// missing) would be handed another user's file, or could plant the item and the record of where it goes.

@_spi(Layers) import StoragePolicyFileSystem

/// The one trust rule for the folders of a trash, and the messages that name what fails it.
package enum TrashTrust {
    /// The mode the engine gives a trash folder (and `files/`, `info/`, the index) it creates: an item moved
    /// out of its owner's private folder must not become readable to anyone else on the way.
    static let createdMode: UInt32 = 0o700

    /// What a folder of a trash is, for the checks and the messages.
    package enum Role: Equatable {
        /// The folder itself. A FreeDesktop top folder may be shared: owned by root, sticky, 1733/1777, as the
        /// trash specification allows; an app trash's items live in the folder itself, so it never may.
        case folder(sharedAllowed: Bool)
        /// `files/` or `info/` (or the app index) of a trash whose folder is trusted.
        case part
        /// `files/` or `info/` inside a shared (sticky, world-writable) top folder: the euid's own and 0700.
        case partOfShared
    }

    /// True when `status` is a shared FreeDesktop top folder: root's, sticky, writable by others.
    static func isShared(_ status: FileStatus) -> Bool {
        status.type == .directory && status.userID == 0 && status.permissions & 0o1000 != 0 && status.permissions & 0o022 != 0
    }

    /// Why the folder at `path` (found as `status`) is not trusted in `role`; nil when it is.
    package static func problem(_ status: FileStatus, at path: RelativePath, role: Role) -> String? {
        let me = system_geteuid()
        let mode = TrustRule.octal(status.permissions)
        let what = path.isRoot ? "the trash folder ." : "the trash folder \(path.escaped)"
        guard status.type == .directory else {
            return "\(what) is a \(status.type.rawValue), not a folder; never followed: \(fix(path, me))"
        }
        let owners = me == 0 ? "root" : "root or uid \(me)"
        // The folder and a part of a trusted one fail the same way; the folder's message says what is at stake.
        let stake: String
        switch role {
        case .folder(let sharedAllowed):
            if sharedAllowed && isShared(status) { return nil }
            stake = "anyone could take what is moved there, so "
        case .part:
            stake = ""
        case .partOfShared:
            if status.userID != me || status.permissions & 0o077 != 0 {
                return "\(what) is owned by uid \(status.userID) with mode \(mode) inside a shared trash folder, where it "
                    + "must be uid \(me)'s own with mode 0700: nothing is moved into or restored from it; \(fix(path, me))"
            }
            return nil
        }
        if status.userID != 0 && status.userID != me {
            return "\(what) is owned by uid \(status.userID) (mode \(mode)), not by \(owners) that runs policyctl: "
                + "another user made it, so nothing is moved into or restored from it; \(fix(path, me))"
        }
        if status.permissions & 0o022 != 0 {
            return "\(what) is writable by group or others (owner uid \(status.userID), mode \(mode)): "
                + "\(stake)nothing is moved into or restored from it; \(fix(path, me))"
        }
        return nil
    }

    /// The role of `files/` or `info/` under a top folder found as `top`.
    static func partRole(under top: FileStatus?) -> Role {
        top.map(isShared) == true ? .partOfShared : .part
    }

    private static func fix(_ path: RelativePath, _ me: UInt32) -> String {
        let name = path.isRoot ? "." : path.escaped
        return "inspect it and remove it (policyctl then creates it, mode 0700), or make it trusted "
            + "(chown \(me) \(name) && chmod go-w \(name)), then run again"
    }

    /// Why a file in a trusted `info/` folder or index (a `.trashinfo`) may not be read as a record of where
    /// an item came from; nil when root or the euid wrote it and no one else can change it.
    static func recordProblem(_ status: FileStatus) -> String? {
        let me = system_geteuid()
        guard status.type == .regular, status.linkCount == 1 else { return "not a regular file with one link" }
        guard status.userID == 0 || status.userID == me else { return "owned by uid \(status.userID)" }
        guard status.permissions & 0o022 == 0 else { return "writable by group or others" }
        return nil
    }

    /// Why a restore may not put an item owned by `itemOwner` into the folder found as `folder`: a folder
    /// owned by neither root, the euid nor the item's owner is someone else's, whatever a record says.
    static func destinationProblem(_ folder: FileStatus, at path: RelativePath, itemOwner: UInt32) -> String? {
        let me = system_geteuid()
        if folder.userID == 0 || folder.userID == me || folder.userID == itemOwner { return nil }
        let name = path.isRoot ? "." : path.escaped
        return "its destination folder \(name) is owned by uid \(folder.userID), neither root, uid \(me) nor the item's owner "
            + "(uid \(itemOwner)); not restored into another user's folder: move it back by hand if that is right"
    }
}
