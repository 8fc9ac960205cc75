// PlanValidation: every plan the planner makes passes it, and each kind of forged action is refused with
// its reason. The forged actions are spelled out by hand.
import Testing
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyModel
@testable import StoragePolicyPlan
@testable import StoragePolicyEvaluation
import TreeFixture

@Suite("Plan validation") struct PlanValidationTests {
    static let marker = Markers.backupAttribute

    static let rules: [Rule] = [
        rule("tmp-expiry", "tmp", expire(.days(1)), match: ["**/*.log", "cache"]),
        rule("lower", "docs", .naming(Naming(letterCase: .lower))),
        rule("trash", ".Trash", .trash(TrashRetention(retain: .days(7)))),
        rule("no-db", "docs", .forbid(globs(["*.db"]))),
        rule("quota", "big", .quota(Quota(max: ByteSize(bytes: 1)))),
        rule("caches", "Caches", .backup(BackupExclusion(cacheDirectoryTag: true))),
        rule("dbs", "data", .backup(BackupExclusion()), match: ["*.sqlite"]),
        rule("audit-only", "tmp", expire(.hours(1)), mode: .audit),
    ]
    static let layout = [LayoutEntry(path: path("new/deep"), excludeFromBackup: true, cacheDirectoryTag: true)]
    static var policy: Policy { Policy(name: "test", layout: layout, rules: rules) }

    func tree() throws -> Tree {
        try Tree {
            Dir("tmp") {
                File("old.log", age: .days(2))
                File("old.dat", age: .days(2))
                File("fresh.log", age: .hours(2))
                Dir("cache", age: .days(2)) { File("x.log", age: .days(2)) }
            }
            Dir("docs") { File("Read Me.TXT"); File("secret.db"); File("ok.txt") }
            Dir(".Trash") {
                Dir("files") { File("gone", age: .days(30)) }
                Dir("info") { File("gone.trashinfo", contents: "[Trash Info]\nPath=/x/gone\nDeletionDate=2020-01-01T00:00:00\n") }
                Dir("other") { File("x", age: .days(30)) }
            }
            Dir("big") { File("a", size: 5000); File("b", size: 5000) }
            Dir("Caches")
            Dir("data") { File("a.sqlite"); File("b.txt") }
            Dir("home") { File("secret") }
        }
    }

    @Test("the planner's own plan passes: every kind of action it makes is one the policy makes")
    func plannerPlanPasses() throws {
        let tree = try tree()
        defer { tree.remove() }
        let p = try Planner(policy: Self.policy, root: tree.root, options: tree.options(threads: 2, budget: nil)).plan()
        #expect(Set(p.actions.map(\.kind.name)) == ["delete", "rename", "trash", "mkdir", "setxattr", "write-tag"])
        #expect(p.lines.contains("rename docs/Read Me.TXT -> docs/read me.txt"))
        #expect(p.lines.contains("delete tmp/cache"))
        #expect(p.lines.contains("delete .Trash/info/gone.trashinfo"))
        #expect(PlanValidation(policy: Self.policy).firstInvalid(in: p) == nil)
    }

    /// An action on an entry of the tree with its real identity, as a co-tenant forging a plan would write it.
    func forged(_ kind: Action.Kind, _ target: String, rule: String, in tree: Tree) throws -> Action {
        let rel = path(target)
        let status = try? DirectoryHandle.open(root: tree.root).openDirectory(at: rel.parent).status(of: rel.lastComponent!)
        return Action(kind: kind, path: rel, rule: rule, reason: "forged", identity: status?.identity, type: status?.type ?? .regular)
    }

