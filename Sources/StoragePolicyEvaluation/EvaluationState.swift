// What the evaluator keeps while the walk runs: one state per unfinished directory, one result set per
// thread, and the few records (quota files, trash items, each kind's own) that are decided at the end.
import Synchronization
@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyModel
@_spi(Layers) import StoragePolicyPlan

/// The evaluator's state for one directory, kept until its subtree is finished.
package final class EvaluatedDirectory: Sendable {
    package let parent: EvaluatedDirectory?
    /// Its name in its parent (nil for the root). Only the name is kept: a path per unfinished directory
    /// would make a deep tree's memory grow with the square of its depth.
    package let name: FileName?
    /// The scope trie node at this path, when it is a scope, a layout directory or on the way to one.
    let trie: ScopeTrie?
    /// Rules whose scope holds this directory's entries, by index.
    let active: [Int]
    package let status: FileStatus
    /// The first enforcing expire rule this directory is expired under: deleted if it ends up empty.
    let deletion: Verdict?
    /// Audit expire rules it is expired under: reported if it would end up empty.
    let auditDeletions: [Verdict]
    /// Set when this directory is an item in a trash folder: its totals are filled in when it finishes.
    let trashItem: TrashItem?
    let aggregate: Mutex<Aggregate>
    /// Entries of this directory that expire `keep: N` protects (its subdirectories look here).
    package let kept: KeptEntries
    /// Set when this directory is a unit of an expire rule with `unit: directory` (deleted whole or kept whole).
    package let unit: DirectoryUnit?
    /// The timestamp the enclosing unit (or this one) is dated by; nil outside units.
    let unitBy: Expire.Timestamp?

    /// What the finished subtree adds up to, and the deletions held back in case this directory is
    /// deleted as a whole.
    package struct Aggregate {
        package var bytes: Int64 = 0
        package var entries = 0
        /// Entries not deleted by an enforcing rule (subdirectories count until they finish deleted).
        var remaining = 0
        /// Entries neither deleted nor reported as would-be-deleted by an audit rule.
        var remainingAny = 0
        package var held: [Action] = []
        /// Inside a unit: the newest timestamp of the subtree's entries, and whether one could not be dated.
        var newest: Int64 = .min
        var undatable = false
    }

    package init(parent: EvaluatedDirectory?, path: RelativePath, trie: ScopeTrie?, active: [Int], status: FileStatus,
         deletion: Verdict?, auditDeletions: [Verdict], trashItem: TrashItem?, aggregate: Aggregate,
         kept: KeptEntries = .none, unit: DirectoryUnit? = nil, unitBy: Expire.Timestamp? = nil) {
        self.kept = kept; self.unit = unit; self.unitBy = unitBy
        self.parent = parent; self.name = path.lastComponent; self.trie = trie; self.active = active; self.status = status
        self.deletion = deletion; self.auditDeletions = auditDeletions; self.trashItem = trashItem
        self.aggregate = Mutex(aggregate)
    }

    /// The root-relative path, rebuilt from the names up to the root (only for the few actions and findings
    /// about a directory itself).
    package var path: RelativePath {
        var names: [FileName] = []
        var length = 0
        var current: EvaluatedDirectory? = self
        while let directory = current, let name = directory.name {
            names.append(name)
            length += name.bytes.count + 1
            current = directory.parent
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(max(length - 1, 0))
        for name in names.reversed() {
            if !bytes.isEmpty { bytes.append(0x2F) }
            bytes.append(contentsOf: name.bytes)
        }
        return RelativePath(unchecked: bytes)
    }

    /// True while deletions inside must be held: this directory may be deleted as a whole.
    var holdsDeletions: Bool { deletion != nil || unitBy != nil }
}

/// A rule's decision about one entry, with the words that explain it.
package struct Verdict: Sendable {
    package var rule: Int
    package var reason: String
}

/// The regular files quota rules count, for one thread, kept compactly: a 56-byte record per file, names
/// back to back, and each directory's path once. At a million files that is a fifth of a path per file.
package final class QuotaLedger: @unchecked Sendable {
    // @unchecked: filled by one walking thread, read after the walk.
    package struct Record {
        package var rule: UInt16
        var nameLength: UInt16
        package var directory: UInt32
        var nameStart: UInt32
        package var linkCount: UInt32
        /// Allocated bytes (as `du`).
        var allocated: Int64
        /// The eviction order key: mtime for `oldest`, atime for `lru`.
        package var time: Int64
        package var inode: UInt64
        package var size: Int64
        package var modificationTimeNs: Int64
    }

    @exclusivity(unchecked) package private(set) var records: [Record] = []
    @exclusivity(unchecked) private var names: [UInt8] = []
    @exclusivity(unchecked) private var directories: [RelativePath] = []
    /// Owners (uids) by record number, only as far as the last file a `per: owner` quota counted: a policy
    /// without one pays nothing, and the records keep their 56 bytes.
    @exclusivity(unchecked) private var owners: [UInt32] = []
    /// Every file is on the root's device (the walk never crosses one).
    @exclusivity(unchecked) package private(set) var device: UInt64 = 0

    package var count: Int { records.count }

    /// Registers the directory the next files are in; returns its number for `add`.
    package func directory(_ path: RelativePath) -> UInt32 {
        directories.append(path)
        return UInt32(directories.count - 1)
    }

    /// The last directory's number when it is `path`, else a new one: for judges without a per-listing scratch.
    package func directoryReusingLast(_ path: RelativePath) -> UInt32 {
        if let last = directories.last, last == path { return UInt32(directories.count - 1) }
        return directory(path)
    }

    package func add(rule: Int, directory: UInt32, name: ArraySlice<UInt8>, status: FileStatus, time: Int64, byOwner: Bool = false) {
        device = status.device
        if byOwner {
            if owners.count < records.count { owners.append(contentsOf: repeatElement(0, count: records.count - owners.count)) }
            owners.append(status.userID)
        }
        records.append(Record(rule: UInt16(rule), nameLength: UInt16(name.count), directory: directory,
                              nameStart: UInt32(names.count), linkCount: UInt32(clamping: status.linkCount),
                              allocated: status.allocatedSize, time: time, inode: status.inode, size: status.size,
                              modificationTimeNs: status.modificationTimeNs))
        names.append(contentsOf: name)
    }

    /// The file's root-relative path, in an array of exactly its size (a plan may hold a million of them).
    package func path(_ i: Int) -> RelativePath {
        let r = records[i]
        let start = Int(r.nameStart)
        let directory = directories[Int(r.directory)].bytes
        var bytes: [UInt8] = []
        bytes.reserveCapacity(directory.count + 1 + Int(r.nameLength))
        bytes.append(contentsOf: directory)
        if !directory.isEmpty { bytes.append(0x2F) }
        bytes.append(contentsOf: names[start..<(start + Int(r.nameLength))])
        return RelativePath(unchecked: bytes)
    }

    /// The owner of a file a `per: owner` quota counted.
    package func owner(_ i: Int) -> UInt32 { i < owners.count ? owners[i] : 0 }

    package func identity(_ i: Int) -> EntryIdentity {
        let r = records[i]
        return EntryIdentity(device: device, inode: r.inode, size: r.size, modificationTimeNs: r.modificationTimeNs)
    }

    package func release() {
        records = []
        names = []
        directories = []
        owners = []
    }
}

/// One item in a trash folder. Directories fill in their totals when their subtree finishes.
package final class TrashItem: @unchecked Sendable {
    // @unchecked: written by the thread that visits (and later finishes) the item, read after the walk.
    package let rule: Int
    package let path: RelativePath
    /// The item's name in its folder (the key into FreeDesktop's info/NAME.trashinfo).
    package let name: FileName
    package let type: FileType
    package let identity: EntryIdentity
    /// When it was trashed (ns), where known during the walk (app layout).
    package var trashedAt: Int64?
    var dateSource: String
    /// Why it has no date, when it has none.
    var undated: String?
    package var bytes: Int64
    package var entries: Int
    /// Its owner (an app trash's index entry for it counts only when root or this owner wrote it).
    package var userID: UInt32 = 0
    /// Its own atime, for a trash's `order: newest-last-access`.
    package var accessTimeNs: Int64 = 0

    package init(rule: Int, path: RelativePath, name: FileName, type: FileType, identity: EntryIdentity,
         trashedAt: Int64?, dateSource: String, undated: String?, bytes: Int64, entries: Int) {
        self.rule = rule; self.path = path; self.name = name; self.type = type; self.identity = identity
        self.trashedAt = trashedAt; self.dateSource = dateSource; self.undated = undated
        self.bytes = bytes; self.entries = entries
    }
}

/// A FreeDesktop `info/NAME.trashinfo` file (or an app trash's `.policyctl-info/NAME.trashinfo`) and the
/// date read from it.
package struct TrashInfoFile: Sendable {
    package var rule: Int
    /// The item name it describes (NAME without `.trashinfo`).
    package var itemName: FileName
    package var path: RelativePath
    package var deletionDate: Int64?
    /// Why it gives no date, when it gives none.
    package var problem: String?
    package var identity: EntryIdentity
    package var bytes: Int64
    /// Its owner: an app trash's index entry counts only when root or the item's owner wrote it.
    package var userID: UInt32
}

/// Every name in a trash rule's items folder (`files/`, or an app trash folder itself), listed whole: a
/// `.trashinfo` whose item is not among them is an orphan.
package struct TrashItemsListing: Sendable {
    package var rule: Int
    package var names: Set<FileName>
}

/// What one kind gathers on one thread while the walk runs, made on the thread's first use
/// (EvaluationResults.records(_:)) and read by the kind's resolution step from every thread.
package protocol KindRecords: AnyObject {
    init()
}

/// One thread's results; merged after the walk. Only its own thread touches it while the walk runs.
package final class EvaluationResults: @unchecked Sendable {
    // @unchecked: during the walk only its own thread touches it; it is read after the walk's threads are joined.
    @exclusivity(unchecked) package var actions: [Action] = []
    @exclusivity(unchecked) package var violations: [Violation] = []
    @exclusivity(unchecked) package var skipped: [SkippedEntry] = []
    @exclusivity(unchecked) package var entriesScanned = 0
    let quota = QuotaLedger()
    @exclusivity(unchecked) package var trashItems: [TrashItem] = []
    @exclusivity(unchecked) var trashInfos: [TrashInfoFile] = []
    @exclusivity(unchecked) var trashListings: [TrashItemsListing] = []
    @exclusivity(unchecked) var quotaUnits: [QuotaUnitRecord] = []
    @exclusivity(unchecked) var pendingUnits: [PendingUnit] = []
    /// Names found in the folder entries are moved into (the trash target), so moved names do not collide.
    var trashFolderNames: [FileName]? = nil
    /// Each kind's own records, by the record type: kinds keep what only they read here.
    @exclusivity(unchecked) private var kindRecords: [ObjectIdentifier: AnyObject] = [:]
    @exclusivity(unchecked) private var reasons = Set<String>()

    /// Texts by label (`mtime`, `atime`…: a policy uses one or two), then by the age as shown: the label is found
    /// by comparing a few strings, not hashed with every key (a String's hash was most of a delete's lookup).
    @exclusivity(unchecked) private var described: [(label: String, texts: [DescribedAge: String])] = []

    /// One copy of each distinct reason text: thousands of "mtime 3d ago > 1d" share one string.
    func intern(_ reason: String) -> String {
        reasons.insert(reason).memberAfterInsert
    }

    /// `Ages.describe`, interned, and built once per distinct text: the age as shown (two units) is the key,
    /// so the thousands of files of one age get one string without writing it out thousands of times.
    package func describe(_ label: String, _ then: Int64, limit: PolicyDuration, now: Int64) -> String {
        let age = Ages.age(of: then, now: now)
        guard age >= 0 else { return intern(Ages.describe(label, then, limit: limit, now: now)) }
        let key = DescribedAge(shownSeconds: Ages.shownSeconds(age / 1_000_000_000),
                               limitSeconds: limit.seconds, expired: age > limit.nanoseconds)
        let slot: Int
        if let found = described.firstIndex(where: { $0.label == label }) {
            slot = found
        } else {
            described.append((label, [:]))
            slot = described.count - 1
        }
        // A small direct-mapped cache before the dictionary: a folder's files are seldom of one age as shown,
        // and hashing the key (SipHash) was 290 instructions a delete; a plan's distinct ages are few.
        let mixed = UInt64(bitPattern: key.shownSeconds &* 31 &+ key.limitSeconds &* 7 &+ (key.expired ? 1 : 0))
        let line = Int((mixed &* 0x9E37_79B9_7F4A_7C15) >> 58) + slot * 64
        if recentDescribed.isEmpty { recentDescribed = Array(repeating: nil, count: 64 * 4) }
        if line < recentDescribed.count, let hit = recentDescribed[line], hit.key == key, hit.slot == slot { return hit.text }
        let text: String
        if let known = described[slot].texts[key] {
            text = known
        } else {
            text = intern(Ages.describe(label, then, limit: limit, now: now))
            described[slot].texts[key] = text
        }
        if line < recentDescribed.count { recentDescribed[line] = (slot, key, text) }
        return text
    }

    /// The direct-mapped cache of `describe`: 64 lines for each of the first four labels.
    @exclusivity(unchecked) private var recentDescribed: [(slot: Int, key: DescribedAge, text: String)?] = []

    /// What `Ages.describe` writes for an age that is not in the future, apart from the label.
    private struct DescribedAge: Hashable {
        var shownSeconds: Int64
        var limitSeconds: Int64
        var expired: Bool
    }

    /// This thread's records of type `R`, made on first use.
    package func records<R: KindRecords>(_ type: R.Type) -> R {
        if let existing = kindRecords[ObjectIdentifier(type)] { return unsafeDowncast(existing, to: R.self) }
        let made = R()
        kindRecords[ObjectIdentifier(type)] = made
        return made
    }
}
