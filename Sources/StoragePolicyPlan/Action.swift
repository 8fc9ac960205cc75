// One change a plan proposes: what, on which root-relative path, by which rule, why, and the identity
// of the target when planned so apply can refuse to touch anything that changed since.

@_spi(Layers) import StoragePolicyFileSystem

/// One change a plan proposes: what, on which root-relative path, by which rule, and why.
public struct Action: Sendable, Hashable {
    /// The kinds of change apply knows how to make, journal and undo.
    public enum Kind: Sendable, Hashable {
        /// Remove the entry (a directory with everything in it).
        case delete
        /// Rename to another root-relative path, never replacing what is there.
        case rename(to: RelativePath)
        /// Move into the policy's trash folder and record when (forbid in enforce mode).
        case trash(to: RelativePath)
        /// Create the directory.
        case mkdir
        /// Set an extended attribute. Boxed (`indirect`): its two-field payload would otherwise make every
        /// action of a million-entry plan 24 bytes larger, and markers are a handful per plan.
        indirect case setxattr(name: String, value: [UInt8])
        /// Write a CACHEDIR.TAG into the directory.
        case writeTag
        /// Remove an extended attribute (layout `backup: include`: the exclusion marker). Boxed like `setxattr`,
        /// so a String payload does not widen every action.
        indirect case unmark(name: String)
        /// Remove the CACHEDIR.TAG at `path`, only while it holds exactly the signature (layout `backup: include`).
        case untag
        /// Set the permission bits, owner and group (each nil: left as it is) of a layout directory, on a
        /// descriptor of the directory itself (never through a symlink). Boxed, as `setxattr` is.
        indirect case setPermissions(mode: UInt32?, owner: UInt32?, group: UInt32?)
        /// Create the layout file (`type: file`) holding `content` with this mode, owner and group (set on the new
        /// file's descriptor before it appears under its name), never replacing anything. Boxed.
        indirect case mkfile(content: [UInt8], mode: UInt32?, owner: UInt32?, group: UInt32?)
        /// Create the layout symlink (`type: symlink`) pointing at `target`, never replacing anything. Boxed.
        indirect case symlink(target: [UInt8])

        /// The `action` string of the plan JSON.
        public var name: String {
            switch self {
            case .delete: "delete"
            case .rename: "rename"
            case .trash: "trash"
            case .mkdir: "mkdir"
            case .setxattr: "setxattr"
            case .writeTag: "write-tag"
            case .unmark: "unmark"
            case .untag: "untag"
            case .setPermissions: "set-perms"
            case .mkfile: "mkfile"
            case .symlink: "symlink"
            }
        }

        /// The kind's number, in `names`' order: for counting and keys without hashing a name.
        package var ordinal: Int {
            switch self {
            case .delete: 0
            case .rename: 1
            case .trash: 2
            case .mkdir: 3
            case .setxattr: 4
            case .writeTag: 5
            case .unmark: 6
            case .untag: 7
            case .setPermissions: 8
            case .mkfile: 9
            case .symlink: 10
            }
        }

        /// Every kind's name, by `ordinal`.
        package static let names = ["delete", "rename", "trash", "mkdir", "setxattr", "write-tag", "unmark", "untag", "set-perms", "mkfile", "symlink"]
    }

    /// What to do.
    public var kind: Kind
    /// The target, relative to the root.
    public var path: RelativePath
    /// The name of the rule (or `layout`) that wants it.
    public var rule: String
    /// Why, in a few words a person reads: `mtime 2d3h ago > 24h`.
    public var reason: String
    /// Bytes this action frees (allocated, as `du`); for a directory, everything in it.
    public var bytes: Int64
    /// The target as it was when planned; nil for things that did not exist yet (mkdir).
    public var identity: EntryIdentity?
    /// The target's type when planned.
    public var type: FileType?
    /// How many entries this action covers (a deleted directory covers its contents).
    public var entries: Int

    /// An action.
    package init(kind: Kind, path: RelativePath, rule: String, reason: String, bytes: Int64 = 0,
                identity: EntryIdentity? = nil, type: FileType? = nil, entries: Int = 1) {
        self.kind = kind; self.path = path; self.rule = rule; self.reason = reason; self.bytes = bytes
        self.identity = identity; self.type = type; self.entries = entries
    }

    /// `0750`: permission bits as plans and policies write them (four octal digits).
    package static func octal(_ bits: UInt32) -> String {
        let digits = String(bits, radix: 8)
        return String(repeating: "0", count: Swift.max(0, 4 - digits.count)) + digits
    }

    /// True for deletions.
    public var isDelete: Bool { if case .delete = kind { true } else { false } }
}

