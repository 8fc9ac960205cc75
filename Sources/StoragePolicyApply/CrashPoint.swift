// Test seams for crash and timing tests of the built binary, driven by the environment:
// POLICYCTL_CRASH_AFTER_RECORDS=N, POLICYCTL_CRASH_AFTER_CHANGES=N, POLICYCTL_DELAY_PER_CHANGE_MS=N.
// Inert unless set; never changes what apply does, only when the process dies or how slowly it goes.
// Compiled in only where POLICYCTL_FAULT_INJECTION is defined (debug builds, what the tests run): an app that
// embeds the library, or the release binary, can never be killed or slowed through its environment, and
// carries none of these names (InstallTests checks the release binary's strings).
import Synchronization
@_spi(Layers) import StoragePolicyFileSystem

#if POLICYCTL_FAULT_INJECTION
package enum CrashPoint {
    /// SIGKILL right after the Nth journal record written by this process is durable (fsynced).
    static let afterRecords: Int? = environmentNumber("POLICYCTL_CRASH_AFTER_RECORDS")
    /// SIGKILL right after the Nth change to the tree (rename, mkdir, setxattr, file creation, undo step).
    static let afterChanges: Int? = environmentNumber("POLICYCTL_CRASH_AFTER_CHANGES")
    /// Sleep this long after each change, so tests can kill a run by time at many points.
    static let delayPerChange: Int? = environmentNumber("POLICYCTL_DELAY_PER_CHANGE_MS")

    private static let changes = Atomic<Int>(0)

    /// Called by the journal after an fsync made records `(before, total]` durable.
    static func recordsDurable(before: Int, total: Int) {
        guard let n = afterRecords, before < n, total >= n else { return }
        die()
    }

    /// Called after every change made to the tree.
    static func changeMade() {
        if let ms = delayPerChange, ms > 0 { _ = system_usleep(UInt32(ms) * 1000) }
        guard let n = afterChanges else { return }
        let count = changes.add(1, ordering: .relaxed).newValue
        if count == n { die() }
    }

    private static func die() {
        // Nothing is flushed or cleaned up: this is the power cut the journal must survive.
        _ = system_kill(system_getpid(), _SIGKILL)
        while true { system_pause() }
    }

    private static func environmentNumber(_ name: String) -> Int? {
        guard let raw = system_getenv(name) else { return nil }
        return Int(String(cString: raw))
    }
}
#else
package enum CrashPoint {
    @inline(__always) static func recordsDurable(before: Int, total: Int) {}
    @inline(__always) static func changeMade() {}
}
#endif
