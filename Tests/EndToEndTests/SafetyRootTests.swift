// Root safety rails of the built binary: `/`, $HOME, /usr and symlinks to them refused (64) by every command
// that takes --root unless --force-root; a read-only root is a clear exit 74. Never runs a rule over a real system root.
import TreeFixture
import Foundation
import StoragePolicy
import Testing

@Suite("Root safety rails (binary)")
struct SafetyRootTests {
    /// A policy with no rules: even if a rail broke, running it could change nothing but .policyctl.
    static func emptyPolicy(_ scratch: ScratchDirectory) throws -> String {
        let p = scratch.path + "/empty.yaml"
        try writePolicy(p)
        return p
    }

    /// Runs a command that must be refused and removes a `.policyctl` a broken rail would have left in `root`.
    func refused(_ arguments: [String], root: String, environment: [String: String] = [:]) throws -> RunResult {
        var s = stat()
        let hadState = lstat(root + "/.policyctl", &s) == 0
        let run = try policyctl(arguments, environment: environment)
        if !hadState && lstat(root + "/.policyctl", &s) == 0 {
            Issue.record("\(arguments): created \(root)/.policyctl")
            rmdir(root + "/.policyctl/staging")
            _ = unlink(root + "/.policyctl/lock")
            _ = unlink(root + "/.policyctl/journal.jsonl")
            rmdir(root + "/.policyctl")
        }
        return run
    }

    @Test("plan, apply, audit and trash refuse '/' and /usr with exit 64 and a hint", arguments: ["/", "/usr"])
    func systemRoots(root: String) throws {
        let scratch = ScratchDirectory("rails")
        let policy = try Self.emptyPolicy(scratch)
        let commands: [[String]] = [
            ["plan", "--policy", policy, "--root", root],
            ["apply", "--policy", policy, "--root", root, "--yes"],
            ["audit", "--policy", policy, "--root", root],
            ["trash", "--root", root, "--trash-dir", ".Trash", "nothing-here"],
        ]
        for command in commands {
            let run = try refused(command, root: root)
            #expect(run.status == 64, "\(command): \(run)")
            #expect(run.stderr.contains("refusing to use"), "\(command): \(run)")
            #expect(run.stderr.contains("--force-root"), "\(command): \(run)")
        }
    }

    @Test("a saved plan whose root is '/' is refused before anything is created")
    func planFileForSlash() throws {
        let scratch = ScratchDirectory("rails")
        let root = scratch.sub("root")
        let policy = try Self.emptyPolicy(scratch)
        let planFile = scratch.path + "/plan.json"
        try buildTree(at: root, [.file("a")])
        var plan = try makePlan(root: root, policyFile: policy, [.delete("a")])
        plan.root = "/"
        try plan.jsonData().write(to: URL(fileURLWithPath: planFile))
        // The plan's own root carries no authority: without --root it is refused as such (65) ...
        let bare = try policyctl(["apply", planFile, "--yes"])
        #expect(bare.status == 65, "\(bare)")
        #expect(bare.stderr.contains("a plan file carries no authority of its own"), "\(bare)")
        // ... and the root named for it meets the same rail as any other (64).
        let run = try refused(["apply", planFile, "--yes", "--policy", policy, "--root", "/"], root: "/")
        #expect(run.status == 64, "\(run)")
        #expect(run.stderr.contains("refusing to use '/' as the root"), "\(run)")
    }

    @Test("the home directory itself is refused, a folder inside it is fine, --force-root lets it through")
    func homeDirectory() throws {
        let scratch = ScratchDirectory("rails")
        let home = scratch.sub("home")
        try buildTree(at: home, [.dir("inside")])
        let policy = try Self.emptyPolicy(scratch)
        let env = ["HOME": home]
        for command in ["plan", "audit"] {
            let run = try refused([command, "--policy", policy, "--root", home], root: home, environment: env)
            #expect(run.status == 64, "\(command): \(run)")
            #expect(run.stderr.contains("refusing to use the home directory"), "\(run)")
        }
        let apply = try refused(["apply", "--policy", policy, "--root", home, "--yes"], root: home, environment: env)
        #expect(apply.status == 64, "\(apply)")
        #expect(apply.stderr.contains("refusing to use the home directory"), "\(apply)")
        // A folder inside home is an ordinary root.
        let inside = try policyctl(["plan", "--policy", policy, "--root", home + "/inside"], environment: env)
        #expect(inside.status == 0, "\(inside)")
        // --force-root is accepted by apply (schedule's units pass it) and lets the root through.
        let forced = try policyctl(["apply", "--policy", policy, "--root", home, "--yes", "--force-root"], environment: env)
        #expect(forced.status == 0, "\(forced)")
        let forcedPlan = try policyctl(["plan", "--policy", policy, "--root", home, "--force-root"], environment: env)
        #expect(forcedPlan.status == 0, "\(forcedPlan)")
    }

