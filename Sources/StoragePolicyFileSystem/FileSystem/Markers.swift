// The names and bytes other tools agree on: backup-exclusion xattrs, the CACHEDIR.TAG signature, the trash
// stamp policyctl records, and the engine's own state folder. One definition, used by plan and apply alike.

package enum Markers {
    /// The engine's state folder under every root; never scanned, never a rule's target.
    package static let stateDirectory = FileName(unchecked: Array(".policyctl".utf8))
    /// With --state-dir, each transaction stages into ROOT/.policyctl-staging-<id>: engine state as well.
    package static let stagingPrefix = ".policyctl-staging-"
    /// With --state-dir, a transaction's quarantined deletes wait in ROOT/.policyctl-quarantine-<id>: engine state.
    package static let quarantinePrefix = ".policyctl-quarantine-"

    /// True for a name at the root that is the engine's own state (`.policyctl`, `.policyctl-staging-*`,
    /// `.policyctl-quarantine-*`): never walked, planned, audited or counted.
    package static func isEngineState(_ bytes: some Collection<UInt8>) -> Bool {
        bytes.elementsEqual(stateDirectory.bytes) || bytes.starts(with: stagingPrefix.utf8) || bytes.starts(with: quarantinePrefix.utf8)
    }

    // Concrete forms for the callers in the layers above: there the generic one ran unspecialised (a witness
    // call per byte compared: 2 % of an apply's instructions).
    package static func isEngineState(_ bytes: ArraySlice<UInt8>) -> Bool { bytes.withUnsafeBytes { isEngineState($0) } }
    package static func isEngineState(_ bytes: [UInt8]) -> Bool { bytes.withUnsafeBytes { isEngineState($0) } }

    /// The freedesktop backup-exclusion key honoured by borg and others on Linux, and its value.
    package static let linuxBackupAttribute = "user.xdg.robots.backup"
    package static let linuxBackupValue: [UInt8] = Array("false".utf8)

    /// What `isExcludedFromBackup` and `tmutil addexclusion` write on Apple systems: a binary plist holding
    /// the string "com.apple.backupd".
    package static let appleBackupAttribute = "com.apple.metadata:com_apple_backup_excludeItem"
    package static let appleBackupValue: [UInt8] = [
        0x62, 0x70, 0x6C, 0x69, 0x73, 0x74, 0x30, 0x30, 0x5F, 0x10, 0x11, 0x63, 0x6F, 0x6D, 0x2E, 0x61,
        0x70, 0x70, 0x6C, 0x65, 0x2E, 0x62, 0x61, 0x63, 0x6B, 0x75, 0x70, 0x64, 0x08, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x01, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x1C,
    ]

    /// The backup-exclusion attribute for this platform.
    package static var backupAttribute: (name: String, value: [UInt8]) {
        system_isDarwin ? (appleBackupAttribute, appleBackupValue) : (linuxBackupAttribute, linuxBackupValue)
    }

    /// CACHEDIR.TAG: the file name and the exact 43-byte signature its first line must start with.
    package static let cacheTagName = FileName(unchecked: Array("CACHEDIR.TAG".utf8))
    package static let cacheTagSignature = "Signature: 8a477f597d28d172789f06886806bc55"
    /// The whole file policyctl writes.
    package static let cacheTagContents = cacheTagSignature
        + "\n# This file is a cache directory tag created by policyctl.\n"
        + "# For information about cache directory tags, see: https://bford.info/cachedir/\n"

    /// The xattr `policyctl trash` stamps on an item moved into an app-style trash folder: the time it was
    /// trashed, as decimal seconds since the epoch (UTC).
    package static let trashStampAttribute = "user.policyctl.trashed"
}