    @Test("forged actions are refused, each with its reason", arguments: [
        ("delete", "home/secret", "tmp-expiry", "it is outside the scope tmp of rule 'tmp-expiry'"),
        ("delete", "tmp/fresh.log", "tmp-expiry", "its mtime is not older than 1d: rule 'tmp-expiry' does not expire it"),
        ("delete", "tmp/old.dat", "tmp-expiry", "it does not match the globs of rule 'tmp-expiry'"),
        ("delete", "tmp", "tmp-expiry", "tmp is a rule's scope, a layout directory or the way to one: never changed"),
        ("delete", "docs", "quota", "is a rule's scope, a layout directory or the way to one"),
        ("delete", "tmp/old.log", "nonesuch", "the policy has no rule 'nonesuch'"),
        ("delete", "tmp/old.log", "audit-only", "rule 'audit-only' is in audit mode"),
        ("delete", "docs/ok.txt", "lower", "rule 'lower' is a naming rule: it never plans delete"),
        ("delete", "big/a", "trash", "it is outside the scope .Trash of rule 'trash'"),
        ("delete", ".Trash/files", "trash", "is a rule's scope, a layout directory or the way to one"),
        ("delete", ".Trash/other/x", "trash", "a trash rule deletes only items of its trash folder .Trash"),
        ("delete", ".policyctl/journal.jsonl", "tmp-expiry", "it is in .policyctl"),
        ("rename:docs/evil.txt", "docs/Read Me.TXT", "lower", "renames it to 'read me.txt' (or a numbered free form), not 'evil.txt'"),
        ("rename:docs/read me (0).txt", "docs/Read Me.TXT", "lower", "not 'read me (0).txt'"),
        ("rename:tmp/read me.txt", "docs/Read Me.TXT", "lower", "a naming rule renames within the same directory"),
        ("rename:docs/ok.txt", "docs/ok.txt", "lower", "the name has no uppercase letters"),
        ("rename:.policyctl/x", "docs/Read Me.TXT", "lower", "its target is in .policyctl"),
        ("trash:home", "docs/secret.db", "no-db", "forbidden entries go to the trash folder .Trash"),
        ("trash:.Trash/files/other", "docs/secret.db", "no-db", "forbidden entries go to the trash folder .Trash"),
        ("trash:.Trash", "docs/ok.txt", "no-db", "it matches none of the forbid globs of rule 'no-db'"),
        ("setxattr:security.capability", "data/a.sqlite", "dbs", "the only attribute a backup rule sets is"),
        ("setxattr:marker", "data/b.txt", "dbs", "it does not match the globs of rule 'dbs'"),
        ("setxattr:marker", "home/secret", "layout", "no layout directory with 'backup: exclude' is at home/secret"),
        ("setxattr:marker", "Caches/sub", "caches", "rule 'caches' marks only its scope Caches"),
        ("write-tag", "data/a.sqlite", "dbs", "rule 'dbs' does not write CACHEDIR.TAG"),
        ("mkdir", "home/new", "layout", "the layout creates only its directories"),
        ("mkdir", "home/new", "no-db", "a forbid rule creates only the trash folder .Trash"),
        ("mkdir", "home/new", "tmp-expiry", "rule 'tmp-expiry' is an expire rule: it never plans mkdir"),
        ("delete", "big/a:nodir", "quota", "it records no identity or type for its target"),
    ])
    func refused(kind: String, target: String, ruleName: String, reason: String) throws {
        let tree = try tree()
        defer { tree.remove() }
        let action: Action
        let parts = kind.split(separator: ":", maxSplits: 1).map(String.init)
        switch parts[0] {
        case "rename": action = try forged(.rename(to: path(parts[1])), target, rule: ruleName, in: tree)
        case "trash": action = try forged(.trash(to: path(parts[1])), target, rule: ruleName, in: tree)
        case "setxattr":
            let name = parts[1] == "marker" ? Self.marker.name : parts[1]
            action = try forged(.setxattr(name: name, value: Self.marker.value), target, rule: ruleName, in: tree)
        case "write-tag": action = try forged(.writeTag, target, rule: ruleName, in: tree)
        case "mkdir": action = Action(kind: .mkdir, path: path(target), rule: ruleName, reason: "forged")
        default:
            if target.hasSuffix(":nodir") {
                action = Action(kind: .delete, path: path(String(target.dropLast(6))), rule: ruleName, reason: "forged")
            } else {
                action = try forged(.delete, target, rule: ruleName, in: tree)
            }
        }
        let validation = PlanValidation(policy: Self.policy)
        let why = try #require(validation.problem(with: action), "\(kind) \(target) was accepted")
        #expect(why.contains(reason), "\(why)")
        // In a plan, the whole plan is refused, naming the first bad action.
        let good = Action(kind: .mkdir, path: path("new"), rule: "layout", reason: "layout directory is missing")
        var p = Plan(policy: "test", root: tree.root, createdAt: "", evaluatedAtNs: 0, actions: [good, action, action])
        let invalid = try #require(validation.firstInvalid(in: p))
        #expect(invalid.index == 1)
        #expect(invalid.description.hasPrefix("action 2 ("))
        p.policy = "other"
        #expect(validation.firstInvalid(in: p)?.reason.contains("names policy 'other'") == true)
    }

    @Test("a numbered free form is accepted only as freeName would make it")
    func numberedForms() {
        let base = Array("report.txt".utf8)
        #expect(NameRules.isFreeForm(Array("report.txt".utf8), of: base))
        #expect(NameRules.isFreeForm(Array("report (2).txt".utf8), of: base))
        #expect(NameRules.isFreeForm(Array("report (17).txt".utf8), of: base))
        for bad in ["report (1).txt", "report (02).txt", "report (x).txt", "report ().txt", "report.txt (2)", "report (2)x.txt", "other.txt"] {
            #expect(!NameRules.isFreeForm(Array(bad.utf8), of: base), "\(bad)")
        }
        #expect(NameRules.isFreeForm(Array(".hidden (3)".utf8), of: Array(".hidden".utf8)))
        #expect(NameRules.isFreeForm(Array("dir (2)".utf8), of: Array("dir".utf8)))
    }
}
