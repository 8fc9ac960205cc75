// The free space of the volume a descriptor is on, as pressure rules measure it: statvfs f_bavail (what an
// unprivileged writer can still use, not the root-reserved blocks) times f_frsize, against f_blocks. One call
// before the walk; never retried. In debug builds (POLICYCTL_FAULT_INJECTION) POLICYCTL_FREE_SPACE=FREE/TOTAL
// (bytes) stands in for the measurement, so end-to-end tests can play a full disk without filling one.
#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
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
        return VolumeSpace(available: Int64(s.f_bavail) * unit, total: Int64(s.f_blocks) * unit)
    }
}