    @Test("a root that is a symlink to '/' or to $HOME is judged by what it resolves to")
    func symlinkToSystemRoot() throws {
        let scratch = ScratchDirectory("rails")
        let home = scratch.sub("home")
        let policy = try Self.emptyPolicy(scratch)
        symlink("/", scratch.path + "/slash")
        symlink(home, scratch.path + "/home-link")
        let slash = try refused(["apply", "--policy", policy, "--root", scratch.path + "/slash", "--yes"], root: "/")
        #expect(slash.status == 64, "\(slash)")
        #expect(slash.stderr.contains("refusing to use '/' as the root"), "\(slash)")
        let viaLink = try refused(["plan", "--policy", policy, "--root", scratch.path + "/home-link"], root: home, environment: ["HOME": home])
        #expect(viaLink.status == 64, "\(viaLink)")
    }

    @Test("a root that is itself a symlink is refused with exit 74 (never followed), and nothing is changed")
    func symlinkRoot() throws {
        let scratch = ScratchDirectory("rails")
        let real = scratch.sub("real")
        try buildTree(at: real, [.dir("tmp", ageHours: 48), .file("tmp/old", ageHours: 48), .file("tmp/new", ageHours: 1)])
        symlink(real, scratch.path + "/link")
        let before = try manifest(of: real)
        let policy = scratch.path + "/expire.yaml"
        try writePolicy(policy, "version: 1\nname: test-policy\nrules:\n  - name: tmp-expiry\n    path: tmp\n    expire: { after: 24h }\n")
        let run = try policyctl(["apply", "--policy", policy, "--root", scratch.path + "/link", "--yes"])
        #expect(run.status == 74, "\(run)")
        #expect(run.stderr.contains(scratch.path + "/link: cannot open the root: Not a directory (ENOTDIR)"), "\(run)")
        var s = stat()
        #expect(lstat(scratch.path + "/link", &s) == 0 && (s.st_mode & S_IFMT) == S_IFLNK, "the link itself stays a link")
        #expect(try manifest(of: real) == before)
        #expect(lstat(real + "/.policyctl", &s) != 0, "nothing is created through the link")
    }

    @Test("a root on a read-only mount: apply exits 74 naming EROFS and changes nothing; plan still works",
          .enabled(if: ScratchDirectory.canMountTmpfs))
    func readOnlyRoot() throws {
        let scratch = ScratchDirectory("rails")
        let fs = try scratch.tmpfs("ro", kilobytes: 256)
        let root = fs + "/root"
        mkdir(root, 0o755)
        try buildTree(at: root, [.dir("tmp", ageHours: 48), .file("tmp/old", ageHours: 48)])
        let policy = scratch.path + "/expire.yaml"
        try writePolicy(policy, "version: 1\nname: test-policy\nrules:\n  - name: tmp-expiry\n    path: tmp\n    expire: { after: 24h }\n")
        let before = try manifest(of: root)
        guard mount("tmpfs", fs, "tmpfs", UInt(MS_REMOUNT | MS_RDONLY), "size=256k,mode=0755") == 0 else {
            Issue.record("remounting the tmpfs read-only failed: \(String(cString: strerror(errno)))")
            return
        }
        let plan = try policyctl(["plan", "--policy", policy, "--root", root, "--detailed-exitcode"])
        #expect(plan.status == 2, "\(plan)")
        let apply = try policyctl(["apply", "--policy", policy, "--root", root, "--yes"])
        #expect(apply.status == 74, "\(apply)")
        #expect(apply.stderr.contains("Read-only file system (EROFS)"), "\(apply)")
        #expect(apply.stderr.contains(root), "the message names the root: \(apply)")
        #expect(try manifest(of: root) == before)
        let recover = try policyctl(["recover", "--root", root])
        #expect(recover.status == 74 || recover.status == 0, "\(recover)")
        mount("tmpfs", fs, "tmpfs", UInt(MS_REMOUNT), "size=256k,mode=0755")
    }
}
