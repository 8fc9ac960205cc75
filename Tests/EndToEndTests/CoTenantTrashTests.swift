// Trash folders and restore origins a co-tenant controls (issue 25, items 2 and 3), against the built binary
// as root in a 1777 root: uid 12345 plants the trash folder (or a FreeDesktop trash's files/ and info/) where
// it is missing, or forges where an item goes back to; uid 12346 is the victim, with a 0644 file in its own
// 0700 folder. Nothing is moved into a planted folder, nothing is restored into another user's folder, and a
// trash the engine makes itself (0700, root's) still round-trips.
import TreeFixture
import Foundation
import StoragePolicy
import Testing

@Suite("trash folders and restore origins under a co-tenant (binary)")
struct CoTenantTrashTests {
    static let victim: uid_t = 12346
    static let secret = "the victim's data\n"
    static let script = "#!/bin/sh\necho run as $(id -u)\n"

    static func policy(layout: String) -> String {
        """
        version: 1
        name: cotenant-trash
        rules:
          - name: trash
            path: Trash
            trash: { retain: 30d, layout: \(layout) }
          - name: no-databases
            path: victim
            forbid: ["**/*.sqlite"]

        """
    }

    /// A 1777 root holding the victim's 0700 folder (its 0644 `data.sqlite` and a `.git/hooks/` with no
    /// pre-commit yet) and the co-tenant's own folder `att` with a script; state kept outside the root.
    struct World {
        let scratch = ScratchDirectory("cotenant-trash")
        let root: String
        let state: String
        let appPolicy: String
        let freedesktopPolicy: String

        init() throws {
            chmod(scratch.path, 0o755)
            root = scratch.sub("root")
            chmod(root, 0o1777)
            state = scratch.path + "/state"
            appPolicy = scratch.path + "/app.yaml"
            freedesktopPolicy = scratch.path + "/fd.yaml"
            try writePolicy(appPolicy, CoTenantTrashTests.policy(layout: "app"))
            try writePolicy(freedesktopPolicy, CoTenantTrashTests.policy(layout: "freedesktop"))
            try buildTree(at: root, [.dir("victim"), .dir("victim/.git"), .dir("victim/.git/hooks"), .dir("att")])
            try Data(CoTenantTrashTests.secret.utf8).write(to: URL(fileURLWithPath: root + "/victim/data.sqlite"))
            try Data(CoTenantTrashTests.script.utf8).write(to: URL(fileURLWithPath: root + "/att/hook.sh"))
            for p in ["victim", "victim/.git", "victim/.git/hooks", "victim/data.sqlite"] {
                #expect(chown(root + "/" + p, CoTenantTrashTests.victim, CoTenantTrashTests.victim) == 0)
            }
            chmod(root + "/victim", 0o700)
            chmod(root + "/victim/data.sqlite", 0o644)
            #expect(chown(root + "/att", CoTenant.uid, CoTenant.uid) == 0)
            #expect(chown(root + "/att/hook.sh", CoTenant.uid, CoTenant.uid) == 0)
            chmod(root + "/att/hook.sh", 0o755)
        }

        func run(_ arguments: [String]) throws -> RunResult {
            try policyctl(arguments + ["--root", root, "--state-dir", state])
        }

        func apply(_ policy: String) throws -> RunResult { try run(["apply", "--policy", policy, "--yes"]) }

        func content(_ rel: String) -> String? {
            (try? Data(contentsOf: URL(fileURLWithPath: root + "/" + rel))).map { String(decoding: $0, as: UTF8.self) }
        }

        func mode(_ rel: String) -> (uid: uid_t, mode: mode_t)? {
            var st = stat()
            guard lstat(root + "/" + rel, &st) == 0 else { return nil }
            return (st.st_uid, st.st_mode & 0o7777)
        }

        /// The victim's file is where it was, with its content, owner and mode, and the co-tenant cannot read it.
        func victimIntact() throws {
            #expect(content("victim/data.sqlite") == CoTenantTrashTests.secret)
            #expect(mode("victim/data.sqlite").map { $0.uid == CoTenantTrashTests.victim && $0.mode == 0o644 } == true)
            #expect(try CoTenant.run("/bin/cat", [root + "/victim/data.sqlite"]).status != 0)
        }

        /// Nothing of the victim reached the co-tenant's folder, and nothing is at the victim's hook.
        func noVictimHook() {
            #expect(mode("victim/.git/hooks/pre-commit") == nil)
        }
    }

    // MARK: (a)-(c): a planted trash folder

