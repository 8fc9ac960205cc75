// The one place system calls are made from: retries EINTR, turns -1 into a typed Errno, and hosts the
// fault-injection seam tests use to fail the Nth call of a kind (or slow every call of one, POLICYCTL_SLOW_CALLS).
// Never swallows an error.
import Synchronization

/// The kinds of system call the engine makes, as the fault-injection seam names them.
package enum SystemCall: String, Sendable, CaseIterable {
    case open, stat, readdir, unlink, rename, mkdir, getxattr, setxattr, removexattr, read, write, fsync
}

/// A test-only seam: makes the Nth call of a kind fail with a chosen errno, or stops the process.
/// Configured in-process with `install` or, for a debug-built binary, with `POLICYCTL_FAULTS=rename:3:EIO,...`.
/// Compiled in only where `POLICYCTL_FAULT_INJECTION` is defined (debug builds, see Package.swift): a release
/// build, which is what ships, never reads the variable and never fails a call on purpose.
package enum FaultInjection {
    package struct Fault: Sendable, Equatable {
        package var call: SystemCall
        /// 1-based: the Nth call of this kind fails. 0 means every call fails.
        package var nth: Int
        package var errno: Errno
        package init(call: SystemCall, nth: Int, errno: Errno) {
            self.call = call
            self.nth = nth
            self.errno = errno
        }
    }

    private struct State {
        var faults: [Fault] = []
        var counts: [SystemCall: Int] = [:]
        /// Microseconds each call of a kind sleeps first (`POLICYCTL_SLOW_CALLS=open:500`): timing tests make a
        /// small tree take as long as a huge one would, to see a run stop at its deadline inside a walk.
        var delays: [SystemCall: UInt32] = [:]
    }

    #if POLICYCTL_FAULT_INJECTION
    private static let enabled = Atomic<Bool>(false)
    private static let state = Mutex(State())
    private static let fromEnvironment: Void = {
        guard let spec = system_getenv("POLICYCTL_FAULTS").map({ String(cString: $0) }), !spec.isEmpty else { return }
        let faults = spec.split(separator: ",").compactMap { item -> Fault? in
            let parts = item.split(separator: ":").map(String.init)
            guard parts.count == 3, let call = SystemCall(rawValue: parts[0]), let nth = Int(parts[1]),
                  let errno = Errno(name: parts[2]) else { return nil }
            return Fault(call: call, nth: nth, errno: errno)
        }
        install(faults)
    }()
    private static let delaysFromEnvironment: Void = {
        guard let spec = system_getenv("POLICYCTL_SLOW_CALLS").map({ String(cString: $0) }), !spec.isEmpty else { return }
        var delays: [SystemCall: UInt32] = [:]
        for item in spec.split(separator: ",") {
            let parts = item.split(separator: ":").map(String.init)
            if parts.count == 2, let call = SystemCall(rawValue: parts[0]), let us = UInt32(parts[1]) { delays[call] = us }
        }
        state.withLock { $0.delays = delays }
        if !delays.isEmpty { enabled.store(true, ordering: .releasing) }
    }()

    /// Replaces the active faults and resets the call counters.
    package static func install(_ faults: [Fault]) {
        state.withLock { $0 = State(faults: faults) }
        enabled.store(!faults.isEmpty, ordering: .releasing)
    }

    /// How many calls of `kind` were made since the faults were installed (counted only while enabled).
    package static func count(of kind: SystemCall) -> Int { state.withLock { $0.counts[kind, default: 0] } }

    /// Runs `body` with this thread's calls neither counted nor failed (the flag is per thread: calls other
    /// threads make meanwhile count as before). For what is not the run a sweep aims at: the command layer's
    /// peek at a saved plan to see whether its policy is a script (its failure is ignored anyway), and the
    /// in-use check's reading of the kernel's tables (`/proc`), which lists every process on the machine, one
    /// readdir per entry, on a pool thread beside the run: counted, it took up the Nth calls of a sweep in
    /// numbers that depend on the machine and in an order that depends on the scheduler. That reading's own
    /// failures are tested with a /proc that cannot be read (InUseCheckTests, InUseStrategyTests).
    package static func uncounted<T>(_ body: () throws -> T) rethrows -> T {
        let outer = system_faultExempt()
        system_setFaultExempt(true)
        defer { system_setFaultExempt(outer) }
        return try body()
    }

    package static func check(_ kind: SystemCall) -> Errno? {
        _ = fromEnvironment
        _ = delaysFromEnvironment
        guard enabled.load(ordering: .acquiring), !system_faultExempt() else { return nil }
        let (errno, delay) = state.withLock { s -> (Errno?, UInt32?) in
            s.counts[kind, default: 0] += 1
            let n = s.counts[kind]!
            return (s.faults.first { $0.call == kind && ($0.nth == 0 || $0.nth == n) }?.errno, s.delays[kind])
        }
        if let delay { _ = system_usleep(delay) }
        return errno
    }
    #else
    /// Release builds: nothing is ever injected.
    package static func install(_ faults: [Fault]) {}

    package static func count(of kind: SystemCall) -> Int { 0 }

    package static func uncounted<T>(_ body: () throws -> T) rethrows -> T { try body() }

    @inline(__always)
    package static func check(_ kind: SystemCall) -> Errno? { nil }
    #endif

    package static func reset() { install([]) }

    /// Where a race test may hold a run still (`POLICYCTL_PAUSE_AT=mkdir-made:800,chase:300`, milliseconds): the
    /// window a co-tenant aims at, made wide so a test can act in it every time instead of by luck.
    package enum PausePoint: String, Sendable {
        /// After apply's mkdirat, before the new folder is opened and recorded (Transaction.noteMade).
        case mkdirMade = "mkdir-made"
        /// Before each component of a path PathChase looks up.
        case chaseStep = "chase"
    }

    #if POLICYCTL_FAULT_INJECTION
    private static let pauses: [String: UInt32] = {
        guard let spec = system_getenv("POLICYCTL_PAUSE_AT").map({ String(cString: $0) }) else { return [:] }
        var out: [String: UInt32] = [:]
        for item in spec.split(separator: ",") {
            let parts = item.split(separator: ":").map(String.init)
            if parts.count == 2, let ms = UInt32(parts[1]) { out[parts[0]] = ms }
        }
        return out
    }()

    /// Sleeps at `point` as POLICYCTL_PAUSE_AT asks (debug builds); nothing otherwise.
    package static func pause(at point: PausePoint) {
        if let ms = pauses[point.rawValue], ms > 0 { _ = system_usleep(ms * 1000) }
    }
    #else
    @inline(__always)
    package static func pause(at point: PausePoint) {}
    #endif

    /// True in builds that carry the seam (debug); tests of the shipped binary's behaviour check this.
    package static var isCompiledIn: Bool {
        #if POLICYCTL_FAULT_INJECTION
        true
        #else
        false
        #endif
    }
}

/// Runs a call that returns -1 with errno on failure: EINTR retried, the fault seam consulted first.
@inline(__always)
package func systemCall<T: BinaryInteger>(_ kind: SystemCall, _ body: () -> T) -> Result<T, Errno> {
    if let injected = FaultInjection.check(kind) { return .failure(injected) }
    while true {
        let r = body()
        if r != -1 { return .success(r) }
        let e = Errno.current
        if e != .interrupted { return .failure(e) }
    }
}
