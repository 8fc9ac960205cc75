// Helpers for apply's end-to-end tests: the built binary, scratch directories, a tree builder with fixed
// mtimes and xattrs, exact tree manifests, and hand-made plan files. Never touches anything outside its scratch dirs.
import Foundation
import TreeFixture
import StoragePolicy
import Testing

// MARK: The binary

struct RunResult: CustomStringConvertible {
    var status: Int32
    /// The signal that ended the process, if one did (SIGKILL for the crash tests).
    var signal: Int32?
    var stdout: String
    var stderr: String
    var description: String { "status \(status) signal \(signal.map(String.init) ?? "-")\nstdout:\n\(stdout)\nstderr:\n\(stderr)" }
}

/// Runs the built policyctl (found by `PolicyctlBinary`, beside the test bundle) with `arguments`, stdin from
/// /dev/null (no TTY), the extra environment merged in. `killAfter` sends `killSignal` (SIGKILL unless told)
/// after that many seconds.
/// Fails the test with a clear message when the binary was not built.
@discardableResult
func policyctl(_ arguments: [String], environment: [String: String] = [:], killAfter: Double? = nil,
               killSignal: Int32 = SIGKILL) throws -> RunResult {
    guard FileManager.default.isExecutableFile(atPath: PolicyctlBinary.path) else {
        Issue.record("policyctl was not built at \(PolicyctlBinary.path): 'swift test' builds it, or run 'swift build' first")
        throw PolicyctlBinary.BinaryMissing(path: PolicyctlBinary.path)
    }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: PolicyctlBinary.path)
    process.arguments = arguments
    var env = ProcessInfo.processInfo.environment
    for key in env.keys where key.hasPrefix("POLICYCTL_") { env[key] = nil }
    env["NO_COLOR"] = "1"
    for (k, v) in environment { env[k] = v }
    process.environment = env
    // Output goes to files, not pipes: a chatty child never blocks on a full pipe.
    let scratch = ScratchDirectory("run")
    let outPath = scratch.path + "/out", errPath = scratch.path + "/err"
    _ = FileManager.default.createFile(atPath: outPath, contents: nil)
    _ = FileManager.default.createFile(atPath: errPath, contents: nil)
    let out = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
    let err = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
    process.standardOutput = out
    process.standardError = err
    process.standardInput = FileHandle.nullDevice
    try process.run()
    let pid = process.processIdentifier
    // Cancelled once the child has exited, so a recycled pid is never signalled.
    let killer = DispatchWorkItem { kill(pid, killSignal) }
    if let killAfter { DispatchQueue.global().asyncAfter(deadline: .now() + killAfter, execute: killer) }
    process.waitUntilExit()
    killer.cancel()
    try out.close()
    try err.close()
    let signaled = process.terminationReason == .uncaughtSignal
    return RunResult(status: process.terminationStatus, signal: signaled ? process.terminationStatus : nil,
                     stdout: String(decoding: try Data(contentsOf: URL(fileURLWithPath: outPath)), as: UTF8.self),
                     stderr: String(decoding: try Data(contentsOf: URL(fileURLWithPath: errPath)), as: UTF8.self))
}

// MARK: Scratch directories

/// A fresh directory in the run's scratch folder, removed when the value goes away.
final class ScratchDirectory {
    let path: String

    init(_ label: String = "apply") {
        var template = TestScratch.template(label)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(made != nil, "mkdtemp failed")
        path = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private var mounts: [String] = []

    func sub(_ name: String) -> String {
        let p = path + "/" + name
        mkdir(p, 0o755)
        return p
    }

    /// Mounts a tmpfs of `kilobytes` at `name` (for real ENOSPC); unmounted when the directory goes away.
    func tmpfs(_ name: String, kilobytes: Int) throws -> String {
        let p = sub(name)
        guard mount("tmpfs", p, "tmpfs", 0, "size=\(kilobytes)k,mode=0755") == 0 else {
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EPERM)
        }
        mounts.append(p)
        return p
    }

    /// True when this process may mount a tmpfs (root with CAP_SYS_ADMIN).
    static let canMountTmpfs: Bool = {
        let s = ScratchDirectory("probe")
        return (try? s.tmpfs("m", kilobytes: 64)) != nil
    }()

    deinit {
        for m in mounts.reversed() { umount2(m, Int32(MNT_DETACH)) }
        // rm -rf copes with any name the tests create; the library's own removal is under test.
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/rm")
        p.arguments = ["-rf", path]
        try? p.run()
        p.waitUntilExit()
    }
}

// MARK: Building trees

/// One entry of a test tree. Paths are relative to the root, as bytes so odd names can be made.
enum TreeNode {
    case file(String, size: Int = 10, ageHours: Double = 48, xattrs: [String: String] = [:])
    case rawFile([UInt8], size: Int, ageHours: Double)
    case dir(String, ageHours: Double = 1, xattrs: [String: String] = [:])
    case symlink(String, target: String)
    case hardlink(String, target: String)
}

