// Entries in use are never deleted: uid 12345 holds a file open and flocks a directory, root plans and applies
// (the binary); both are kept and named with the holder's PID, the rest is cleaned. Also the re-check at apply
// (held after the plan was saved), `inUse: ignore`, and the flock probe alone (run as a user who cannot see
// the holder's /proc entries).
import TreeFixture
import Foundation
import StoragePolicy
import Testing

@Suite("entries in use are kept (binary)", .serialized)
struct InUseTests {
    static func policy(inUse: String? = nil) -> String {
        """
        version: 1
        name: inuse
        rules:
          - name: tmp-expiry
            path: tmp
            expire: 24h
        \(inUse.map { "    inUse: \($0)\n" } ?? "")
        """
    }

    /// A process of uid 12345 running `script` with /bin/sh; killed (and reaped) by `stop`.
    final class Holder {
        let process = Process()
        init(_ script: String, user: String = "12345") throws {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = ["--reuid=\(user)", "--regid=\(user)", "--clear-groups", "/bin/sh", "-c", script]
            process.standardInput = FileHandle.nullDevice
            try process.run()
        }
        var pid: Int32 { process.processIdentifier }
        /// Waits (up to 5 s) until `ready` holds.
        func wait(until ready: () -> Bool) {
            for _ in 0..<100 where !ready() { usleep(50_000) }
        }
        func stop() {
            if process.isRunning { kill(pid, SIGKILL) }
            process.waitUntilExit()
        }
    }

    static func inode(_ path: String) -> UInt64 {
        var s = stat()
        return lstat(path, &s) == 0 ? UInt64(s.st_ino) : 0
    }

