// The free space of the volume a descriptor is on, as pressure rules measure it: statvfs f_bavail (what an
// unprivileged writer can still use, not the root-reserved blocks) times f_frsize, against f_blocks. One call
// before the walk; never retried. In debug builds (POLICYCTL_FAULT_INJECTION) POLICYCTL_FREE_SPACE=FREE/TOTAL
// (bytes) stands in for the measurement, so end-to-end tests can play a full disk without filling one.
// On macOS, iOS and visionOS the free space is `volumeAvailableCapacityForImportantUsage` instead (Apple's
// figure for "can I store this now": it counts what the system would purge, caches and purgeable files, which
// f_bavail does not); the size is still f_blocks. That half has not been compiled on the Linux machine that
// builds this package (Docs/library.md, "Platform strategies").
#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif
#if os(macOS) || os(iOS) || os(visionOS)
import Foundation
internal import CPosix
#endif

/// A volume's free and total bytes at one instant.
package struct VolumeSpace: Sendable, Hashable {
    /// Bytes an unprivileged writer can still use (f_bavail * f_frsize).
    package var available: Int64
    /// The volume's size (f_blocks * f_frsize).
    package var total: Int64

    package init(available: Int64, total: Int64) { self.available = available; self.total = total }

    /// The volume `descriptor` is on; nil when fstatvfs fails.
    package static func measure(descriptor: Int32) -> VolumeSpace? {
        #if POLICYCTL_FAULT_INJECTION
        if let raw = getenv("POLICYCTL_FREE_SPACE") {
            let parts = String(cString: raw).split(separator: "/")
            if parts.count == 2, let free = Int64(parts[0]), let total = Int64(parts[1]) { return VolumeSpace(available: free, total: total) }
        }
        #endif
        var s = statvfs()
        guard fstatvfs(descriptor, &s) == 0 else { return nil }
        let unit = Int64(s.f_frsize)
        #if os(macOS) || os(iOS) || os(visionOS)
        if let important = importantUsageCapacity(descriptor) {
            return VolumeSpace(available: important, total: Int64(s.f_blocks) * unit)
        }
        #endif
        return VolumeSpace(available: Int64(s.f_bavail) * unit, total: Int64(s.f_blocks) * unit)
    }

    /// `8:3`: a device number (st_dev) as major:minor, for people: Linux's encoding, or Darwin's 8/24 split.
    package static func majorMinor(_ d: UInt64) -> String {
        #if canImport(Darwin)
        return "\(d >> 24):\(d & 0xFF_FFFF)"
        #else
        let major = ((d >> 8) & 0xFFF) | ((d >> 32) & ~UInt64(0xFFF))
        let minor = (d & 0xFF) | ((d >> 12) & ~UInt64(0xFF))
        return "\(major):\(minor)"
        #endif
    }

    #if os(macOS) || os(iOS) || os(visionOS)
    /// `volumeAvailableCapacityForImportantUsage` of the volume `descriptor` is on; nil (statvfs is used) when
    /// the descriptor's path cannot be had, no longer leads to that volume, or the value cannot be read. The
    /// documented call takes a URL: the path is the descriptor's own (F_GETPATH), checked to be on its device,
    /// and it only names the volume; nothing is opened or changed through it.
    private static func importantUsageCapacity(_ descriptor: Int32) -> Int64? {
        var buffer = [CChar](repeating: 0, count: 4096)
        guard cposix_fd_path(descriptor, &buffer, Int32(buffer.count)) >= 0 else { return nil }
        var held = stat(), found = stat()
        guard fstat(descriptor, &held) == 0, stat(buffer, &found) == 0, found.st_dev == held.st_dev else { return nil }
        let url = URL(fileURLWithPath: String(cString: buffer), isDirectory: true)
        guard let values = try? url.resourceValues(forKeys: [.volumeAvailableCapacityForImportantUsageKey]) else { return nil }
        return values.volumeAvailableCapacityForImportantUsage
    }
    #endif
}
