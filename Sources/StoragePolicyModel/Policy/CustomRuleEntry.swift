// One entry as a custom rule sees it: its byte path, type and, read only when asked, its status and
// extended attributes. Reads never follow symlinks and never change atimes; nothing here writes.
import Foundation

@_spi(Layers) import StoragePolicyFileSystem

/// An entry of a custom rule's scope, handed to ``CustomRule/evaluate(_:)`` during the walk.
///
/// The name and type come from the directory listing for free; ``status`` (size, timestamps, identity)
/// costs one `fstatat` the first time any rule asks, and ``extendedAttribute(_:)`` one `fgetxattr`-style
/// read per call. Valid only during the `evaluate` call: do not keep it.
public struct CustomRuleEntry {
    /// The entry's path relative to the root, as bytes (never assumed to be UTF-8).
    public let path: RelativePath
    /// The entry's path relative to the rule's scope: what `match:` and `exclude:` globs see.
    public let scopePath: RelativePath
    /// The entry's type, from the directory listing (a symlink is a symlink; it is never followed).
    public let type: FileType
    /// The evaluation instant (nanoseconds since the epoch) every age in the plan is measured against.
    package let now: Int64

    /// The evaluation instant every age in the plan is measured against.
    public var evaluationTime: Date { Date(nanosecondsSinceEpoch: now) }

    package let listing: DirectoryListing
    package let index: Int

    package init(listing: DirectoryListing, index: Int, type: FileType, scopeDepth: Int, now: Int64) {
        self.listing = listing; self.index = index; self.type = type; self.now = now
        path = listing.path(of: index)
        scopePath = RelativePath(Array(path.components.dropFirst(scopeDepth)))
    }

    /// The entry's name (its last path component), as bytes.
    public var name: FileName { listing.name(index) }

    /// The entry's status (`lstat`), or nil when it vanished or cannot be read (the plan records why).
    public var status: FileStatus? { try? listing.status(index) }

    /// The size in bytes (`st_size`), or nil when the status cannot be read.
    public var size: Int64? { status?.size }

    /// How long ago the entry's `timestamp` was, measured against ``now``; nil when the status cannot be
    /// read. `.newest` is the newest of atime, mtime, btime (where recorded) and (for files) ctime, as in `expire`.
    public func age(by timestamp: Expire.Timestamp = .mtime) -> PolicyDuration? {
        guard let status else { return nil }
        let (_, ns) = Ages.timestamp(status, by: timestamp)
        return PolicyDuration(seconds: Ages.age(of: ns, now: now) / 1_000_000_000)
    }

    /// True when the entry's `timestamp` is strictly more than `limit` ago (an entry exactly `limit` old
    /// is not), the comparison `expire` makes.
    public func isOlder(than limit: PolicyDuration, by timestamp: Expire.Timestamp = .mtime) -> Bool {
        guard let status else { return false }
        return Ages.isOlder(Ages.timestamp(status, by: timestamp).ns, than: limit, now: now)
    }

    /// The value of extended attribute `name` (read without following a symlink), or nil when it is not
    /// set or cannot be read. On Apple systems names are as `getxattr(2)` takes them there.
    public func extendedAttribute(_ name: String) -> [UInt8]? {
        (try? listing.extendedAttribute(name, of: index)) ?? nil
    }

    /// True when the directory holding this entry also holds an entry named `name` (any type).
    public func hasSibling(named name: String) -> Bool {
        let bytes = Array(name.utf8)
        for i in 0..<listing.count where listing.nameBytes(i).elementsEqual(bytes) { return true }
        return false
    }

    /// The names of every entry in the same directory (this one included), in listing order.
    public var siblingNames: [FileName] { (0..<listing.count).map(listing.name) }
}