extension Action: Codable {
    package enum CodingKeys: String, CodingKey {
        case action, path, pathBase64, to, toBase64, name, value, valueBase64, rule, reason, bytes, identity, type, entries
        case mode, owner, group, content, contentBase64, target, targetBase64
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(kind.name, forKey: .action)
        try c.encode(path.string, forKey: .path)
        if !path.isValidUTF8 { try c.encode(path.base64, forKey: .pathBase64) }
        switch kind {
        case .rename(let to), .trash(let to):
            try c.encode(to.string, forKey: .to)
            if !to.isValidUTF8 { try c.encode(to.base64, forKey: .toBase64) }
        case .unmark(let name):
            try c.encode(name, forKey: .name)
        case .setPermissions(let mode, let owner, let group), .mkfile(_, let mode, let owner, let group):
            try c.encodeIfPresent(mode.map(Action.octal), forKey: .mode)
            try c.encodeIfPresent(owner, forKey: .owner)
            try c.encodeIfPresent(group, forKey: .group)
        default: break
        }
        switch kind {
        case .mkfile(let content, _, _, _):
            if let text = String(validating: content, as: UTF8.self) { try c.encode(text, forKey: .content) }
            else { try c.encode(Base64.encode(content), forKey: .contentBase64) }
        case .symlink(let target):
            if let text = String(validating: target, as: UTF8.self) { try c.encode(text, forKey: .target) }
            else { try c.encode(Base64.encode(target), forKey: .targetBase64) }
        case .setxattr(let name, let value):
            try c.encode(name, forKey: .name)
            if let text = String(validating: value, as: UTF8.self) {
                try c.encode(text, forKey: .value)
            } else {
                try c.encode(Base64.encode(value), forKey: .valueBase64)
            }
        default: break
        }
        try c.encode(rule, forKey: .rule)
        try c.encode(reason, forKey: .reason)
        try c.encode(bytes, forKey: .bytes)
        try c.encodeIfPresent(identity, forKey: .identity)
        try c.encodeIfPresent(type, forKey: .type)
        if entries != 1 { try c.encode(entries, forKey: .entries) }
    }

    /// `mode` (octal text), `owner` and `group` of a set-perms or mkfile action.
    private static func permissions(_ c: KeyedDecodingContainer<CodingKeys>) throws -> (UInt32?, UInt32?, UInt32?) {
        let text = try c.decodeIfPresent(String.self, forKey: .mode)
        let mode = try text.map { text in
            guard let bits = UInt32(text, radix: 8), bits <= 0o7777 else {
                throw DecodingError.dataCorruptedError(forKey: .mode, in: c, debugDescription: "mode '\(text)' is not octal permission bits")
            }
            return bits
        }
        return (mode, try c.decodeIfPresent(UInt32.self, forKey: .owner), try c.decodeIfPresent(UInt32.self, forKey: .group))
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        func path(_ key: CodingKeys, _ base64Key: CodingKeys) throws -> RelativePath {
            try RelativePath.decode(from: c, key: key, base64Key: base64Key)
        }
        let name = try c.decode(String.self, forKey: .action)
        switch name {
        case "delete": kind = .delete
        case "rename": kind = .rename(to: try path(.to, .toBase64))
        case "trash": kind = .trash(to: try path(.to, .toBase64))
        case "mkdir": kind = .mkdir
        case "write-tag": kind = .writeTag
        case "unmark": kind = .unmark(name: try c.decode(String.self, forKey: .name))
        case "untag": kind = .untag
        case "mkfile", "symlink":
            let (key, base64Key): (CodingKeys, CodingKeys) = name == "mkfile" ? (.content, .contentBase64) : (.target, .targetBase64)
            let bytes: [UInt8]
            if let b64 = try c.decodeIfPresent(String.self, forKey: base64Key), let v = Base64.decode(b64) { bytes = v }
            else { bytes = Array(try c.decode(String.self, forKey: key).utf8) }
            if name == "mkfile" {
                let (mode, owner, group) = try Action.permissions(c)
                kind = .mkfile(content: bytes, mode: mode, owner: owner, group: group)
            } else {
                kind = .symlink(target: bytes)
            }
        case "set-perms":
            let (mode, owner, group) = try Action.permissions(c)
            kind = .setPermissions(mode: mode, owner: owner, group: group)
        case "setxattr":
            let value: [UInt8]
            if let b64 = try c.decodeIfPresent(String.self, forKey: .valueBase64), let v = Base64.decode(b64) {
                value = v
            } else {
                value = Array(try c.decode(String.self, forKey: .value).utf8)
            }
            kind = .setxattr(name: try c.decode(String.self, forKey: .name), value: value)
        default:
            throw DecodingError.dataCorruptedError(forKey: .action, in: c, debugDescription: "unknown action '\(name)'")
        }
        self.path = try path(.path, .pathBase64)
        rule = try c.decode(String.self, forKey: .rule)
        reason = try c.decode(String.self, forKey: .reason)
        bytes = try c.decode(Int64.self, forKey: .bytes)
        identity = try c.decodeIfPresent(EntryIdentity.self, forKey: .identity)
        type = try c.decodeIfPresent(FileType.self, forKey: .type)
        entries = try c.decodeIfPresent(Int.self, forKey: .entries) ?? 1
    }
}
