// One change a transaction is about to make, as written to the journal before it is made, and read back
// by recovery. Holds everything its undo needs; never anything that would require following a path string.

@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyPlan

/// The primitive changes every action is built from. Each one can be undone by looking at the tree.
/// The cases of more than two words are boxed (`indirect`): a run keeps every intent until it ends (for a
/// rollback), and the stage, rename and unlink of nearly every step then take 16 bytes instead of 56.
package enum Change: Sendable, Equatable {
    /// Rename `path` into the transaction's staging folder as `name` (how deletes start).
    case stage(path: RelativePath, name: FileName)
    /// Rename `from` to `to`, never replacing anything.
    case rename(from: RelativePath, to: RelativePath)
    /// Create the directory.
    case mkdir(path: RelativePath)
    /// Set (`value`) or remove (nil) an extended attribute; `previous` is what was there (nil: absent).
    indirect case setxattr(path: RelativePath, attribute: String, value: [UInt8]?, previous: [UInt8]?)
    /// Create a small file: write `temp` in the same directory, fsync, rename it to `path` (no-replace).
    indirect case create(path: RelativePath, temp: FileName, contents: [UInt8])
    /// Delete a non-directory entry of `type` by `unlinkat`, rolled forward: never undone. Recovery finishes it
    /// when the entry at `path` still has the recorded identity and type (see Docs/journal.md, "Roll-forward").
    case unlink(path: RelativePath, type: FileType)
    /// Set a directory's atime and mtime back to what they were before this run removed entries from it
    /// (DirectoryTimes); `previous…` are the times the removals left, which rollback puts back.
    indirect case times(path: RelativePath, accessNs: Int64, modificationNs: Int64, previousAccessNs: Int64, previousModificationNs: Int64)
    /// Set a layout directory's or (`fix: true`) an existing layout file's mode, owner and group (each nil: left
    /// alone) on its own descriptor (a file's: LayoutFileAccess). `previous` is what it had, which rollback puts
    /// back; nil for a directory this transaction creates (its mkdir's undo removes it, so there is nothing to restore).
    indirect case permissions(path: RelativePath, set: Permissions, previous: Permissions?)
    /// Create a layout file (`type: file`): `temp` made with O_CREAT|O_EXCL|O_NOFOLLOW, written, given `set`'s
    /// owner and mode on its descriptor, fsynced, then renamed to `path` without replacing anything.
    indirect case layoutFile(path: RelativePath, temp: FileName, contents: [UInt8], set: Permissions)
    /// Create a layout symlink (`type: symlink`) pointing at `target` (symlinkat: never replaces anything).
    case symlink(path: RelativePath, target: [UInt8])
    /// A delete held back: rename `path` (an entry of `type`) into this transaction's quarantine at `slot`, never
    /// replacing anything. `parent` is the folder it leaves (identity, mode, owner): undo puts it back only into
    /// that folder, or one it recreates as recorded. Rolled back like `stage` (Docs/journal.md, "Quarantine").
    indirect case quarantine(path: RelativePath, slot: QuarantineSlot, type: FileType, parent: FolderRecord?, bytes: Int64)
    /// Undo of a quarantined delete: rename the entry at `slot` of transaction `slot.transaction`'s quarantine
    /// (whose folder is `folder`) back to `to`, never replacing anything. Rolled back by moving it back to `slot`.
    indirect case unquarantine(slot: QuarantineSlot, folder: FolderIdentity, to: RelativePath)
    /// Empty a quarantine window for good: remove `until` of transaction `transaction`'s quarantine folder
    /// (`folder`) with everything in it. Rolled forward, like `unlink`: recovery finishes it.
    indirect case purge(transaction: String, until: String, folder: FolderIdentity)

    package var name: String { literalName.description }

    /// The name as a literal: the journal writes it without a String.
    var literalName: StaticString {
        switch self {
        case .stage: "stage"
        case .rename: "rename"
        case .mkdir: "mkdir"
        case .setxattr: "setxattr"
        case .create: "create"
        case .unlink: "unlink"
        case .times: "times"
        case .permissions: "permissions"
        case .layoutFile: "layout-file"
        case .symlink: "symlink"
        case .quarantine: "quarantine"
        case .unquarantine: "unquarantine"
        case .purge: "purge"
        }
    }

    /// The path this change acts on (for a rename, its source).
    package var path: RelativePath {
        switch self {
        case .stage(let p, _), .rename(let p, _), .mkdir(let p), .setxattr(let p, _, _, _), .create(let p, _, _), .unlink(let p, _),
             .times(let p, _, _, _, _), .permissions(let p, _, _), .layoutFile(let p, _, _, _), .symlink(let p, _),
             .quarantine(let p, _, _, _, _), .unquarantine(_, _, let p): p
        // A purge acts on engine state only: no path of the tree.
        case .purge: .root
        }
    }
}

