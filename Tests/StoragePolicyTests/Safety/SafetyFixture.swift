// A root beside an "outside" folder full of sentinels, for race and property tests: plan and apply in-process,
// a background mutator thread, manifests without atimes. Never touches anything outside its scratch folder.
import Foundation
import Synchronization
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyModel
@testable import StoragePolicyPlan
@testable import StoragePolicyEvaluation
@testable import StoragePolicyApply
import TreeFixture

final class SafetyRoot {
    let scratch: String
    let root: String
    let outside: String

    init() {
        var template = TestScratch.template("safety")
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(made != nil)
        scratch = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        root = scratch + "/root"
        outside = scratch + "/outside"
        mkdir(root, 0o755)
        mkdir(outside, 0o755)
    }

    deinit {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/rm")
        p.arguments = ["-rf", scratch]
        try? p.run()
        p.waitUntilExit()
    }

    /// Writes a file of `contents` aged `ageHours` (mtime and atime).
    func file(_ path: String, _ contents: String = "old data", ageHours: Double = 48) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        precondition(fd >= 0, "cannot create \(path)")
        _ = contents.utf8CString.withUnsafeBytes { write(fd, $0.baseAddress, $0.count - 1) }
        close(fd)
        age(path, hours: ageHours)
    }

    func age(_ path: String, hours: Double) {
        let t = Int(Date().timeIntervalSince1970 - hours * 3600)
        var times = [timespec(tv_sec: t, tv_nsec: 0), timespec(tv_sec: t, tv_nsec: 0)]
        utimensat(AT_FDCWD, path, &times, AT_SYMLINK_NOFOLLOW)
    }

    func dir(_ path: String, ageHours: Double? = nil) {
        mkdir(path, 0o755)
        if let ageHours { age(path, hours: ageHours) }
    }

    func contents(_ path: String) -> String? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    /// Path, type, size and mtime of everything under `path` (atimes left out: a read moves them).
    static func shape(_ path: String) -> [String] {
        Manifest.take(path).map { "\(String(decoding: $0.path, as: UTF8.self)) \($0.type) \($0.size) \($0.mtimeNs)" }
    }

    func plan(_ rules: [Rule], threads: Int = 2, willStat: (@Sendable (RelativePath) -> Void)? = nil) throws -> Plan {
        var options = PlanOptions(threads: threads)
        options.willStat = willStat
        return try Planner(policy: Policy(name: "safety", rules: rules), root: root, options: options).plan()
    }

    /// Recovers, then applies `plan` holding the lock; `willChange` runs between each check and its change.
    func apply(_ plan: Plan, allOrNothing: Bool = false, willChange: (@Sendable (RelativePath) -> Void)? = nil) throws -> ApplyReport {
        let handle = try DirectoryHandle.open(root: root)
        let lock = try StateDirectory.open(root: handle, create: true)!.lock(wait: true)
        _ = try Recovery.run(holding: lock)
        var options = ApplyOptions(rootPath: root, allOrNothing: allOrNothing)
        options.willChange = willChange
        return try Applier(holding: lock).apply(plan, options: options)
    }
}

/// A thread that runs `body` over and over until stopped; counts its rounds.
final class Mutator: @unchecked Sendable {
    private let stopFlag = Atomic<Bool>(false)
    private let rounds = Atomic<Int>(0)
    private let done = DispatchSemaphore(value: 0)

    init(_ body: @escaping @Sendable (Int) -> Void) {
        let thread = Thread { [self] in
            var n = 0
            while !stopFlag.load(ordering: .acquiring) {
                body(n)
                n += 1
                rounds.store(n, ordering: .releasing)
            }
            done.signal()
        }
        thread.start()
    }

    /// Stops the thread, waits for its last round to finish and returns how many rounds ran.
    @discardableResult
    func stop() -> Int {
        stopFlag.store(true, ordering: .releasing)
        done.wait()
        return rounds.load(ordering: .acquiring)
    }
}

