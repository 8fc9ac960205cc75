// Saved plans and who they take orders from. A plan file carries no authority: one uid 12345 could write (or
// made itself) is refused by the trust rule before a byte is read; the policy and root that judge a plan are the
// caller's (--policy, --root) or those root's own record of `plan --out` notes, and a plan naming another policy
// or root is refused naming both (65). A plan that reached root's own folder edited is still checked action by
// action: every forged action is refused (exit 65, the first bad action named) and nothing changes. Also plan
// files that are no regular file or are huge: refused at once, never read.
import TreeFixture
import Foundation
import StoragePolicy
import Testing

@Suite("saved plans edited by a co-tenant (binary)")
struct CoTenantPlanTests {
    static let policyText = """
        version: 1
        name: cotenant
        rules:
          - name: tmp-expiry
            path: tmp
            match: ['**/*.log']
            expire: 24h
          - name: lower
            path: docs
            naming: { case: lower }

        """

    /// True when this process is root and setpriv can drop to uid 12345.
    static var canDropToCoTenant: Bool { CoTenant.isAvailable }

    /// A root, a root-owned policy, and a plan saved by root into a sticky folder everyone may write.
    struct Setup {
        let scratch = ScratchDirectory("cotenant")
        let root: String
        let policy: String
        let shared: String
        let planFile: String

        init() throws {
            chmod(scratch.path, 0o755)
            root = scratch.sub("root")
            policy = scratch.path + "/policy.yaml"
            try writePolicy(policy, CoTenantPlanTests.policyText)
            shared = scratch.sub("shared")
            chmod(shared, 0o1777)
            planFile = shared + "/plan.json"
            try buildTree(at: root, [
                .dir("tmp", ageHours: 1), .file("tmp/old.log"), .file("tmp/old.dat"), .file("tmp/fresh.log", ageHours: 1),
                .dir("docs"), .file("docs/README.TXT"), .dir("home"), .file("home/secret"),
            ])
            let made = try policyctl(["plan", "--policy", policy, "--root", root, "--out", planFile])
            #expect(made.status == 2 || made.status == 0, "\(made)")
        }

        func plan() throws -> Plan { try Plan.decode(json: Data(contentsOf: URL(fileURLWithPath: planFile))) }

        /// The identity a co-tenant reads with stat.
        func identity(_ rel: String) throws -> (EntryIdentity, FileType) {
            let path = RelativePath(rel)!
            let s = try DirectoryHandle.open(root: root).openDirectory(at: path.parent).status(of: path.lastComponent!)
            return (s.identity, s.type)
        }

        /// The saved plan replaced by `plan`, as root (a file root owns, that passes the trust rule): what reaches
        /// root edited by someone root trusts, or copied in by hand. It has no record, so --policy names its judge.
        func forge(_ plan: Plan) throws {
            let staged = planFile + ".forged"
            try plan.jsonData().write(to: URL(fileURLWithPath: staged))
            chmod(staged, 0o644)
            #expect(rename(staged, planFile) == 0)
        }

        /// The arguments that name the caller's own policy and root.
        var judged: [String] { ["--policy", policy, "--root", root] }
    }

    /// What uid 12345 deletes with its own policy: everything under the root older than an hour.
    static let attackerPolicy = "version: 1\nname: mine\nrules:\n  - name: all\n    path: .\n    expire: 1h\n"

    @Test("a plan file uid 12345 can write, or made itself, is refused before it is read (65); nothing changes",
          .enabled(if: CoTenantPlanTests.canDropToCoTenant))
    func untrustedPlanFileRefused() throws {
        let s = try Setup()
        let evilPolicy = s.shared + "/mine.yaml"
        // The co-tenant's own policy, in its own file.
        try writePolicy(evilPolicy, Self.attackerPolicy)
        #expect(chown(evilPolicy, CoTenant.uid, CoTenant.uid) == 0)
        let before = try manifest(of: s.root)
        // (1) Its own plan, made with its own policy, planted beside root's.
        let planted = s.shared + "/planted.json"
        let made = try CoTenant.policyctl(["plan", "--policy", evilPolicy, "--root", s.root, "--out", planted])
        #expect(made.status == 0, "\(made)")
        for extra in [[], s.judged] {
            let run = try policyctl(["apply", planted, "--yes"] + extra)
            #expect(run.status == 65, "\(run)")
            #expect(run.stderr.contains("planted.json: refused: it is owned by uid 12345, not by root or uid 0 that runs policyctl"), "\(run.stderr)")
        }
        // (2) Root's own plan made writable by others, then overwritten with the co-tenant's.
        chmod(s.planFile, 0o666)
        #expect(try CoTenant.run("/bin/cp", [planted, s.planFile]).status == 0)
        let run = try policyctl(["apply", s.planFile, "--yes"])
        #expect(run.status == 65, "\(run)")
        #expect(run.stderr.contains("plan.json: refused: it is writable by others (mode 0666)"), "\(run.stderr)")
        #expect(try manifest(of: s.root) == before)
        #expect(!FileManager.default.fileExists(atPath: s.root + "/.policyctl/journal.jsonl"))
    }

