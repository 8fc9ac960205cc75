// `--at` through the built binary: plan, audit and explain as of another instant, a saved plan made so refused
// by apply (exit 3, nothing changed), apply itself taking no --at (64), and instants that are not ones (64).
import Foundation
import Testing

@Suite("plan, audit and explain --at (end to end)")
struct AsOfEndToEndTests {
    /// A tree with a file 2 days old (a name with a newline) under a 30-day expiry, and its policy.
    struct Setup {
        let scratch = ScratchDirectory("asof")
        let root: String, policy: String
        init() throws {
            root = scratch.sub("tree")
            try buildTree(at: root, [.dir("tmp", ageHours: 1), .file("tmp/new\nlog", ageHours: 48)])
            policy = scratch.path + "/p.yaml"
            try writePolicy(policy, "version: 1\nname: p\nrules:\n  - name: e\n    path: tmp\n    expire: 30d\n")
        }
        var fileIntact: Bool { FileManager.default.fileExists(atPath: root + "/tmp/new\nlog") }
    }

    /// 40 days from now, as --at takes it.
    static let later: String = {
        let date = Date().addingTimeInterval(40 * 86400)
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX"); f.timeZone = TimeZone(identifier: "UTC"); f.dateFormat = "yyyy-MM-dd'T'HH:mm'Z'"
        return f.string(from: date)
    }()

    @Test("plan --at a later instant shows what will be due then; without it nothing is")
    func planAt() throws {
        let s = try Setup()
        let now = try policyctl(["plan", "--policy", s.policy, "--root", s.root, "--detailed-exitcode"])
        #expect(now.status == 0, "\(now)")
        let later = try policyctl(["plan", "--policy", s.policy, "--root", s.root, "--at", Self.later, "--detailed-exitcode"])
        #expect(later.status == 2, "\(later)")
        #expect(later.stdout.contains("tmp/new\\nlog"), "\(later)")
        #expect(later.stdout.contains("(--at), not now: a what-if; apply refuses this plan"), "\(later)")
        let json = try policyctl(["plan", "--policy", s.policy, "--root", s.root, "--at", Self.later, "--format", "json"])
        #expect(json.stdout.contains("\"asOf\" : \"\(Self.later.dropLast())"), "\(json)")
        #expect(s.fileIntact)
    }

    @Test("a plan saved with --at is refused by apply (3) and changes nothing; apply takes no --at (64)")
    func savedPlanRefused() throws {
        let s = try Setup()
        let planFile = s.scratch.path + "/plan.json"
        let saved = try policyctl(["plan", "--policy", s.policy, "--root", s.root, "--at", Self.later, "--out", planFile])
        #expect(saved.status == 0, "\(saved)")
        let apply = try policyctl(["apply", planFile, "--yes"])
        #expect(apply.status == 3, "\(apply)")
        #expect(apply.stderr.contains("(plan --at), not now: a what-if plan is never applied; plan again without --at"), "\(apply)")
        #expect(s.fileIntact)
        let direct = try policyctl(["apply", "--policy", s.policy, "--root", s.root, "--at", Self.later, "--yes"])
        #expect(direct.status == 64, "\(direct)")
        #expect(direct.stderr.contains("Unknown option '--at'"), "\(direct)")
        #expect(s.fileIntact)
    }

    @Test("audit and explain --at judge as of that instant; a date that does not exist is a usage error naming it")
    func auditAndExplain() throws {
        let s = try Setup()
        #expect(try policyctl(["audit", "--policy", s.policy, "--root", s.root]).status == 0)
        let audit = try policyctl(["audit", "--policy", s.policy, "--root", s.root, "--at", Self.later])
        #expect(audit.status == 1, "\(audit)")
        let explain = try policyctl(["explain", "--policy", s.policy, "--root", s.root, "--at", Self.later, "tmp/new\nlog"])
        #expect(explain.status == 0, "\(explain)")
        #expect(explain.stdout.contains("mtime 42d ago > 30d: delete"), "\(explain)")
        let bad = try policyctl(["plan", "--policy", s.policy, "--root", s.root, "--at", "2027-02-30"])
        #expect(bad.status == 64, "\(bad)")
        #expect(bad.stderr.contains("--at '2027-02-30' is not an instant"), "\(bad)")
    }
}