    /// True when /proc/locks names a FLOCK on `path`'s inode.
    static func flocked(_ path: String) -> Bool {
        let text = (try? String(contentsOfFile: "/proc/locks", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").contains { $0.contains("FLOCK") && $0.hasSuffix(":\(inode(path)) 0 EOF") }
    }

    static func holdsOpen(_ pid: Int32, _ path: String) -> Bool {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/0")) == path
    }

    struct Setup {
        let scratch = ScratchDirectory("inuse")
        let root: String
        let policy: String

        init(inUse: String? = nil) throws {
            chmod(scratch.path, 0o755)
            root = scratch.sub("root")
            policy = scratch.path + "/policy.yaml"
            try writePolicy(policy, InUseTests.policy(inUse: inUse))
            try buildTree(at: root, [
                .dir("tmp", ageHours: 1), .file("tmp/held.log"), .file("tmp/old.log"), .file("tmp/fresh.log", ageHours: 1),
                .dir("tmp/locked", ageHours: 48), .file("tmp/locked/inner.log"),
                .dir("tmp/busy", ageHours: 48), .file("tmp/busy/open.log"),
                .dir("tmp/gone", ageHours: 48), .file("tmp/gone/a.log"),
            ])
        }

        /// uid 12345 holds tmp/held.log and tmp/busy/open.log open and flocks tmp/locked.
        func hold() throws -> [Holder] {
            let file = try Holder("exec sleep 60 < '\(root)/tmp/held.log'")
            let inner = try Holder("exec sleep 60 < '\(root)/tmp/busy/open.log'")
            let lock = try Holder("exec 3< '\(root)/tmp/locked'; flock -x 3; exec sleep 60")
            file.wait { InUseTests.holdsOpen(file.pid, root + "/tmp/held.log") }
            inner.wait { InUseTests.holdsOpen(inner.pid, root + "/tmp/busy/open.log") }
            lock.wait { InUseTests.flocked(root + "/tmp/locked") }
            #expect(InUseTests.flocked(root + "/tmp/locked"), "the holder did not take its flock")
            return [file, inner, lock]
        }
    }

    static let cleaned = [
        "tmp directory", "tmp/busy directory", "tmp/busy/open.log file size=10", "tmp/fresh.log file size=10",
        "tmp/held.log file size=10", "tmp/locked directory", "tmp/locked/inner.log file size=10",
    ]

    func names(_ manifest: [String]) -> [String] { manifest.map { $0.replacingOccurrences(of: #" mtime=\d+"#, with: "", options: .regularExpression) } }

    @Test("a file held open and a flocked directory are kept, named with the holder's PID; the rest is cleaned",
          .enabled(if: CoTenantPlanTests.canDropToCoTenant))
    func keptAtPlan() throws {
        let t = try Setup()
        let holders = try t.hold()
        defer { holders.forEach { $0.stop() } }
        let (file, inner, lock) = (holders[0].pid, holders[1].pid, holders[2].pid)

        let plan = try policyctl(["plan", "--policy", t.policy, "--root", t.root, "--format", "json"])
        let decoded = try Plan.decode(json: Data(plan.stdout.utf8))
        #expect(decoded.actions.map(\.path.string).sorted() == ["tmp/gone", "tmp/old.log"])
        let skipped = Dictionary(uniqueKeysWithValues: decoded.skipped.map { ($0.path.string, $0.reason) })
        #expect(skipped["tmp/held.log"] == "in use by \(file) (sleep)")
        #expect(skipped["tmp/busy"] == "holds tmp/busy/open.log, in use by \(inner) (sleep); kept")
        #expect(skipped["tmp/locked"] == "in use by \(lock) (sleep)")

        let applied = try policyctl(["apply", "--yes", "--policy", t.policy, "--root", t.root])
        #expect(applied.status == 0, "\(applied)")
        #expect(names(try manifest(of: t.root)) == Self.cleaned)
    }

    @Test("held after the plan was saved: apply checks again just before each delete and keeps it (reported, exit 0)",
          .enabled(if: CoTenantPlanTests.canDropToCoTenant))
    func keptAtApply() throws {
        let t = try Setup()
        let planFile = t.scratch.path + "/plan.json"
        let made = try policyctl(["plan", "--policy", t.policy, "--root", t.root, "--out", planFile])
        #expect(made.status == 0 || made.status == 2, "\(made)")
        let holders = try t.hold()
        defer { holders.forEach { $0.stop() } }

        let applied = try policyctl(["apply", planFile, "--yes"])
        #expect(applied.status == 0, "\(applied)")
        #expect(applied.stdout.contains("skipped delete tmp/held.log: in use by \(holders[0].pid) (sleep)\n"), "\(applied)")
        #expect(applied.stdout.contains("skipped delete tmp/locked: in use by \(holders[2].pid) (sleep)\n"), "\(applied)")
        #expect(names(try manifest(of: t.root)) == Self.cleaned)
    }

    @Test("a trash rule keeps an item in use and its .trashinfo; the other expired item goes with its .trashinfo",
          .enabled(if: CoTenantPlanTests.canDropToCoTenant))
    func trashItems() throws {
        let scratch = ScratchDirectory("inuse-trash")
        chmod(scratch.path, 0o755)
        let root = scratch.sub("root")
        let policy = scratch.path + "/policy.yaml"
        try writePolicy(policy, "version: 1\nname: t\nrules:\n  - name: bin\n    path: Trash\n    trash: 30d\n")
        try buildTree(at: root, [.dir("Trash"), .dir("Trash/files"), .dir("Trash/info"),
                                 .file("Trash/files/old.txt"), .file("Trash/files/held.txt")])
        for name in ["old.txt", "held.txt"] {
            try "[Trash Info]\nPath=\(root)/\(name)\nDeletionDate=2020-01-01T00:00:00\n"
                .write(toFile: root + "/Trash/info/\(name).trashinfo", atomically: true, encoding: .utf8)
        }
        let holder = try Holder("exec sleep 60 < '\(root)/Trash/files/held.txt'")
        defer { holder.stop() }
        holder.wait { InUseTests.holdsOpen(holder.pid, root + "/Trash/files/held.txt") }
        let plan = try policyctl(["plan", "--policy", policy, "--root", root, "--format", "json"])
        let decoded = try Plan.decode(json: Data(plan.stdout.utf8))
        #expect(decoded.actions.map(\.path.string).sorted() == ["Trash/files/old.txt", "Trash/info/old.txt.trashinfo"], "\(plan)")
        let skipped = Dictionary(uniqueKeysWithValues: decoded.skipped.map { ($0.path.string, $0.reason) })
        #expect(skipped["Trash/files/held.txt"] == "in use by \(holder.pid) (sleep)")
        #expect(skipped["Trash/info/held.txt.trashinfo"] == "the .trashinfo of Trash/files/held.txt, which is in use; kept")
    }

    @Test("inUse: ignore deletes entries in use all the same", .enabled(if: CoTenantPlanTests.canDropToCoTenant))
    func ignored() throws {
        let t = try Setup(inUse: "ignore")
        let holders = try t.hold()
        defer { holders.forEach { $0.stop() } }
        let applied = try policyctl(["apply", "--yes", "--policy", t.policy, "--root", t.root])
        #expect(applied.status == 0, "\(applied)")
        #expect(names(try manifest(of: t.root)) == ["tmp directory", "tmp/fresh.log file size=10"])
    }

    @Test("a flock is found by probing when the holder's /proc entries are hidden (plan run as another user)",
          .enabled(if: CoTenantPlanTests.canDropToCoTenant))
    func flockProbe() throws {
        let t = try Setup()
        let lock = try Holder("exec 3< '\(t.root)/tmp/locked'; flock -x 3; exec sleep 60")
        defer { lock.stop() }
        lock.wait { InUseTests.flocked(t.root + "/tmp/locked") }
        chmod(t.policy, 0o644)
        let plan = try ChildProcess.run("/usr/bin/setpriv", ["--reuid=12346", "--regid=12346", "--clear-groups",
                                                              PolicyctlBinary.path, "plan", "--policy", t.policy,
                                                              "--root", t.root, "--format", "json"])
        let decoded = try Plan.decode(json: Data(plan.stdout.utf8))
        let skipped = Dictionary(uniqueKeysWithValues: decoded.skipped.map { ($0.path.string, $0.reason) })
        // The lock was taken by flock(1), which has exited; the sleep that inherited it holds it now.
        #expect(skipped["tmp/locked"]?.hasPrefix("in use: holds a BSD flock (taken by PID ") == true, "\(plan.stderr)")
        #expect(skipped["tmp/locked"]?.hasSuffix(", which has exited)") == true, "\(skipped)")
        #expect(!decoded.actions.contains { $0.path.string == "tmp/locked" })
    }

    /// Root without CAP_SYS_PTRACE, as under a CapabilityBoundingSet= that lacks it: the command's arguments.
    static func withoutPtrace(_ arguments: [String]) -> [String] {
        ["--bounding-set", "-sys_ptrace", "--inh-caps", "-all", PolicyctlBinary.path] + arguments
    }

    @Test("root without CAP_SYS_PTRACE cannot read uid 12345's descriptors: the plan says so and keeps its 3-day-old held file; inUse: ignore deletes",
          .enabled(if: CoTenantPlanTests.canDropToCoTenant && getuid() == 0))
    func incompleteWithoutPtrace() throws {
        let t = try Setup()
        let holder = try Holder("exec sleep 60 < '\(t.root)/tmp/held.log'")
        defer { holder.stop() }
        holder.wait { InUseTests.holdsOpen(holder.pid, t.root + "/tmp/held.log") }
        let plan = try ChildProcess.run("/usr/bin/setpriv", Self.withoutPtrace(["plan", "--policy", t.policy, "--root", t.root, "--format", "json"]))
        let decoded = try Plan.decode(json: Data(plan.stdout.utf8))
        let note = try #require(decoded.notes.first { $0.hasPrefix("in-use check incomplete: ") }, "\(decoded.notes) \(plan.stderr)")
        #expect(note.range(of: #"^in-use check incomplete: \d+ process(es)? unreadable \(needs CAP_SYS_PTRACE\); entries that expire, quota and trash rules would delete are kept"#,
                           options: .regularExpression) != nil, "\(note)")
        #expect(decoded.actions.isEmpty, "\(decoded.actions.map(\.path.string))")
        let skipped = Dictionary(uniqueKeysWithValues: decoded.skipped.map { ($0.path.string, $0.reason) })
        #expect(skipped["tmp/held.log"]?.range(of: #"^in use unknown: \d+ process(es)? unreadable \(needs CAP_SYS_PTRACE\); kept$"#,
                                               options: .regularExpression) != nil, "\(skipped)")
        let text = try ChildProcess.run("/usr/bin/setpriv", Self.withoutPtrace(["plan", "--policy", t.policy, "--root", t.root]))
        #expect(text.stdout.contains("in-use check incomplete: "), "\(text.stdout)")

        let applied = try ChildProcess.run("/usr/bin/setpriv", Self.withoutPtrace(["apply", "--yes", "--policy", t.policy, "--root", t.root]))
        #expect(applied.status == 0, "\(applied.stdout)\(applied.stderr)")
        #expect(FileManager.default.fileExists(atPath: t.root + "/tmp/held.log"))
        #expect(FileManager.default.fileExists(atPath: t.root + "/tmp/old.log"), "an unknown is never a reason to delete")

        // With full capabilities the same file is named with its holder, and the rest goes.
        let full = try policyctl(["plan", "--policy", t.policy, "--root", t.root, "--format", "json"])
        let complete = try Plan.decode(json: Data(full.stdout.utf8))
        #expect(!complete.notes.contains { $0.hasPrefix("in-use check") }, "\(complete.notes)")
        #expect(complete.skipped.contains { $0.path.string == "tmp/held.log" && $0.reason == "in use by \(holder.pid) (sleep)" })

        try writePolicy(t.policy, InUseTests.policy(inUse: "ignore"))
        let ignored = try ChildProcess.run("/usr/bin/setpriv", Self.withoutPtrace(["apply", "--yes", "--policy", t.policy, "--root", t.root]))
        #expect(ignored.status == 0, "\(ignored.stdout)\(ignored.stderr)")
        #expect(!FileManager.default.fileExists(atPath: t.root + "/tmp/held.log"))
    }

    /// `unshare` can give a child a PID namespace and a /proc of its own (root, a kernel that allows it).
    static let canUnsharePID: Bool = {
        guard getuid() == 0, let r = try? ChildProcess.run("/usr/bin/unshare", ["--pid", "--fork", "--mount-proc", "/bin/true"]) else { return false }
        return r.status == 0
    }()

    /// Where the kernel's /proc/locks lists every flock on the scratch folder's filesystem.
    static var procLocksTrusted: Bool {
        // The initial PID namespace's nsfs inode (PROC_PID_INIT_INO), and the scratch folders' file system (/tmp).
        var s = stat()
        guard stat("/proc/self/ns/pid", &s) == 0, s.st_ino == 0xEFFF_FFFC else { return false }
        return (try? DirectoryHandle.open(root: "/tmp").flocksAreLocal) ?? false
    }

    @Test("in a PID namespace of its own /proc/locks hides the holder: the flock is found by probing, at plan and at apply",
          .enabled(if: CoTenantPlanTests.canDropToCoTenant && InUseTests.canUnsharePID))
    func flockProbeInPIDNamespace() throws {
        let t = try Setup()
        let lock = try Holder("exec 3< '\(t.root)/tmp/locked'; flock -x 3; exec sleep 60")
        defer { lock.stop() }
        lock.wait { InUseTests.flocked(t.root + "/tmp/locked") }
        let inside = ["--pid", "--fork", "--mount-proc", PolicyctlBinary.path]
        let plan = try ChildProcess.run("/usr/bin/unshare", inside + ["plan", "--policy", t.policy, "--root", t.root, "--format", "json"])
        let decoded = try Plan.decode(json: Data(plan.stdout.utf8))
        let skipped = Dictionary(uniqueKeysWithValues: decoded.skipped.map { ($0.path.string, $0.reason) })
        // Neither /proc/*/fd nor /proc/locks of the new namespace shows the holder: only the probe can say.
        #expect(skipped["tmp/locked"] == "in use: holds a BSD flock", "\(plan.stderr)")
        #expect(!decoded.actions.contains { $0.path.string == "tmp/locked" })
        let applied = try ChildProcess.run("/usr/bin/unshare", inside + ["apply", "--yes", "--policy", t.policy, "--root", t.root])
        #expect(applied.status == 0, "\(applied.stdout)\(applied.stderr)")
        #expect(names(try manifest(of: t.root)).contains("tmp/locked directory"))
        #expect(!names(try manifest(of: t.root)).contains("tmp/old.log file size=10"))
    }

    @Test("where /proc/locks is trusted, apply probes no entry it does not list: no flock call on the tree (strace)",
          .enabled(if: CoTenantPlanTests.canDropToCoTenant && InUseTests.procLocksTrusted
                   && FileManager.default.isExecutableFile(atPath: "/usr/bin/strace")))
    func noProbeWhereProcLocksSays() throws {
        let t = try Setup()
        let lock = try Holder("exec 3< '\(t.root)/tmp/locked'; flock -x 3; exec sleep 60")
        defer { lock.stop() }
        lock.wait { InUseTests.flocked(t.root + "/tmp/locked") }
        let trace = t.scratch.path + "/strace.out"
        let run = try ChildProcess.run("/usr/bin/strace", ["-f", "-y", "-e", "trace=flock", "-o", trace,
                                                          PolicyctlBinary.path, "apply", "--yes", "--policy", t.policy, "--root", t.root])
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        let calls = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n").filter { $0.contains("flock(") }
        let onTree = calls.filter { $0.contains("<\(t.root)/tmp") }
        // tmp/locked is kept as open in the holder (/proc/*/fd, before any probe). tmp/old.log, tmp/held.log,
        // tmp/gone, tmp/busy and the folders inside are not in /proc/locks: never probed, neither when planning nor
        // just before their deletes (before, every one was probed twice). The flocks left are apply's own lock.
        #expect(onTree.isEmpty, "\(calls)")
        #expect(calls.contains { $0.contains("/.policyctl/lock>") }, "strace saw no flock at all: \(calls)")
        #expect(calls.allSatisfy { $0.contains("<\(t.root)/tmp") || $0.contains("/.policyctl/lock>") }, "\(calls)")
        #expect(names(try manifest(of: t.root)).contains("tmp/locked directory"))
    }
}