/// A fixed reference instant so identical trees built at different times get identical mtimes: a minute before
/// its first use, in whole seconds, so what a test creates is later than it. (It was the start of the hour, which
/// let an entry aged "0.1 h" pass a 1 h expiry when the suite ran in the hour's last six minutes.)
let treeEpoch: Int64 = {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return Int64(ts.tv_sec) - 60
}()

func buildTree(at root: String, _ nodes: [TreeNode]) throws {
    func setTime(_ path: String, ageHours: Double) {
        let seconds = treeEpoch - Int64(ageHours * 3600)
        var times = [timespec(tv_sec: Int(seconds), tv_nsec: 123_000_000), timespec(tv_sec: Int(seconds), tv_nsec: 123_000_000)]
        utimensat(AT_FDCWD, path, &times, AT_SYMLINK_NOFOLLOW)
    }
    var directoryTimes: [(String, Double)] = []
    let handle = try DirectoryHandle.open(root: root)
    for node in nodes {
        switch node {
        case .file(let rel, let size, let age, let xattrs):
            let p = root + "/" + rel
            let fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            precondition(fd >= 0, "cannot create \(p)")
            let bytes = [UInt8](repeating: 0x61, count: size)
            _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, size) }
            close(fd)
            for (k, v) in xattrs { try setAttribute(handle, rel, k, v) }
            setTime(p, ageHours: age)
        case .rawFile(let bytes, let size, let age):
            let p = Array(root.utf8) + [0x2F] + bytes + [0]
            let fd = p.withUnsafeBufferPointer { $0.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_WRONLY | O_CREAT | O_TRUNC, 0o644) } }
            precondition(fd >= 0)
            let data = [UInt8](repeating: 0x62, count: size)
            _ = data.withUnsafeBytes { write(fd, $0.baseAddress, size) }
            close(fd)
            let seconds = treeEpoch - Int64(age * 3600)
            var times = [timespec(tv_sec: Int(seconds), tv_nsec: 0), timespec(tv_sec: Int(seconds), tv_nsec: 0)]
            _ = p.withUnsafeBufferPointer { $0.withMemoryRebound(to: CChar.self) { utimensat(AT_FDCWD, $0.baseAddress!, &times, AT_SYMLINK_NOFOLLOW) } }
        case .dir(let rel, let age, let xattrs):
            let p = root + "/" + rel
            mkdir(p, 0o755)
            for (k, v) in xattrs { try setAttribute(handle, rel, k, v) }
            directoryTimes.append((p, age))
        case .symlink(let rel, let target):
            symlink(target, root + "/" + rel)
            setTime(root + "/" + rel, ageHours: 48)
        case .hardlink(let rel, let target):
            link(target, root + "/" + rel)
        }
    }
    // Directories last: creating their entries changed their mtimes.
    for (p, age) in directoryTimes.reversed() { setTime(p, ageHours: age) }
}

private func setAttribute(_ root: DirectoryHandle, _ rel: String, _ name: String, _ value: String) throws {
    let path = RelativePath(rel)!
    let parent = try root.openDirectory(at: path.parent)
    try parent.setExtendedAttribute(name, to: Array(value.utf8), of: path.lastComponent)
}

// MARK: Manifests

/// Every entry under a root (except .policyctl) as one comparable line: path, type, size, mtime, xattrs.
/// Directory mtimes and sizes are left out (renames in and out of a directory change them, even when undone);
/// mtimes of entries created after `createdAfter` (trashinfo files, tags) read `new`, and so do trash stamps.
func manifest(of root: String, createdAfter: Int64 = treeEpoch) throws -> [String] {
    let handle = try DirectoryHandle.open(root: root)
    var lines: [String] = []
    var pending: [RelativePath] = [.root]
    while let relative = pending.popLast() {
        let directory = try handle.openDirectory(at: relative)
        for entry in try directory.entries() {
            let path = relative.appending(entry.name)
            if path == RelativePath(".policyctl")! { continue }
            let s = try directory.status(of: entry.name)
            var line = "\(path.escaped) \(s.type.rawValue)"
            if s.type != .directory {
                line += " size=\(s.size)"
                line += s.modificationTimeNs / 1_000_000_000 > createdAfter ? " mtime=new" : " mtime=\(s.modificationTimeNs)"
            } else {
                pending.append(path)
            }
            if s.type != .symlink {
                let names = try directory.extendedAttributeNames(of: entry.name).sorted()
                for name in names {
                    let value = try directory.extendedAttribute(name, of: entry.name) ?? []
                    let shown = name == Markers.trashStampAttribute ? "*" : String(decoding: value, as: UTF8.self)
                    line += " \(name)=\(shown)"
                }
            }
            lines.append(line)
        }
    }
    return lines.sorted()
}

// MARK: Plans by hand