/// A folder as a quarantine intent records the one its entry left: identity, mode and owner.
package struct FolderRecord: Sendable, Equatable {
    package var identity: FolderIdentity
    package var mode: UInt32
    package var owner: UInt32
    package var group: UInt32

    package init(identity: FolderIdentity, mode: UInt32, owner: UInt32, group: UInt32) {
        self.identity = identity; self.mode = mode; self.owner = owner; self.group = group
    }

    init(_ status: FileStatus) {
        self.init(identity: FolderIdentity(device: status.device, inode: status.inode), mode: status.permissions,
                  owner: status.userID, group: status.groupID)
    }

    /// `[dev, ino, mode, uid, gid]`, as the record's `parent` holds it.
    var numbers: [UInt64] { [identity.device, identity.inode, UInt64(mode), UInt64(owner), UInt64(group)] }

    init?(numbers: [UInt64]?) {
        guard let n = numbers, n.count == 5, n[2] <= 0o7777, n[3] <= UInt64(UInt32.max), n[4] <= UInt64(UInt32.max) else { return nil }
        self.init(identity: FolderIdentity(device: n[0], inode: n[1]), mode: UInt32(n[2]), owner: UInt32(n[3]), group: UInt32(n[4]))
    }
}

/// A directory's permission bits, owner and group; nil fields are not set (or not recorded).
package struct Permissions: Sendable, Equatable {
    package var mode: UInt32?
    package var owner: UInt32?
    package var group: UInt32?

    package init(mode: UInt32?, owner: UInt32?, group: UInt32?) { self.mode = mode; self.owner = owner; self.group = group }

    /// What `status` has of what this names.
    func matches(_ status: FileStatus) -> Bool {
        (mode ?? status.permissions) == status.permissions && (owner ?? status.userID) == status.userID
            && (group ?? status.groupID) == status.groupID
    }
}

