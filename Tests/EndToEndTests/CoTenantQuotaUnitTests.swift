// quota `unit: directory` against a co-tenant (uid 12345), with the built binary run as root: a unit holding a
// symlink out of the root is evicted whole without the link being followed; a unit holding a bind mount is kept
// (it cannot be dated); a file the co-tenant adds to a unit between plan and apply survives the apply.
#if canImport(Glibc)
import Glibc
#endif
import Foundation
import StoragePolicy
import Testing

@Suite("quota unit: directory against a co-tenant (binary, as root)")
struct CoTenantQuotaUnitTests {
    static func policy(_ at: String) throws {
        try writePolicy(at, "version: 1\nname: units\nrules:\n  - name: builds\n    path: builds\n    quota: { max: 1B, minAge: 1d, unit: directory }\n")
    }

    @Test("a symlink out of the root inside an evicted unit is removed, never followed; a bind mount keeps its unit; minAge keeps a fresh one",
          .enabled(if: CoTenantMountTests.canBindMount))
    func linksAndMounts() throws {
        let (scratch, root, outside, policies) = try CoTenantMountTests.setUp()
        _ = scratch
        try CoTenantMountTests.asCoTenant("mkdir -p builds/job1/deep builds/job2 builds/job3/mnt && echo x > builds/job1/deep/f && ln -s '\(outside)' builds/job1/out && ln -s '\(outside)/precious.db' builds/job1/db && echo y > builds/job3/f && " + CoTenantUnitTests.age + " && echo new > builds/job2/fresh", in: root)
        try CoTenantMountTests.bind(outside, root + "/builds/job3/mnt")
        defer { umount2(root + "/builds/job3/mnt", Int32(MNT_DETACH)) }
        let policy = policies + "/p.yaml"
        try Self.policy(policy)
        let r = try policyctl(["apply", "--policy", policy, "--root", root, "--yes"])
        #expect(r.status == 0 || r.status == 1, "\(r)")
        #expect(!FileManager.default.fileExists(atPath: root + "/builds/job1"), "\(r)")
        #expect(FileManager.default.fileExists(atPath: root + "/builds/job2/fresh"))
        #expect(FileManager.default.fileExists(atPath: root + "/builds/job3/f"))
        #expect(CoTenantMountTests.outsideNames(outside) == ["IMPORTANT.TXT", "old-report.pdf", "precious.db"])
    }

    @Test("a fresh file added deep inside a unit between plan and apply survives", .enabled(if: CoTenantMountTests.canBindMount))
    func raceAfterPlan() throws {
        let (scratch, root, outside, policies) = try CoTenantMountTests.setUp()
        _ = scratch
        try CoTenantMountTests.asCoTenant("mkdir -p builds/job1/deep && echo x > builds/job1/deep/f && " + CoTenantUnitTests.age, in: root)
        let policy = policies + "/p.yaml"
        try Self.policy(policy)
        let planFile = policies + "/plan.json"
        let plan = try policyctl(["plan", "--policy", policy, "--root", root, "--out", planFile])
        #expect(plan.status == 0 || plan.status == 1, "\(plan)")
        #expect(try String(contentsOfFile: planFile, encoding: .utf8).contains("builds/job1"))
        try CoTenantMountTests.asCoTenant("sleep 2 && echo mine > builds/job1/deep/new", in: root)
        let r = try policyctl(["apply", planFile, "--yes"])
        #expect(r.status == 0, "\(r)")
        #expect(r.stderr.contains("modified since the plan") || r.stdout.contains("modified since the plan"), "\(r)")
        #expect(FileManager.default.fileExists(atPath: root + "/builds/job1/deep/new"), "\(r)")
        #expect(CoTenantMountTests.outsideNames(outside) == ["IMPORTANT.TXT", "old-report.pdf", "precious.db"])
    }
}
