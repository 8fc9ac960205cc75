// `unit: directory`, for expiry and for quota eviction alike, against a co-tenant (uid 12345), with the built
// binary run as root: a unit holding a symlink out of the root goes whole without the link being followed; a
// unit holding a bind mount is kept (it cannot be dated); a file the co-tenant adds to a unit between plan and
// apply survives the apply. One scenario, played against both rules.
import TreeFixture
import Foundation
import StoragePolicy
import Testing

@Suite("unit: directory against a co-tenant (binary, as root)")
struct CoTenantUnitTests {
    /// A rule with `unit: directory` over `builds`, and the exit codes its plan may have.
    struct UnitRule: CustomTestStringConvertible, Sendable {
        var name: String
        var yaml: String
        /// Expiry finds nothing to report; a quota over 1 B also reports the bytes it cannot evict (exit 1).
        var planStatuses: Set<Int32>
        var testDescription: String { name }
    }

    static let rules = [
        UnitRule(name: "expire", yaml: "expire: { after: 7d, unit: directory }", planStatuses: [0]),
        UnitRule(name: "quota", yaml: "quota: { max: 1B, minAge: 1d, unit: directory }", planStatuses: [0, 1]),
    ]

    static let old = Int(treeEpoch) - 30 * 86400

    static func policy(_ at: String, _ rule: UnitRule) throws {
        try writePolicy(at, "version: 1\nname: units\nrules:\n  - name: builds\n    path: builds\n    \(rule.yaml)\n")
    }

    /// Makes every entry below `builds` 30 days old (children before their folders, links not followed).
    static let age = "find builds -depth -exec touch -h -d @\(old) {} +"

    @Test("a symlink out of the root inside a unit is removed, never followed; a bind mount keeps its unit; a fresh unit stays",
          .enabled(if: CoTenantMountTests.canBindMount), arguments: rules)
    func linksAndMounts(rule: UnitRule) throws {
        let (scratch, root, outside, policies) = try CoTenantMountTests.setUp()
        _ = scratch
        try CoTenantMountTests.asCoTenant("mkdir -p builds/job1/deep builds/job2 builds/job3/mnt && echo x > builds/job1/deep/f && ln -s '\(outside)' builds/job1/out && ln -s '\(outside)/precious.db' builds/job1/db && echo y > builds/job3/f && " + Self.age + " && echo new > builds/job2/fresh", in: root)
        try CoTenantMountTests.bind(outside, root + "/builds/job3/mnt")
        defer { umount2(root + "/builds/job3/mnt", Int32(MNT_DETACH)) }
        let policy = policies + "/p.yaml"
        try Self.policy(policy, rule)
        let r = try policyctl(["apply", "--policy", policy, "--root", root, "--yes"])
        #expect(r.status == 0 || r.status == 1, "\(r)")
        #expect(!FileManager.default.fileExists(atPath: root + "/builds/job1"), "\(r)")
        #expect(FileManager.default.fileExists(atPath: root + "/builds/job2/fresh"))
        #expect(FileManager.default.fileExists(atPath: root + "/builds/job3/f"))
        #expect(CoTenantMountTests.outsideNames(outside) == ["IMPORTANT.TXT", "old-report.pdf", "precious.db"])
    }

    @Test("a fresh file added deep inside a unit between plan and apply survives",
          .enabled(if: CoTenantMountTests.canBindMount), arguments: rules)
    func raceAfterPlan(rule: UnitRule) throws {
        let (scratch, root, outside, policies) = try CoTenantMountTests.setUp()
        _ = scratch
        try CoTenantMountTests.asCoTenant("mkdir -p builds/job1/deep && echo x > builds/job1/deep/f && " + Self.age, in: root)
        let policy = policies + "/p.yaml"
        try Self.policy(policy, rule)
        let planFile = policies + "/plan.json"
        let plan = try policyctl(["plan", "--policy", policy, "--root", root, "--out", planFile])
        #expect(rule.planStatuses.contains(plan.status), "\(plan)")
        #expect(try String(contentsOfFile: planFile, encoding: .utf8).contains("builds/job1"))
        // Fresh, deep inside: the unit is no longer expired, and its own folder's times did not change. Apply
        // compares against the plan's time to the second (plus one), so the write comes two seconds later.
        try CoTenantMountTests.asCoTenant("sleep 2 && echo mine > builds/job1/deep/new", in: root)
        let r = try policyctl(["apply", planFile, "--yes"])
        #expect(r.status == 0, "\(r)")  // a kept tree is reported, not a failure
        #expect(r.stderr.contains("modified since the plan") || r.stdout.contains("modified since the plan"), "\(r)")
        #expect(FileManager.default.fileExists(atPath: root + "/builds/job1/deep/new"), "\(r)")
        #expect(CoTenantMountTests.outsideNames(outside) == ["IMPORTANT.TXT", "old-report.pdf", "precious.db"])
    }
}