    @Test("(a) a planted app trash folder: the enforced forbid move is skipped naming it; the victim's file stays",
          .enabled(if: CoTenant.isAvailable))
    func plantedAppFolder() throws {
        let w = try World()
        #expect(try CoTenant.sh("mkdir -m 0777 '\(w.root)/Trash'").status == 0)
        let run = try w.apply(w.appPolicy)
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.contains("skipped trash victim/data.sqlite: the trash folder Trash is owned by uid 12345 (mode 0777), not by root"), "\(run)")
        #expect(run.stdout.contains("chown 0 Trash && chmod go-w Trash"), "\(run)")
        try w.victimIntact()
        #expect(try FileManager.default.contentsOfDirectory(atPath: w.root + "/Trash").isEmpty)
    }

    @Test("(b) FreeDesktop: files/ and info/ the co-tenant made in a shared sticky Trash, or its own Trash, are refused",
          .enabled(if: CoTenant.isAvailable))
    func plantedFreedesktopParts() throws {
        let w = try World()
        // The spec's shared top folder (root's, 1777): the co-tenant makes files/ and info/ inside it.
        mkdir(w.root + "/Trash", 0o755)
        chmod(w.root + "/Trash", 0o1777)
        #expect(try CoTenant.sh("mkdir -m 0755 '\(w.root)/Trash/files' '\(w.root)/Trash/info'").status == 0)
        let run = try w.apply(w.freedesktopPolicy)
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.contains("skipped trash victim/data.sqlite: the trash folder Trash/files is owned by uid 12345 with mode 0755 inside a shared trash folder"), "\(run)")
        try w.victimIntact()
        #expect(try FileManager.default.contentsOfDirectory(atPath: w.root + "/Trash/files").isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: w.root + "/Trash/info").isEmpty)

        // The co-tenant's own Trash (with its files/ and info/): refused at the folder itself.
        _ = try ChildProcess.run("/bin/rm", ["-rf", w.root + "/Trash"])
        #expect(try CoTenant.sh("mkdir -p -m 0755 '\(w.root)/Trash/files' '\(w.root)/Trash/info'").status == 0)
        let again = try w.apply(w.freedesktopPolicy)
        #expect(again.status == 0, "\(again)")
        #expect(again.stdout.contains("skipped trash victim/data.sqlite: the trash folder Trash is owned by uid 12345 (mode 0755)"), "\(again)")
        try w.victimIntact()
        #expect(try FileManager.default.contentsOfDirectory(atPath: w.root + "/Trash/files").isEmpty)
    }

    @Test("(c) policyctl trash into a planted folder (app, FreeDesktop, a symlink) is refused: exit 1, nothing moved",
          .enabled(if: CoTenant.isAvailable))
    func trashCommandRefused() throws {
        let w = try World()
        #expect(try CoTenant.sh("mkdir -m 0777 '\(w.root)/Trash'").status == 0)
        let app = try w.run(["trash", "--trash-dir", "Trash", "--layout", "app", "victim/data.sqlite"])
        #expect(app.status == 1, "\(app)")
        #expect(app.stdout.contains("skipped trash victim/data.sqlite: the trash folder Trash is owned by uid 12345 (mode 0777)"), "\(app)")
        try w.victimIntact()
        #expect(try CoTenant.sh("mkdir '\(w.root)/Trash/files' '\(w.root)/Trash/info'").status == 0)
        let fd = try w.run(["trash", "--trash-dir", "Trash", "victim/data.sqlite"])
        #expect(fd.status == 1, "\(fd)")
        #expect(fd.stdout.contains("the trash folder Trash is owned by uid 12345"), "\(fd)")
        try w.victimIntact()
        #expect(try FileManager.default.contentsOfDirectory(atPath: w.root + "/Trash/files").isEmpty)
        // A symlink planted where the folder goes is never followed into the co-tenant's folder.
        _ = try ChildProcess.run("/bin/rm", ["-rf", w.root + "/Trash"])
        #expect(try CoTenant.sh("ln -s att '\(w.root)/Trash'").status == 0)
        let link = try w.run(["trash", "--trash-dir", "Trash", "--layout", "app", "victim/data.sqlite"])
        #expect(link.status == 1, "\(link)")
        #expect(link.stdout.contains("the trash folder Trash is a symlink, not a folder; never followed"), "\(link)")
        try w.victimIntact()
        #expect(try FileManager.default.contentsOfDirectory(atPath: w.root + "/att") == ["hook.sh"])
    }

    // MARK: (d): a missing trash folder is made private

    @Test("(d) a missing trash folder is made by root, 0700 (and files/, info/), and the move works",
          .enabled(if: CoTenant.isAvailable))
    func missingFolderMadePrivate() throws {
        for (policy, layout) in [(0, "app"), (1, "freedesktop")] {
            let w = try World()
            let run = try w.apply(policy == 0 ? w.appPolicy : w.freedesktopPolicy)
            #expect(run.status == 0, "\(layout): \(run)")
            let item = layout == "app" ? "Trash/data.sqlite" : "Trash/files/data.sqlite"
            // The plan's mkdir of Trash (and Trash/files), and the engine's of Trash/info.
            #expect(run.stdout.hasPrefix("applied: 1 trash, \(layout == "app" ? 1 : 3) mkdir; "), "\(layout): \(run)")
            let parts = layout == "app" ? ["Trash"] : ["Trash", "Trash/files", "Trash/info"]
            for part in parts {
                #expect(w.mode(part).map { $0.uid == 0 && $0.mode == 0o700 } == true, "\(layout): \(part) \(String(describing: w.mode(part)))")
            }
            #expect(w.content(item) == CoTenantTrashTests.secret)
            #expect(w.content("victim/data.sqlite") == nil)
            #expect(try CoTenant.run("/bin/cat", [w.root + "/" + item]).status != 0, "\(layout)")
        }
        // policyctl trash makes its folder the same way.
        let w = try World()
        let trash = try w.run(["trash", "--trash-dir", "Bin", "--layout", "freedesktop", "victim/data.sqlite"])
        #expect(trash.status == 0, "\(trash)")
        for part in ["Bin", "Bin/files", "Bin/info"] { #expect(w.mode(part).map { $0.uid == 0 && $0.mode == 0o700 } == true, "\(part)") }
    }

    @Test("a co-tenant racing the mkdir of the missing trash folder: the item moves only into root's 0700 folder",
          .enabled(if: CoTenant.isAvailable))
    func racedMkdir() throws {
        let w = try World()
        var planted = 0
        var moved = 0
        for i in 0..<8 {
            // The co-tenant's loop starts 0 to 77 ms later each time: some runs find its folder, some race its mkdir.
            let script = """
                (sleep 0.0\(i)\(i); exec /usr/bin/setpriv \(CoTenant.drop.joined(separator: " ")) /bin/sh -c \
                  'while :; do mkdir -m 0777 "\(w.root)/Trash" 2>/dev/null; done') &
                loop=$!
                '\(PolicyctlBinary.path)' trash --root '\(w.root)' --state-dir '\(w.state)' --trash-dir Trash --layout app victim/data.sqlite
                echo "rc=$?"
                kill $loop; wait $loop 2>/dev/null
                true
                """
            let run = try ChildProcess.run("/bin/sh", ["-c", script])
            if w.content("victim/data.sqlite") != nil {
                try w.victimIntact()
                #expect(run.stdout.contains("rc=1"), "\(i): \(run)")
                #expect(run.stdout.contains("skipped trash victim/data.sqlite: "), "\(i): \(run)")
                planted += 1
            } else {
                #expect(run.stdout.contains("rc=0"), "\(i): \(run)")
                #expect(w.mode("Trash").map { $0.uid == 0 && $0.mode == 0o700 } == true, "\(i): \(String(describing: w.mode("Trash")))")
                #expect(w.content("Trash/data.sqlite") == CoTenantTrashTests.secret, "\(i)")
                #expect(rename(w.root + "/Trash/data.sqlite", w.root + "/victim/data.sqlite") == 0)
                moved += 1
            }
            _ = try ChildProcess.run("/bin/rm", ["-rf", w.root + "/Trash"])
        }
        #expect(planted + moved == 8)
    }

    // MARK: (e), (f): restore origins

    @Test("(e) a forged origin xattr, a forged .trashinfo and a root-written record naming the victim's hook never land there",
          .enabled(if: CoTenant.isAvailable))
    func forgedOrigins() throws {
        let w = try World()
        let hook = Array("victim/.git/hooks/pre-commit".utf8)
        // 1. Trashed by root, then the origin xattr rewritten (the item's owner can, through a descriptor it kept):
        // the journal of the trash move says where it came from.
        #expect(try w.run(["trash", "--trash-dir", "Trash", "--layout", "app", "att/hook.sh"]).status == 0)
        try DirectoryHandle.open(root: w.root + "/Trash").setExtendedAttribute(TrashFolder.originAttribute, to: hook, of: FileName("hook.sh")!)
        let journaled = try w.run(["trash", "--trash-dir", "Trash", "--layout", "app", "--restore", "hook.sh"])
        #expect(journaled.status == 0, "\(journaled)")
        #expect(journaled.stdout.contains("restore Trash/hook.sh -> att/hook.sh"), "\(journaled)")
        #expect(w.content("att/hook.sh") == CoTenantTrashTests.script)
        w.noVictimHook()

        // 2. No journal record (put there by hand): the xattr alone is not trusted.
        #expect(rename(w.root + "/att/hook.sh", w.root + "/Trash/hook.sh") == 0)
        try DirectoryHandle.open(root: w.root + "/Trash").setExtendedAttribute(TrashFolder.originAttribute, to: hook, of: FileName("hook.sh")!)
        let forgedXattr = try w.run(["trash", "--trash-dir", "Trash", "--layout", "app", "--restore", "hook.sh"])
        #expect(forgedXattr.status == 1, "\(forgedXattr)")
        #expect(forgedXattr.stdout.contains("skipped restore Trash/hook.sh: no trusted record of where it came from (its user.policyctl.origin says victim/.git/hooks/pre-commit, but the item's owner can set that)"), "\(forgedXattr)")
        #expect(forgedXattr.stdout.contains("mv -n \(w.root)/Trash/hook.sh DESTINATION"), "\(forgedXattr)")
        #expect(w.content("Trash/hook.sh") == CoTenantTrashTests.script)
        w.noVictimHook()
        // --list shows the origin a restore would use: none, not the xattr's claim.
        let listed = try w.run(["trash", "--trash-dir", "Trash", "--layout", "app", "--list"])
        #expect(listed.status == 0 && listed.stdout == "hook.sh\t-\t\(CoTenantTrashTests.script.utf8.count)\t(origin unknown)\n", "\(listed)")

        // 3. A FreeDesktop trash the co-tenant made, with its script and a .trashinfo naming the victim's hook.
        #expect(try CoTenant.sh("""
            mkdir -p '\(w.root)/Bin/files' '\(w.root)/Bin/info' && printf '#!/bin/sh\\nid -u\\n' > '\(w.root)/Bin/files/pre-commit' \
            && printf '[Trash Info]\\nPath=\(w.root)/victim/.git/hooks/pre-commit\\nDeletionDate=2026-01-01T00:00:00\\n' > '\(w.root)/Bin/info/pre-commit.trashinfo'
            """).status == 0)
        let forgedInfo = try w.run(["trash", "--trash-dir", "Bin", "--restore", "pre-commit"])
        #expect(forgedInfo.status == 1, "\(forgedInfo)")
        #expect(forgedInfo.stdout.contains("skipped restore Bin/files/pre-commit: the trash folder Bin is owned by uid 12345"), "\(forgedInfo)")
        w.noVictimHook()
        let plantedList = try w.run(["trash", "--trash-dir", "Bin", "--list"])
        #expect(plantedList.stdout == "pre-commit\t2026-01-01T00:00:00\t16\t(origin unknown)\n", "\(plantedList)")

        // 4. A record root did write (a trusted folder, a root-owned .trashinfo) naming the victim's folder for the
        // co-tenant's item: a restore never puts one user's file into another user's folder.
        #expect(try w.run(["trash", "--trash-dir", "Desk", "--layout", "freedesktop", "Trash/hook.sh"]).status == 0)
        try Data("[Trash Info]\nPath=\(w.root)/victim/.git/hooks/pre-commit\nDeletionDate=2026-01-01T00:00:00\n".utf8)
            .write(to: URL(fileURLWithPath: w.root + "/Desk/info/hook.sh.trashinfo"))
        let other = try policyctl(["trash", "--root", w.root, "--state-dir", w.scratch.path + "/other-state",
                                   "--trash-dir", "Desk", "--restore", "hook.sh"])
        #expect(other.status == 1, "\(other)")
        #expect(other.stdout.contains("skipped restore Desk/files/hook.sh: its destination folder victim/.git/hooks is owned by uid 12346, neither root, uid 0 nor the item's owner (uid 12345)"), "\(other)")
        w.noVictimHook()
        #expect(w.content("Desk/files/hook.sh") == CoTenantTrashTests.script)
    }

    @Test("(f) a legitimate trash then restore round trip: the victim's file comes back with its owner and mode",
          .enabled(if: CoTenant.isAvailable))
    func roundTrip() throws {
        for (policy, layout) in [(0, "app"), (1, "freedesktop")] {
            let w = try World()
            let apply = try w.apply(policy == 0 ? w.appPolicy : w.freedesktopPolicy)
            #expect(apply.status == 0, "\(layout): \(apply)")
            #expect(w.content("victim/data.sqlite") == nil, "\(layout)")
            let restore = try w.run(["trash", "--policy", policy == 0 ? w.appPolicy : w.freedesktopPolicy, "--restore", "data.sqlite"])
            #expect(restore.status == 0, "\(layout): \(restore)")
            try w.victimIntact()
            let left = try FileManager.default.contentsOfDirectory(atPath: w.root + (layout == "app" ? "/Trash" : "/Trash/files"))
            #expect(left.isEmpty, "\(layout): \(left)")
        }
    }
}