package struct Intent: Sendable, Equatable {
    /// 1-based, in the order the changes are made; undo goes in reverse.
    var op: Int
    /// Index of the step (plan action) this change belongs to.
    package var action: Int
    package var change: Change
    /// The target as it was when the intent was written: undo only touches an entry with this dev and ino.
    var identity: EntryIdentity?

    package func encode(into w: inout JSONWriter) {
        // A file delete's record, written once per delete: its known keys and its change's name as a few joined
        // literals (ten keys one by one were half of writing it). The same bytes as the fields below write
        // (JournalLiteralNameTests).
        if case .unlink(let path, let type) = change, let identity {
            w.fields(#""op":"#)
            w.integer(op)
            w.literal(#","action":"#)
            w.integer(action)
            w.literal(#","change":"unlink""#)
            w.path("path", path)
            w.literal(#","entryType":""#)
            w.literal(type.literalName)
            w.literal(#"","dev":"#)
            w.integer(identity.device)
            w.literal(#","ino":"#)
            w.integer(identity.inode)
            w.literal(#","size":"#)
            w.integer(identity.size)
            w.literal(#","mtimeNs":"#)
            w.integer(identity.modificationTimeNs)
            return
        }
        // A held delete's record, once per delete as well: the same joined literals (the same bytes as the fields
        // below would write).
        if case .quarantine(let path, let slot, let type, let parent, let bytes) = change, let identity {
            w.fields(#""op":"#)
            w.integer(op)
            w.literal(#","action":"#)
            w.integer(action)
            w.literal(#","change":"quarantine""#)
            w.path("path", path)
            w.literal(#","bytes":"#)
            w.integer(bytes)
            w.literal(#","stage":""#)
            slot.name.bytes.withUnsafeBufferPointer { if let b = $0.baseAddress { w.bytes(b, $0.count) } }
            w.literal(#"","until":""#)
            var until = slot.until
            until.withUTF8 { if let b = $0.baseAddress { w.bytes(b, $0.count) } }
            w.literal(#"","entryType":""#)
            w.literal(type.literalName)
            w.byte(0x22)
            if let parent {
                w.literal(#","parent":["#)
                w.integer(parent.identity.device)
                w.byte(0x2C)
                w.integer(parent.identity.inode)
                w.byte(0x2C)
                w.integer(parent.mode)
                w.byte(0x2C)
                w.integer(parent.owner)
                w.byte(0x2C)
                w.integer(parent.group)
                w.byte(0x5D)
            }
            w.literal(#","dev":"#)
            w.integer(identity.device)
            w.literal(#","ino":"#)
            w.integer(identity.inode)
            w.literal(#","size":"#)
            w.integer(identity.size)
            w.literal(#","mtimeNs":"#)
            w.integer(identity.modificationTimeNs)
            return
        }
        w.int("op", op)
        w.int("action", action)
        w.literalString("change", change.literalName)
        switch change {
        case .stage(let path, let name):
            w.path("path", path)
            w.path("stage", RelativePath([name]))
        case .rename(let from, let to):
            w.path("path", from)
            w.path("to", to)
        case .mkdir(let path):
            w.path("path", path)
        case .setxattr(let path, let attribute, let value, let previous):
            w.path("path", path)
            w.string("attr", attribute)
            w.blob("value", value)
            w.blob("previous", previous)
        case .create(let path, let temp, let contents):
            w.path("path", path)
            w.path("temp", RelativePath([temp]))
            w.blob("contents", contents)
        case .unlink(let path, let type):
            w.path("path", path)
            w.literalString("entryType", type.literalName)
        case .times(let path, let atime, let mtime, let previousAtime, let previousMtime):
            w.path("path", path)
            w.int("atimeNs", atime)
            w.int("setMtimeNs", mtime)
            w.int("previousAtimeNs", previousAtime)
            w.int("previousMtimeNs", previousMtime)
        case .permissions(let path, let set, let previous):
            w.path("path", path)
            if let m = set.mode { w.int("setMode", m) }
            if let u = set.owner { w.int("setUid", u) }
            if let g = set.group { w.int("setGid", g) }
            if let m = previous?.mode { w.int("previousMode", m) }
            if let u = previous?.owner { w.int("previousUid", u) }
            if let g = previous?.group { w.int("previousGid", g) }
        case .layoutFile(let path, let temp, let contents, let set):
            w.path("path", path)
            w.path("temp", RelativePath([temp]))
            w.blob("contents", contents)
            if let m = set.mode { w.int("setMode", m) }
            if let u = set.owner { w.int("setUid", u) }
            if let g = set.group { w.int("setGid", g) }
        case .symlink(let path, let target):
            w.path("path", path)
            w.blob("target", target)
        case .quarantine(let path, let slot, let type, let parent, let bytes):
            w.path("path", path)
            w.int("bytes", bytes)
            w.path("stage", RelativePath([slot.name]))
            w.string("until", slot.until)
            w.literalString("entryType", type.literalName)
            if let parent {
                w.key("parent")
                w.byte(0x5B)
                for (i, n) in parent.numbers.enumerated() {
                    if i > 0 { w.byte(0x2C) }
                    w.integer(n)
                }
                w.byte(0x5D)
            }
        case .unquarantine(let slot, let folder, let to):
            w.path("path", to)
            w.string("quarantine", slot.transaction)
            w.string("until", slot.until)
            w.path("stage", RelativePath([slot.name]))
            w.int("quarantineDev", folder.device)
            w.int("quarantineIno", folder.inode)
        case .purge(let transaction, let until, let folder):
            w.string("quarantine", transaction)
            w.string("until", until)
            w.int("quarantineDev", folder.device)
            w.int("quarantineIno", folder.inode)
        }
        if let identity {
            w.int("dev", identity.device)
            w.int("ino", identity.inode)
            w.int("size", identity.size)
            w.int("mtimeNs", identity.modificationTimeNs)
        }
    }

    /// Why recovery must not replay this intent read from the journal; nil when its undo only restores what
    /// the engine itself writes. A journal is trusted only once its owner and mode are checked: this is the
    /// second line, so that even a record that got past that can never set a privileged attribute, move an
    /// entry into or out of engine state, or unlink a file the engine did not create.
    package var refusal: String? {
        let path = change.path
        if let first = path.components.first, Markers.isEngineState(first.bytes) {
            return "\(change.name) of \(path.escaped), inside the engine's own state"
        }
        switch change {
        case .stage(let path, let name):
            if path.isRoot { return "stage of the root" }
            // Staged names are the transaction's sequence numbers, nothing else.
            if name.bytes.isEmpty || !name.bytes.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) { return "stage name \(name.escaped) is not one the engine makes" }
        case .rename(let from, let to):
            if from.isRoot || to.isRoot || from == to { return "rename between \(from.escaped) and \(to.escaped)" }
            if let first = to.components.first, Markers.isEngineState(first.bytes) { return "rename to \(to.escaped), inside the engine's own state" }
            // Only an entry whose identity the intent recorded is ever moved back.
            if identity == nil { return "rename of \(from.escaped) without the identity of what was moved" }
        case .mkdir(let path):
            if path.isRoot { return "mkdir of the root" }
        case .setxattr(_, let attribute, _, _):
            if !Intent.isEngineAttribute(attribute) { return "attribute \(attribute) is not one the engine sets" }
        case .create(let path, let temp, _):
            guard let last = path.lastComponent else { return "create of the root" }
            if last != Markers.cacheTagName && !last.bytes.reversed().starts(with: Array(".trashinfo".utf8).reversed()) {
                return "create of \(path.escaped), not a file the engine writes"
            }
            if !Intent.isTemporaryName(temp) { return "temporary name \(temp.escaped) is not one the engine makes" }
        case .unlink(let path, let type):
            // Only a non-directory entry whose full identity was recorded is ever finished: recovery unlinks
            // nothing else, so a forged record cannot name a directory, the root, or an entry it does not know.
            if path.isRoot { return "unlink of the root" }
            if type == .directory || type == .unknown { return "unlink of \(path.escaped), a \(type.rawValue)" }
            if identity == nil { return "unlink of \(path.escaped) without the identity of what it deletes" }
        case .times(let path, _, _, _, _):
            // Only a directory whose identity was recorded has its times set back.
            if identity == nil { return "times of \(path.escaped) without the identity of the directory" }
        case .permissions(let path, _, let previous):
            // Only a directory or file whose identity was recorded is ever changed back, and never to setuid bits:
            // a forged record cannot make anything executable as its owner.
            if path.isRoot { return "permissions of the root" }
            if previous != nil && identity == nil { return "permissions of \(path.escaped) without the identity of the directory" }
            if let mode = previous?.mode, mode & 0o4000 != 0 { return "permissions of \(path.escaped) back to setuid mode \(Action.octal(mode))" }
        case .layoutFile(let path, let temp, let contents, _):
            // Its undo removes only a regular file of one link holding exactly these bytes (what it wrote).
            if path.isRoot { return "layout-file of the root" }
            if contents.count > 64 * 1024 { return "layout-file of \(path.escaped) larger than a layout file can be" }
            if !Intent.isTemporaryName(temp) { return "temporary name \(temp.escaped) is not one the engine makes" }
        case .symlink(let path, let target):
            // Its undo removes only a symlink this euid owns pointing exactly at `target`.
            if path.isRoot { return "symlink of the root" }
            if target.isEmpty { return "symlink of \(path.escaped) to nothing" }
        case .quarantine(let path, let slot, _, _, _):
            // Only an entry whose identity was recorded is ever moved back, out of a slot the engine names.
            if path.isRoot { return "quarantine of the root" }
            if let why = Intent.slotProblem(slot) { return why }
            if identity == nil { return "quarantine of \(path.escaped) without the identity of what was moved" }
        case .unquarantine(let slot, _, let to):
            if to.isRoot { return "unquarantine to the root" }
            if let why = Intent.slotProblem(slot) { return why }
            if identity == nil { return "unquarantine of \(to.escaped) without the identity of what was moved" }
        case .purge(let transaction, let until, _):
            if !JournalRecord.isValidTransaction(transaction) || !QuarantineSlot.isValidUntil(until) {
                return "purge of a quarantine window the engine does not name"
            }
        }
        return nil
    }

    /// Why a quarantine slot read back is not one the engine makes (a transaction id, a window end, a number).
    static func slotProblem(_ slot: QuarantineSlot) -> String? {
        if !JournalRecord.isValidTransaction(slot.transaction) { return "quarantine of a transaction id that is not a plain name" }
        if !QuarantineSlot.isValidUntil(slot.until) { return "quarantine window '\(slot.until.prefix(40))' is not one the engine names" }
        if slot.name.bytes.isEmpty || !slot.name.bytes.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
            return "quarantine name \(slot.name.escaped) is not one the engine makes"
        }
        return nil
    }

    /// The attributes the engine sets: the backup markers, the trash stamps, and `user.*` names (custom rules);
    /// never `security.*`, `trusted.*`, `system.*` or anything else a kernel gives meaning to.
    static func isEngineAttribute(_ name: String) -> Bool {
        if name == Markers.linuxBackupAttribute || name == Markers.appleBackupAttribute
            || name == Markers.trashStampAttribute || name == TrashFolder.originAttribute { return true }
        return name.hasPrefix("user.") && name.utf8.count > 5
    }

    /// `.policyctl-<transaction>-<n>.tmp`, as `Transaction.temporaryName` makes it.
    static func isTemporaryName(_ name: FileName) -> Bool {
        let text = String(decoding: name.bytes, as: UTF8.self)
        guard text.hasPrefix(".policyctl-"), text.hasSuffix(".tmp") else { return false }
        let middle = text.dropFirst(".policyctl-".count).dropLast(".tmp".count)
        guard let dash = middle.lastIndex(of: "-") else { return false }
        let number = middle[middle.index(after: dash)...]
        return JournalRecord.isValidTransaction(String(middle[..<dash])) && !number.isEmpty && number.allSatisfy(\.isASCII) && Int(number) != nil
    }

    package init(op: Int, action: Int, change: Change, identity: EntryIdentity?) {
        self.op = op; self.action = action; self.change = change; self.identity = identity
    }

    /// Reads an intent record back; nil when a field it needs is missing (a damaged record).
    package init?(_ b: RecordBody) {
        guard let op = b.op, let name = b.change else { return nil }
        self.op = op
        self.action = b.action ?? -1
        if name == "purge" {
            guard let tx = b.quarantine, let until = b.until, let dev = b.quarantineDev, let ino = b.quarantineIno else { return nil }
            change = .purge(transaction: tx, until: until, folder: FolderIdentity(device: dev, inode: ino))
            identity = nil
            return
        }
        guard let path = RecordBody.path(b.path, b.pathBase64) else { return nil }
        switch name {
        case "stage":
            guard let stage = b.stage.flatMap({ FileName($0) }) else { return nil }
            change = .stage(path: path, name: stage)
        case "rename":
            guard let to = RecordBody.path(b.to, b.toBase64) else { return nil }
            change = .rename(from: path, to: to)
        case "mkdir":
            change = .mkdir(path: path)
        case "setxattr":
            guard let attr = b.attr else { return nil }
            change = .setxattr(path: path, attribute: attr, value: RecordBody.blob(b.value, b.valueBase64),
                               previous: RecordBody.blob(b.previous, b.previousBase64))
        case "create":
            guard let temp = b.temp.flatMap({ FileName($0) }),
                  let contents = RecordBody.blob(b.contents, b.contentsBase64) else { return nil }
            change = .create(path: path, temp: temp, contents: contents)
        case "unlink":
            guard let type = b.entryType.flatMap({ FileType(rawValue: $0) }) else { return nil }
            change = .unlink(path: path, type: type)
        case "times":
            guard let atime = b.atimeNs, let mtime = b.setMtimeNs, let previousAtime = b.previousAtimeNs,
                  let previousMtime = b.previousMtimeNs else { return nil }
            change = .times(path: path, accessNs: atime, modificationNs: mtime, previousAccessNs: previousAtime,
                            previousModificationNs: previousMtime)
        case "layout-file":
            guard let temp = b.temp.flatMap({ FileName($0) }),
                  let contents = RecordBody.blob(b.contents, b.contentsBase64) else { return nil }
            if b.setMode.map({ $0 > 0o7777 }) == true { return nil }
            change = .layoutFile(path: path, temp: temp, contents: contents,
                                 set: Permissions(mode: b.setMode, owner: b.setUid, group: b.setGid))
        case "symlink":
            guard let target = RecordBody.blob(b.target, b.targetBase64) else { return nil }
            change = .symlink(path: path, target: target)
        case "quarantine":
            guard let stage = b.stage.flatMap({ FileName($0) }), let until = b.until,
                  let type = b.entryType.flatMap({ FileType(rawValue: $0) }) else { return nil }
            if b.parent != nil && FolderRecord(numbers: b.parent) == nil { return nil }
            change = .quarantine(path: path, slot: QuarantineSlot(transaction: b.tx, until: until, name: stage), type: type,
                                 parent: FolderRecord(numbers: b.parent), bytes: b.bytes ?? 0)
        case "unquarantine":
            guard let stage = b.stage.flatMap({ FileName($0) }), let until = b.until, let tx = b.quarantine,
                  let dev = b.quarantineDev, let ino = b.quarantineIno else { return nil }
            change = .unquarantine(slot: QuarantineSlot(transaction: tx, until: until, name: stage),
                                   folder: FolderIdentity(device: dev, inode: ino), to: path)
        case "permissions":
            let set = Permissions(mode: b.setMode, owner: b.setUid, group: b.setGid)
            let recorded = Permissions(mode: b.previousMode, owner: b.previousUid, group: b.previousGid)
            let previous: Permissions? = recorded == Permissions(mode: nil, owner: nil, group: nil) ? nil : recorded
            if set.mode.map({ $0 > 0o7777 }) == true || previous?.mode.map({ $0 > 0o7777 }) == true { return nil }
            change = .permissions(path: path, set: set, previous: previous)
        default:
            return nil
        }
        if let dev = b.dev, let ino = b.ino {
            identity = EntryIdentity(device: dev, inode: ino, size: b.size ?? 0, modificationTimeNs: b.mtimeNs ?? 0)
        } else {
            identity = nil
        }
    }
}