    @Test("a plan judged by another policy or root than the one it names is refused naming both (65)",
          .enabled(if: CoTenantPlanTests.canDropToCoTenant))
    func mismatchRefused() throws {
        let s = try Setup()
        let other = s.scratch.path + "/other.yaml"
        try writePolicy(other, Self.attackerPolicy)
        let otherRoot = s.scratch.sub("elsewhere")
        let before = try manifest(of: s.root)
        // Root's own plan of the co-tenant's policy (as if copied over root's plan), judged by root's policy.
        let copied = s.scratch.path + "/copied.json"
        #expect(try policyctl(["plan", "--policy", other, "--root", s.root, "--out", copied]).status == 0)
        let wrongPolicy = try policyctl(["apply", copied, "--yes"] + s.judged)
        #expect(wrongPolicy.status == 65, "\(wrongPolicy)")
        #expect(wrongPolicy.stderr.contains("the plan was made with the policy \(other), not \(s.policy) that this apply names"), "\(wrongPolicy.stderr)")
        // Root's plan applied to another root.
        let wrongRoot = try policyctl(["apply", s.planFile, "--yes", "--root", otherRoot])
        #expect(wrongRoot.status == 65, "\(wrongRoot)")
        #expect(wrongRoot.stderr.contains("the plan was made for the root \(PathNormalization.canonical(s.root)), not \(PathNormalization.canonical(otherRoot))"), "\(wrongRoot.stderr)")
        #expect(try manifest(of: s.root) == before)
    }

    @Test("a plan with no record and no --policy carries no authority (65); with them it applies",
          .enabled(if: CoTenantPlanTests.canDropToCoTenant))
    func noRecordNeedsPolicy() throws {
        let s = try Setup()
        // The same plan, byte for byte different (re-encoded), so root's record of it does not match.
        try s.forge(try s.plan())
        let bare = try policyctl(["apply", s.planFile, "--yes"])
        #expect(bare.status == 65, "\(bare)")
        #expect(bare.stderr.contains("a plan file carries no authority of its own"), "\(bare.stderr)")
        #expect(bare.stderr.contains("policyctl apply \(s.planFile) --policy FILE --root DIR"), "\(bare.stderr)")
        let judged = try policyctl(["apply", s.planFile, "--yes"] + s.judged)
        #expect(judged.status == 0, "\(judged)")
        #expect(try manifest(of: s.root).contains { $0.hasPrefix("docs/readme.txt file") })
    }

    @Test("the plan as made still applies (exit 0)", .enabled(if: CoTenantPlanTests.canDropToCoTenant))
    func unmodifiedApplies() throws {
        let s = try Setup()
        #expect(try s.plan().actions.map { "\($0.kind.name) \($0.path)" } == ["rename docs/README.TXT", "delete tmp/old.log"])
        let run = try policyctl(["apply", s.planFile, "--yes"])
        #expect(run.status == 0, "\(run)")
        let m = try manifest(of: s.root)
        #expect(m.contains { $0.hasPrefix("docs/readme.txt file") })
        #expect(!m.contains { $0.hasPrefix("tmp/old.log ") })
        #expect(m.contains { $0.hasPrefix("tmp/old.dat file") })
    }

