// Bind mounts inside the root, against the built binary run as root: a co-tenant (uid 12345) prepares the
// tree, the test's root step bind-mounts an outside folder into it (as an admin or container runtime would),
// and no walk, apply or purge step ever enters it. Every mount is detached in a defer, before the scratch goes.
import TreeFixture
import Foundation
import StoragePolicy
import Testing

@Suite("Bind mounts inside the root (binary, as root)")
struct CoTenantMountTests {

    /// Root, setpriv present, and bind mounts allowed here.
    static let canBindMount: Bool = {
        guard CoTenant.isAvailable else { return false }
        let s = ScratchDirectory("bind-probe")
        let a = s.sub("a"), b = s.sub("b")
        guard mount(a, b, nil, UInt(MS_BIND), nil) == 0 else { return false }
        umount2(b, Int32(MNT_DETACH))
        return true
    }()

    /// A scratch directory the co-tenant can work in: `root` owned by uid 12345, `outside` owned by root with
    /// files nobody but root may touch.
    static func setUp() throws -> (scratch: ScratchDirectory, root: String, outside: String, policies: String) {
        let scratch = ScratchDirectory("bind")
        chmod(scratch.path, 0o755)
        let root = scratch.sub("root")
        chown(root, 12345, 12345)
        let outside = scratch.sub("outside")
        for name in ["precious.db", "IMPORTANT.TXT", "old-report.pdf"] {
            let p = outside + "/" + name
            #expect(FileManager.default.createFile(atPath: p, contents: Data("keep me".utf8)))
            // Old enough for any expiry rule: only the mount boundary protects them.
            var times = [timespec(tv_sec: Int(treeEpoch) - 30 * 86400, tv_nsec: 0), timespec(tv_sec: Int(treeEpoch) - 30 * 86400, tv_nsec: 0)]
            utimensat(AT_FDCWD, p, &times, AT_SYMLINK_NOFOLLOW)
        }
        let policies = scratch.sub("policies")
        return (scratch, root, outside, policies)
    }

    /// Runs a shell script as the co-tenant, in `directory`.
    static func asCoTenant(_ script: String, in directory: String) throws {
        let r = try CoTenant.sh("cd '\(directory)' && " + script)
        #expect(r.status == 0, "co-tenant script failed: \(r.stderr)")
    }

