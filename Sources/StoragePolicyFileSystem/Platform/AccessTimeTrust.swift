// How far a mount's access times can be trusted, on Darwin from statfs f_flags (Apple's <sys/mount.h>):
// MNT_NOATIME never updates them, MNT_STRICTATIME updates them on every read, and without either (the APFS
// default) they are updated lazily, so a read may not move them. Linux reads statvfs in CPosix.c, unchanged.
// The decision is a pure function of the flags, so its table is tested on Linux too.
internal import CPosix

package enum AccessTimeTrust {
    /// <sys/mount.h>: disable update of file access time.
    package static let darwinNoAtime: UInt64 = 0x1000_0000
    /// <sys/mount.h>: enable strict update of file access time.
    package static let darwinStrictAtime: UInt64 = 0x8000_0000

    /// Strict, at most daily (Linux relatime), never, or lazily (Darwin without MNT_STRICTATIME).
    package static let strict = 0, relatime = 1, never = 2, lazy = 3

    /// The mode for Darwin's f_flags: noatime wins (nothing is written even when strict is also set), then
    /// strict; anything else is lazy.
    package static func darwinMode(flags: UInt64) -> Int {
        if flags & darwinNoAtime != 0 { return never }
        if flags & darwinStrictAtime != 0 { return strict }
        return lazy
    }

    /// How the mount holding `descriptor` updates access times (strict, relatime, never, lazy).
    package static func mode(descriptor: Int32) -> Int {
        #if canImport(Darwin)
        let flags = cposix_mount_flags(descriptor)
        // Flags that cannot be read: lazy, the Darwin default, which trusts atime least short of noatime.
        return flags < 0 ? lazy : darwinMode(flags: UInt64(flags))
        #else
        return Int(cposix_mount_atime_mode(descriptor))
        #endif
    }

    /// True when the mount holding `descriptor` does not keep access times precisely (LRU quota notes).
    package static func isRelaxed(descriptor: Int32) -> Bool {
        #if canImport(Darwin)
        return mode(descriptor: descriptor) != strict
        #else
        return cposix_mount_atime_flags(descriptor) == 1
        #endif
    }
}
