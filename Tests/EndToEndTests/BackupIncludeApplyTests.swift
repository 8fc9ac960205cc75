// Layout `backup: include` at apply (binary): the exclusion xattr and a CACHEDIR.TAG holding exactly the signature
// are removed, and `policyctl undo` puts both back. A co-tenant who swaps the tag for a symlink to, or a hard link
// of, a file outside the root between plan and apply gets nothing outside touched: the swapped name is kept.
import TreeFixture
import Foundation
import StoragePolicy
import Testing

@Suite("backup: include at apply (binary)", .serialized)
struct BackupIncludeApplyTests {
    static let policyText = "version: 1\nname: include\nlayout:\n  - path: Docs\n    backup: include\n"

    struct Setup {
        let scratch = ScratchDirectory("include")
        let root: String
        let docs: String
        let policy: String
        let planFile: String

        init() throws {
            chmod(scratch.path, 0o755)
            root = scratch.sub("root")
            docs = root + "/Docs"
            mkdir(docs, 0o755)
            policy = scratch.path + "/policy.yaml"
            planFile = scratch.path + "/plan.json"
            try writePolicy(policy, BackupIncludeApplyTests.policyText)
            // The tag as `backup: exclude` writes it (the signature and its comment lines).
            try Data(Markers.cacheTagContents.utf8).write(to: URL(fileURLWithPath: docs + "/CACHEDIR.TAG"))
            let marker = Markers.backupAttribute
            try DirectoryHandle.open(root: docs).setExtendedAttribute(marker.name, to: marker.value)
        }

        var marked: Bool { ((try? DirectoryHandle.open(root: docs).extendedAttribute(Markers.backupAttribute.name)) ?? nil) != nil }
        var tagged: Bool { (try? Data(contentsOf: URL(fileURLWithPath: docs + "/CACHEDIR.TAG"))) == Data(Markers.cacheTagContents.utf8) }

        func plan() throws -> RunResult {
            try policyctl(["plan", "--policy", policy, "--root", root, "--out", planFile])
        }
    }

    @Test("plan and apply remove the marker and the tag; undo puts both back")
    func removeAndUndo() throws {
        let s = try Setup()
        #expect(s.marked && s.tagged)
        let planned = try s.plan()
        #expect(planned.status == 0, "\(planned)")
        let plan = try Plan.decode(json: Data(contentsOf: URL(fileURLWithPath: s.planFile)))
        #expect(plan.actions.map { "\($0.kind.name) \($0.path)" }.sorted() == ["unmark Docs", "untag Docs/CACHEDIR.TAG"])
        let applied = try policyctl(["apply", s.planFile, "--yes"])
        #expect(applied.status == 0, "\(applied)")
        #expect(!s.marked)
        #expect(!FileManager.default.fileExists(atPath: s.docs + "/CACHEDIR.TAG"))
        let id = try #require(applied.stdout.split(separator: " ").drop { $0 != "transaction" }.dropFirst().first.map(String.init),
                              "\(applied.stdout)")
        let undone = try policyctl(["undo", "--root", s.root, "--yes", id])
        #expect(undone.status == 0, "\(undone)")
        #expect(s.marked)
        #expect(s.tagged)
        // Applying again removes them again: nothing is left over from the undo.
        #expect(try s.plan().status == 0)
        #expect(try policyctl(["apply", s.planFile, "--yes"]).status == 0)
        #expect(!s.marked && !FileManager.default.fileExists(atPath: s.docs + "/CACHEDIR.TAG"))
    }

    @Test("a tag swapped by a co-tenant for a symlink or a hard link to an outside file is kept; the outside file is untouched",
          .enabled(if: CoTenant.isAvailable), arguments: ["symlink", "hard link"])
    func coTenantSwap(kind: String) throws {
        let s = try Setup()
        chown(s.docs, CoTenant.uid, CoTenant.uid)
        chown(s.docs + "/CACHEDIR.TAG", CoTenant.uid, CoTenant.uid)
        // The outside file holds exactly the signature too: content alone must never decide.
        let outside = s.scratch.sub("outside") + "/victim"
        chmod(s.scratch.path + "/outside", 0o777)
        try Data(Markers.cacheTagSignature.utf8).write(to: URL(fileURLWithPath: outside))
        chown(outside, CoTenant.uid, CoTenant.uid)
        #expect(try s.plan().status == 0)
        let swap = kind == "symlink" ? "ln -s \(outside) \(s.docs)/CACHEDIR.TAG" : "ln \(outside) \(s.docs)/CACHEDIR.TAG"
        let attack = try CoTenant.sh("rm \(s.docs)/CACHEDIR.TAG && \(swap)")
        #expect(attack.status == 0, "\(attack)")
        let applied = try policyctl(["apply", s.planFile, "--yes"])
        // Changed since the plan: skipped and named (apply's usual exit 0 for that), never followed or removed.
        #expect(applied.status == 0, "\(applied)")
        let why = kind == "symlink" ? "replaced by a symlink since the plan (not followed)" : "replaced since the plan (another file has this name now)"
        #expect(applied.stdout.contains("skipped untag Docs/CACHEDIR.TAG: \(why)"), "\(applied.stdout)")
        #expect(applied.stdout.contains("applied: nothing, 2 skipped"), "\(applied.stdout)")
        var st = stat()
        #expect(lstat(outside, &st) == 0)
        #expect(st.st_nlink == (kind == "symlink" ? 1 : 2))
        #expect((try? Data(contentsOf: URL(fileURLWithPath: outside))) == Data(Markers.cacheTagSignature.utf8))
        var link = stat()
        #expect(lstat(s.docs + "/CACHEDIR.TAG", &link) == 0)
        #expect((link.st_mode & S_IFMT) == (kind == "symlink" ? S_IFLNK : S_IFREG))
    }
}