/// What a test plan asks for, before identities are read from the tree.
enum PlannedAction {
    case delete(String)
    case rename(String, to: String)
    case trash(String, folder: String)
    case mkdir(String)
    case setxattr(String, name: String, value: String)
    case writeTag(String)
}

/// A plan for `root` as the planner would make it: identities read from the tree now, the fingerprint of
/// `policyFile` and of the root. Written to `planFile` when given.
@discardableResult
func makePlan(root: String, policyFile: String, _ wanted: [PlannedAction], entriesScanned: Int = 1000,
              writeTo planFile: String? = nil) throws -> Plan {
    let handle = try DirectoryHandle.open(root: root)
    func identity(_ rel: String) -> (EntryIdentity?, FileType?, Int64) {
        let path = RelativePath(rel)!
        guard let parent = try? handle.openDirectory(at: path.parent),
              let s = try? parent.statusIfPresent(of: path.lastComponent!) else { return (nil, nil, 0) }
        return (s.identity, s.type, s.allocatedSize)
    }
    var actions: [Action] = []
    for w in wanted {
        let action: Action
        switch w {
        case .delete(let p):
            let (id, type, bytes) = identity(p)
            action = Action(kind: .delete, path: RelativePath(p)!, rule: "expire", reason: "old", bytes: bytes, identity: id, type: type)
        case .rename(let p, let to):
            let (id, type, _) = identity(p)
            action = Action(kind: .rename(to: RelativePath(to)!), path: RelativePath(p)!, rule: "naming", reason: "lowercase", identity: id, type: type)
        case .trash(let p, let folder):
            let (id, type, bytes) = identity(p)
            // As the planner names it: the destination, `files/NAME` in a FreeDesktop trash, `NAME` in an app trash.
            let items = (try? handle.openDirectory(at: RelativePath(folder)!).statusIfPresent(of: FileName("files")!))??.type == .directory
                ? RelativePath(folder)!.appending(FileName("files")!) : RelativePath(folder)!
            action = Action(kind: .trash(to: items.appending(RelativePath(p)!.lastComponent!)), path: RelativePath(p)!, rule: "forbid", reason: "forbidden", bytes: bytes, identity: id, type: type)
        case .mkdir(let p):
            action = Action(kind: .mkdir, path: RelativePath(p)!, rule: "layout", reason: "missing")
        case .setxattr(let p, let name, let value):
            let (id, type, _) = identity(p)
            action = Action(kind: .setxattr(name: name, value: Array(value.utf8)), path: RelativePath(p)!, rule: "backup", reason: "exclude", identity: id, type: type)
        case .writeTag(let p):
            let (id, type, _) = identity(p)
            action = Action(kind: .writeTag, path: RelativePath(p)!, rule: "backup", reason: "cache tag", identity: id, type: type)
        }
        actions.append(action)
    }
    let rootStatus = try handle.status()
    let policyBytes = try PlanFile.read(path: policyFile)
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    let now = Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    let formatter = ISO8601DateFormatter()
    var plan = Plan(policy: "test-policy", root: root, createdAt: formatter.string(from: Date()), evaluatedAtNs: now,
                    actions: actions, entriesScanned: entriesScanned,
                    fingerprint: Plan.Fingerprint(policySHA256: SHA256.hex(policyBytes), policyPath: policyFile,
                                                  rootDevice: rootStatus.device, rootInode: rootStatus.inode))
    plan.sort()
    if let planFile {
        let data = try plan.jsonData()
        try data.write(to: URL(fileURLWithPath: planFile))
        // As `plan --out` does: a record of this plan in the user's own state, so `apply FILE` may take its
        // policy and root from there (a plan file carries no authority of its own).
        try PlanRecords.note(Array(data), PlanRecord(policyPath: policyFile, root: root))
    }
    return plan
}

/// A policy that makes every action `makePlan` writes (rules named as its actions' rules), so hand-made
/// plans pass apply's check that each action is one the policy produces.
let handPlanPolicy = """
    version: 1
    name: test-policy
    layout:
      - app
      - path: cache
        backup: exclude
        cacheTag: true
      - cache/sub
    rules:
      - name: expire
        path: tmp
        expire: 1h
      - name: naming
        path: docs
        naming: { case: lower }
      - name: trash
        path: docs/.Trash
        trash: { retain: 30d }
      - name: forbid
        path: docs
        forbid: ['*.sqlite', '*.db']
      - name: backup
        path: .
        match: [lib, cache, 'tmp/**']
        backup: { exclude: true, cacheTag: true }

    """

/// Writes a policy file: by default one that makes every action of a `makePlan` plan.
func writePolicy(_ path: String, _ text: String = handPlanPolicy) throws {
    try Data(text.utf8).write(to: URL(fileURLWithPath: path))
}

/// Lines of the journal under `root`, raw.
func journalLines(_ root: String) throws -> [String] {
    let text = try String(contentsOfFile: root + "/.policyctl/journal.jsonl", encoding: .utf8)
    return text.split(separator: "\n").map(String.init)
}