    @Test("each forged action is refused with exit 65, naming it; nothing changes",
          .enabled(if: CoTenantPlanTests.canDropToCoTenant),
          arguments: ["outside every scope", "security.capability", "another rename target", "in scope, not matching the glob",
                      "a fresh file the glob matches", "inside .policyctl", "the layout's mkdir outside the layout"])
    func forgedActionRefused(attack: String) throws {
        let s = try Setup()
        var plan = try s.plan()
        let expected: String
        switch attack {
        case "outside every scope":
            let (id, type) = try s.identity("home/secret")
            plan.actions.append(Action(kind: .delete, path: RelativePath("home/secret")!, rule: "tmp-expiry", reason: "old",
                                       bytes: 4096, identity: id, type: type))
            expected = "action 3 (delete home/secret by rule 'tmp-expiry'): it is outside the scope tmp of rule 'tmp-expiry'"
        case "security.capability":
            let (id, type) = try s.identity("tmp/fresh.log")
            plan.actions.append(Action(kind: .setxattr(name: "security.capability", value: [1, 0, 0, 2, 0x20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
                                       path: RelativePath("tmp/fresh.log")!, rule: "tmp-expiry", reason: "x", identity: id, type: type))
            expected = "action 3 (setxattr tmp/fresh.log security.capability by rule 'tmp-expiry'): rule 'tmp-expiry' is an expire rule: it never plans setxattr"
        case "another rename target":
            plan.actions[0].kind = .rename(to: RelativePath("docs/evil.txt")!)
            expected = "action 1 (rename docs/README.TXT -> docs/evil.txt by rule 'lower'): the naming rule renames it to 'readme.txt'"
        case "in scope, not matching the glob":
            let (id, type) = try s.identity("tmp/old.dat")
            plan.actions.append(Action(kind: .delete, path: RelativePath("tmp/old.dat")!, rule: "tmp-expiry", reason: "old",
                                       bytes: 4096, identity: id, type: type))
            expected = "action 3 (delete tmp/old.dat by rule 'tmp-expiry'): it does not match the globs of rule 'tmp-expiry'"
        case "a fresh file the glob matches":
            let (id, type) = try s.identity("tmp/fresh.log")
            plan.actions.append(Action(kind: .delete, path: RelativePath("tmp/fresh.log")!, rule: "tmp-expiry", reason: "old",
                                       bytes: 4096, identity: id, type: type))
            expected = "action 3 (delete tmp/fresh.log by rule 'tmp-expiry'): its mtime is not older than "
        case "inside .policyctl":
            plan.actions.insert(Action(kind: .mkdir, path: RelativePath(".policyctl/x")!, rule: "layout", reason: "x"), at: 0)
            expected = "action 1 (mkdir .policyctl/x by rule 'layout'): it is in .policyctl"
        default:
            plan.actions.insert(Action(kind: .mkdir, path: RelativePath("home/new")!, rule: "layout", reason: "x"), at: 0)
            expected = "action 1 (mkdir home/new by rule 'layout'): the layout creates only its directories"
        }
        try s.forge(plan)
        let before = try manifest(of: s.root)
        let run = try policyctl(["apply", s.planFile, "--yes"] + s.judged)
        #expect(run.status == 65, "\(attack): \(run)")
        #expect(run.stderr.contains(expected), "\(attack): \(run.stderr)")
        #expect(run.stderr.contains("nothing was changed"), "\(run.stderr)")
        #expect(try manifest(of: s.root) == before, "\(attack)")
        // Not even the state folder's journal records a transaction.
        let journal = FileManager.default.fileExists(atPath: s.root + "/.policyctl/journal.jsonl") ? try journalLines(s.root) : []
        #expect(journal.isEmpty, "\(attack)")
        let attribute = try DirectoryHandle.open(root: s.root).openDirectory(at: RelativePath("tmp")!)
            .extendedAttribute("security.capability", of: FileName("fresh.log")!)
        #expect(attribute == nil)
    }

    @Test("of several forged actions the first is named", .enabled(if: CoTenantPlanTests.canDropToCoTenant))
    func firstBadActionNamed() throws {
        let s = try Setup()
        var plan = try s.plan()
        let (id, type) = try s.identity("tmp/old.dat")
        plan.actions.insert(Action(kind: .delete, path: RelativePath("tmp/old.dat")!, rule: "tmp-expiry", reason: "old",
                                   identity: id, type: type), at: 1)
        plan.actions.append(Action(kind: .delete, path: RelativePath("home/secret")!, rule: "nonesuch", reason: "old",
                                   identity: id, type: type))
        try s.forge(plan)
        let run = try policyctl(["apply", s.planFile, "--yes"] + s.judged)
        #expect(run.status == 65, "\(run)")
        #expect(run.stderr.contains("action 2 (delete tmp/old.dat by rule 'tmp-expiry')"), "\(run.stderr)")
        #expect(!run.stderr.contains("nonesuch"))
    }

    // MARK: Plan files that are not regular files

    @Test("/dev/zero, a FIFO without a writer and a sparse 2 GiB file are refused at once (exit 65), never read")
    func oddPlanFiles() throws {
        let scratch = ScratchDirectory("planfile")
        let fifo = scratch.path + "/fifo.json"
        #expect(mkfifo(fifo, 0o644) == 0)
        let sparse = scratch.path + "/huge.json"
        let fd = open(sparse, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        #expect(fd >= 0)
        #expect(ftruncate(fd, 2 << 30) == 0)
        close(fd)
        let cases: [(String, String)] = [
            ("/dev/zero", "/dev/zero: not a regular file (char-device); only regular files are read as plans"),
            (fifo, "fifo.json: not a regular file (fifo); only regular files are read as plans"),
            (sparse, "huge.json: 2147483648 bytes, more than the 1073741824 bytes"),
            (scratch.path, "not a regular file (directory)"),
        ]
        for (path, message) in cases {
            let started = ContinuousClock.now
            let run = try policyctl(["apply", path, "--yes"], killAfter: 10)
            let took = ContinuousClock.now - started
            #expect(run.signal == nil, "\(path): \(run)")
            #expect(run.status == 65, "\(path): \(run)")
            #expect(run.stderr.contains(message), "\(path): \(run.stderr)")
            #expect(took < .seconds(1), "\(path) took \(took)")
        }
        // A missing plan file is an I/O error (74), as before.
        let missing = try policyctl(["apply", scratch.path + "/nonesuch.json", "--yes"])
        #expect(missing.status == 74, "\(missing)")
        #expect(missing.stderr.contains("No such file or directory (ENOENT)"))
    }
}
