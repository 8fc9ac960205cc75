// Scopes the walk cannot enter (a symlink, a file, a mount point, a symlink on the way) are violations that
// name the path and say why, in plan and explain: never a silent "no changes". Expected findings by hand.
import Testing
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyModel
@testable import StoragePolicyEvaluation
import TreeFixture

@Suite("Odd scopes") struct OddScopeTests {
    @Test("a symlinked scope, a file scope, a symlink on the way to a scope: each a violation naming the path and why")
    func reported() throws {
        let elsewhere = try Tree { Dir("elsewhere") { File("old.log", age: .days(3)) } }
        defer { elsewhere.remove() }
        let tree = try Tree {
            Symlink("tmp", to: elsewhere.root + "/elsewhere")
            File("data")
            Symlink("via", to: elsewhere.root)
            Dir("fine") { File("old.log", age: .days(3)) }
        }
        defer { tree.remove() }
        let rules = [
            rule("tmp-expiry", "tmp", expire(.days(1))),
            rule("data-quota", "data", .quota(Quota(max: ByteSize(bytes: 1)))),
            rule("deep", "via/elsewhere", expire(.days(1))),
            rule("fine", "fine", expire(.days(1))),
            rule("tmp-names", "tmp", .naming(Naming(letterCase: .lower)), mode: .audit),
        ]
        let p = try plan(tree, rules)
        #expect(p.lines == ["delete fine/old.log"])
        #expect(p.findings == [
            "data-quota: data: the scope data is a file, not a directory; the rule judged nothing there",
            "tmp-expiry: tmp: the scope tmp is a symlink: never followed; the rule judged nothing there",
            "tmp-names: tmp: the scope tmp is a symlink: never followed; the rule judged nothing there",
            "deep: via: via, on the way to the scope via/elsewhere, is a symlink: never followed; the rule judged nothing there",
        ])
        #expect(p.violations.first { $0.rule == "tmp-expiry" }?.severity == .warning)
        // Nothing outside was touched or planned.
        #expect(access(elsewhere.root + "/elsewhere/old.log", F_OK) == 0)

        let e = try Explainer(policy: Policy(name: "test", rules: rules), root: tree.root).explain(path("tmp/old.log"))
        let tmpRule = try #require(e.rules.first { $0.rule == "tmp-expiry" })
        #expect(tmpRule.findings.last == "but tmp is a symlink: never followed: the rule judges nothing in its scope")
        #expect(e.violations.map(\.rule) == ["tmp-expiry", "tmp-names"])
        #expect(e.statusProblem == "tmp is a symlink, not a directory: never followed")
    }

    @Test("a scope that is a mount point (a tmpfs) is reported, not crossed", .enabled(if: getuid() == 0))
    func mountPoint() throws {
        let tree = try Tree { Dir("mnt") }
        defer { tree.remove() }
        let mountPath = tree.root + "/mnt"
        guard mount("tmpfs", mountPath, "tmpfs", 0, "size=64k") == 0 else { return }
        defer { umount2(mountPath, Int32(MNT_DETACH)) }
        let p = try plan(tree, [rule("mnt-expiry", "mnt", expire(.days(1)))])
        #expect(p.findings == ["mnt-expiry: mnt: the scope mnt is a mount point (another file system): never crossed; the rule judged nothing there"])
        #expect(p.actions.isEmpty)
    }
}
