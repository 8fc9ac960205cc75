// A scratch root for in-process apply tests: files with fixed ages, the lock, hand-made plans, a listing.
// Removed when the fixture goes away; never touches anything outside /tmp/policyctl-unit-*.
import Foundation
import TreeFixture
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyPlan
@testable import StoragePolicyApply

final class ApplyFixture {
    let path: String
    let root: DirectoryHandle
    let lock: ApplyLock

    init() throws {
        var template = TestScratch.template("unit")
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(made != nil)
        path = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        mkdir(path + "/root", 0o755)
        root = try DirectoryHandle.open(root: path + "/root")
        lock = try StateDirectory.open(root: root, create: true)!.lock(wait: false)
    }

    deinit {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/rm")
        p.arguments = ["-rf", path]
        try? p.run()
        p.waitUntilExit()
    }

    var rootPath: String { path + "/root" }

    /// chattr +i works here (root with CAP_LINUX_IMMUTABLE on a filesystem that has the flag).
    static let canMakeImmutable: Bool = {
        guard let f = try? ApplyFixture() else { return false }
        f.file("probe")
        guard (try? f.makeImmutable("probe")) != nil else { return false }
        let refused = rename(f.rootPath + "/probe", f.rootPath + "/probe2") != 0
        try? f.makeImmutable("probe", false)
        return refused
    }()

    /// Sets or clears the immutable flag: even root then gets EPERM renaming the entry, a real failure.
    func makeImmutable(_ rel: String, _ on: Bool = true) throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/chattr")
        p.arguments = [on ? "+i" : "-i", rootPath + "/" + rel]
        p.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try p.run()
        p.waitUntilExit()
        if p.terminationStatus != 0 { throw CocoaError(.fileWriteNoPermission) }
    }

    func file(_ rel: String, size: Int = 10, ageHours: Double = 48) {
        let p = rootPath + "/" + rel
        let fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        precondition(fd >= 0, "cannot create \(p)")
        let bytes = [UInt8](repeating: 0x61, count: size)
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, size) }
        close(fd)
        age(rel, hours: ageHours)
    }

    func dir(_ rel: String) { mkdir(rootPath + "/" + rel, 0o755) }

    func age(_ rel: String, hours: Double) {
        let t = Int(Date().timeIntervalSince1970 - hours * 3600)
        var times = [timespec(tv_sec: t, tv_nsec: 0), timespec(tv_sec: t, tv_nsec: 0)]
        utimensat(AT_FDCWD, rootPath + "/" + rel, &times, AT_SYMLINK_NOFOLLOW)
    }

    func exists(_ rel: String) -> Bool {
        var s = stat()
        return lstat(rootPath + "/" + rel, &s) == 0
    }

    func status(_ rel: String) throws -> FileStatus {
        let p = RelativePath(rel)!
        return try root.openDirectory(at: p.parent).status(of: p.lastComponent!)
    }

    /// An action with the target's identity as it is now.
    func action(_ kind: Action.Kind, _ rel: String, entries: Int = 1) throws -> Action {
        let s = try? status(rel)
        return Action(kind: kind, path: RelativePath(rel)!, rule: "r", reason: "test", bytes: s?.allocatedSize ?? 0,
                      identity: s?.identity, type: s?.type, entries: entries)
    }

    func plan(_ actions: [Action], scanned: Int = 100, createdAt: Date = Date()) -> Plan {
        Plan(policy: "unit", root: rootPath, createdAt: ISO8601DateFormatter().string(from: createdAt),
             evaluatedAtNs: Int64(createdAt.timeIntervalSince1970 * 1e9), actions: actions, entriesScanned: scanned)
    }

    func apply(_ plan: Plan, _ options: ApplyOptions? = nil) throws(ApplyError) -> ApplyReport {
        try Applier(holding: lock).apply(plan, options: options ?? ApplyOptions(rootPath: rootPath))
    }

    /// Every entry under the root except .policyctl, sorted.
    func listing() throws -> [String] {
        var out: [String] = []
        var pending: [RelativePath] = [.root]
        while let rel = pending.popLast() {
            let d = try root.openDirectory(at: rel)
            for e in try d.entries() {
                let p = rel.appending(e.name)
                if p == RelativePath(".policyctl")! { continue }
                out.append(p.string)
                if try d.status(of: e.name).type == .directory { pending.append(p) }
            }
        }
        return out.sorted()
    }
}

extension ApplyReport {
    func outcome(_ path: String) -> Outcome? { items.first { $0.action.path == RelativePath(path)! }?.outcome }
}