    static func outsideNames(_ outside: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: outside)) ?? []).sorted()
    }

    static func bind(_ source: String, _ target: String) throws {
        guard mount(source, target, nil, UInt(MS_BIND), nil) == 0 else {
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EPERM)
        }
    }

    @Test("an expired directory holding a bind mount of an outside folder: the folder's files all survive, the mount point is skipped",
          .enabled(if: CoTenantMountTests.canBindMount))
    func expiredDirectoryHoldingBindMount() throws {
        let (scratch, root, outside, policies) = try Self.setUp()
        try Self.asCoTenant("""
            mkdir -p tmp/old/mnt && echo x > tmp/old/junk && echo y > tmp/stale && \
            touch -d '3 days ago' tmp/old/junk tmp/stale tmp/old/mnt tmp/old
            """, in: root)
        let mountPoint = root + "/tmp/old/mnt"
        try Self.bind(outside, mountPoint)
        defer { umount2(mountPoint, Int32(MNT_DETACH)) }
        let policy = policies + "/p.yaml"
        try writePolicy(policy, "version: 1\nname: p\nrules:\n  - name: tmp-expiry\n    path: tmp\n    expire: 24h\n")

        let plan = try policyctl(["plan", "--policy", policy, "--root", root, "--format", "json"])
        #expect(plan.status == 0, "\(plan)")
        let json = try PlanJSON(Data(plan.stdout.utf8))
        #expect(json.lines.sorted() == ["delete tmp/old/junk", "delete tmp/stale"])
        #expect(json.skippedLines == ["tmp/old/mnt: mount point; not entered"])

        let text = try policyctl(["plan", "--policy", policy, "--root", root])
        #expect(text.stdout.contains("tmp/old/mnt: mount point; not entered"), "\(text)")

        let apply = try policyctl(["apply", "--policy", policy, "--root", root, "--yes"])
        #expect(apply.signal == nil && (apply.status == 0 || apply.status == 1), "\(apply)")
        #expect(Self.outsideNames(outside) == ["IMPORTANT.TXT", "old-report.pdf", "precious.db"])
        #expect(FileManager.default.fileExists(atPath: root + "/tmp/old/mnt/precious.db"), "still mounted, still there")
        #expect(!FileManager.default.fileExists(atPath: root + "/tmp/stale"))
        #expect(!FileManager.default.fileExists(atPath: root + "/tmp/old/junk"))
        _ = scratch
    }

    @Test("a bind mount made between plan and apply: the whole-directory delete is kept, the outside folder survives",
          .enabled(if: CoTenantMountTests.canBindMount))
    func bindMountAfterPlan() throws {
        let (scratch, root, outside, policies) = try Self.setUp()
        try Self.asCoTenant("mkdir -p tmp/old/mnt && touch -d '3 days ago' tmp/old/mnt tmp/old", in: root)
        let policy = policies + "/p.yaml"
        try writePolicy(policy, "version: 1\nname: p\nrules:\n  - name: tmp-expiry\n    path: tmp\n    expire: 24h\n")
        let planFile = policies + "/plan.json"
        let plan = try policyctl(["plan", "--policy", policy, "--root", root, "--out", planFile])
        #expect(plan.status == 0, "\(plan)")
        let saved = try Plan.decode(json: Data(contentsOf: URL(fileURLWithPath: planFile)))
        #expect(saved.actions.map { "\($0.path.escaped)" } == ["tmp/old"], "the empty expired tree goes as one delete")

        let mountPoint = root + "/tmp/old/mnt"
        try Self.bind(outside, mountPoint)
        defer { umount2(mountPoint, Int32(MNT_DETACH)) }
        let apply = try policyctl(["apply", planFile, "--yes"])
        #expect(apply.signal == nil, "\(apply)")
        #expect((apply.stdout + apply.stderr).contains("holds a mount point (tmp/old/mnt); never crossed"), "\(apply)")
        #expect(Self.outsideNames(outside) == ["IMPORTANT.TXT", "old-report.pdf", "precious.db"])
        #expect(FileManager.default.fileExists(atPath: root + "/tmp/old/mnt/precious.db"))
        _ = scratch
    }

    @Test("a file bind-mounted over a planned target between plan and apply: apply skips it as another mount, the outside file survives",
          .enabled(if: CoTenantMountTests.canBindMount))
    func fileBindMountAfterPlan() throws {
        let (scratch, root, outside, policies) = try Self.setUp()
        try Self.asCoTenant("mkdir tmp && echo x > tmp/bait && echo y > tmp/other && touch -d '3 days ago' tmp/bait tmp/other", in: root)
        let policy = policies + "/p.yaml"
        try writePolicy(policy, "version: 1\nname: p\nrules:\n  - name: tmp-expiry\n    path: tmp\n    expire: 24h\n")
        let planFile = policies + "/plan.json"
        let plan = try policyctl(["plan", "--policy", policy, "--root", root, "--out", planFile])
        #expect(plan.status == 0, "\(plan)")
        let target = root + "/tmp/bait"
        try Self.bind(outside + "/precious.db", target)
        defer { umount2(target, Int32(MNT_DETACH)) }
        let apply = try policyctl(["apply", planFile, "--yes", "--verbose"])
        #expect(apply.status == 0, "\(apply)")
        #expect(apply.stdout.contains("tmp/bait") && apply.stdout.contains("on another filesystem; never crossed"), "\(apply)")
        #expect(!FileManager.default.fileExists(atPath: root + "/tmp/other"))
        #expect(Self.outsideNames(outside) == ["IMPORTANT.TXT", "old-report.pdf", "precious.db"])
        #expect(FileManager.default.contents(atPath: outside + "/precious.db") == Data("keep me".utf8))
        _ = scratch
    }

    @Test("a naming rule does not rename IMPORTANT.TXT inside a bind-mounted outside folder",
          .enabled(if: CoTenantMountTests.canBindMount))
    func namingRuleStaysOut() throws {
        let (scratch, root, outside, policies) = try Self.setUp()
        try Self.asCoTenant("mkdir -p docs/share && echo x > docs/Mine.TXT", in: root)
        let mountPoint = root + "/docs/share"
        try Self.bind(outside, mountPoint)
        defer { umount2(mountPoint, Int32(MNT_DETACH)) }
        let policy = policies + "/p.yaml"
        try writePolicy(policy, "version: 1\nname: p\nrules:\n  - name: lower\n    path: docs\n    naming: { case: lower }\n")

        let plan = try policyctl(["plan", "--policy", policy, "--root", root, "--format", "json"])
        #expect(plan.status == 0, "\(plan)")
        let json = try PlanJSON(Data(plan.stdout.utf8))
        #expect(json.lines == ["rename docs/Mine.TXT -> docs/mine.txt"])
        #expect(json.skippedLines == ["docs/share: mount point; not entered"])

        let apply = try policyctl(["apply", "--policy", policy, "--root", root, "--yes"])
        #expect(apply.signal == nil && (apply.status == 0 || apply.status == 1), "\(apply)")
        #expect(Self.outsideNames(outside) == ["IMPORTANT.TXT", "old-report.pdf", "precious.db"])
        #expect(FileManager.default.fileExists(atPath: root + "/docs/mine.txt"))
        _ = scratch
    }

    @Test("a file bind-mounted over a co-tenant's expired file is reported as a mount point and never deleted",
          .enabled(if: CoTenantMountTests.canBindMount))
    func fileBindMount() throws {
        let (scratch, root, outside, policies) = try Self.setUp()
        try Self.asCoTenant("mkdir tmp && echo x > tmp/bait && touch -d '3 days ago' tmp/bait", in: root)
        let target = root + "/tmp/bait"
        try Self.bind(outside + "/precious.db", target)
        defer { umount2(target, Int32(MNT_DETACH)) }
        let policy = policies + "/p.yaml"
        try writePolicy(policy, "version: 1\nname: p\nrules:\n  - name: tmp-expiry\n    path: tmp\n    expire: 24h\n")

        let plan = try policyctl(["plan", "--policy", policy, "--root", root, "--format", "json"])
        #expect(plan.status == 0, "\(plan)")
        let json = try PlanJSON(Data(plan.stdout.utf8))
        #expect(json.lines == [])
        #expect(json.skippedLines == ["tmp/bait: mount point; not entered"])
        let apply = try policyctl(["apply", "--policy", policy, "--root", root, "--yes"])
        #expect(apply.signal == nil && (apply.status == 0 || apply.status == 1), "\(apply)")
        #expect(Self.outsideNames(outside) == ["IMPORTANT.TXT", "old-report.pdf", "precious.db"])
        _ = scratch
    }
}
