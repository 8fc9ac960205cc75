// The trash command's newer inputs under a co-tenant (uid 12345), against the built binary as root in a 1777
// root: a `directorysizes` the co-tenant planted in a trash folder it owns is never read or written; `--restore
// --to` into the co-tenant's folder is refused; `--empty` never follows a symlink the co-tenant planted in files/.
import TreeFixture
import Foundation
import StoragePolicy
import Testing

@Suite("trash --list sizes, --restore --to and --empty under a co-tenant (binary)")
struct CoTenantTrashCommandTests {
    struct World {
        let scratch = ScratchDirectory("cotenant-trashcmd")
        let root: String
        let state: String

        init() throws {
            chmod(scratch.path, 0o755)
            root = scratch.sub("root")
            chmod(root, 0o1777)
            state = scratch.path + "/state"
        }

        func run(_ arguments: [String]) throws -> RunResult {
            try policyctl(arguments + ["--root", root, "--state-dir", state])
        }

        func exists(_ rel: String) -> Bool {
            var st = stat()
            return lstat(root + "/" + rel, &st) == 0
        }
    }

    @Test("a directorysizes the co-tenant planted in its own trash folder is neither read nor rewritten",
          .enabled(if: CoTenant.isAvailable))
    func plantedCacheIgnored() throws {
        let w = try World()
        let t = w.root + "/Trash"
        // The co-tenant's FreeDesktop trash, an item folder of 7 bytes, and a cache claiming 999999 for it with the
        // right mtime (so only the trust rule stands between it and the listing).
        #expect(try CoTenant.sh("""
            mkdir -p '\(t)/files/dir' '\(t)/info' && printf 1234567 > '\(t)/files/dir/x' &&
            printf '[Trash Info]\\nPath=\(w.root)/dir\\nDeletionDate=2026-01-01T00:00:00\\n' > '\(t)/info/dir.trashinfo' &&
            echo "999999 $(stat -c %Y '\(t)/info/dir.trashinfo') dir" > '\(t)/directorysizes'
            """).status == 0)
        let planted = try String(contentsOfFile: t + "/directorysizes", encoding: .utf8)
        let list = try w.run(["trash", "--trash-dir", "Trash", "--list", "--format", "json"])
        #expect(list.status == 0, "\(list)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [String: Any])
        let items = try #require(json["items"] as? [[String: Any]])
        #expect(items.count == 1)
        #expect(items.first?["size"] as? Int == 7)
        // Untrusted: no origin either.
        #expect(items.first?["originalPath"] is NSNull)
        // A move into it is refused, a restore from it too: the cache is untouched.
        try buildTree(at: w.root, [.dir("mine"), .dir("mine/d"), .file("mine/d/f", size: 3)])
        let moved = try w.run(["trash", "--trash-dir", "Trash", "mine/d"])
        #expect(moved.status == 1, "\(moved)")
        let restored = try w.run(["trash", "--trash-dir", "Trash", "--restore", "dir", "--to", "mine/dir"])
        #expect(restored.status == 1, "\(restored)")
        #expect(try String(contentsOfFile: t + "/directorysizes", encoding: .utf8) == planted)
        #expect(w.exists("mine/d/f") && !w.exists("mine/dir"))
    }

    @Test("--restore --to into a folder the co-tenant owns (and root does not) is refused; the item stays in the trash",
          .enabled(if: CoTenant.isAvailable))
    func restoreToCoTenantFolder() throws {
        let w = try World()
        try buildTree(at: w.root, [.dir("private"), .file("private/key", size: 32)])
        chmod(w.root + "/private", 0o700)
        #expect(try CoTenant.sh("mkdir -m 0777 '\(w.root)/att'").status == 0)
        #expect(try w.run(["trash", "--trash-dir", "Trash", "--layout", "freedesktop", "private/key"]).status == 0)
        let run = try w.run(["trash", "--trash-dir", "Trash", "--restore", "key", "--to", "att/key"])
        #expect(run.status == 1, "\(run)")
        #expect(run.stdout.contains("its destination folder att is owned by uid 12345, neither root, uid 0 nor the item's owner (uid 0)"), "\(run.stdout)")
        #expect(!w.exists("att/key"))
        #expect(w.exists("Trash/files/key") && w.exists("Trash/info/key.trashinfo"))
        // Into root's own folder it goes.
        #expect(try w.run(["trash", "--trash-dir", "Trash", "--restore", "key", "--to", "private/key2"]).status == 0)
        #expect(w.exists("private/key2") && !w.exists("Trash/files/key"))
    }

    @Test("--empty never follows a symlink planted in files/ (an item, or inside a folder item): the target stays whole",
          .enabled(if: CoTenant.isAvailable))
    func emptyNeverFollowsPlantedSymlink() throws {
        let w = try World()
        // Root's data the links point at.
        try buildTree(at: w.root, [.dir("victim"), .file("victim/data", size: 11), .dir("victim/sub"), .file("victim/sub/more", size: 5)])
        chmod(w.root + "/victim", 0o700)
        let t = w.root + "/Trash"
        // A trusted trash (root's, 0700) whose items are a folder the co-tenant owns; inside it the co-tenant plants
        // symlinks to the victim; and, as a top-level item, a symlink root made from the co-tenant's name.
        mkdir(t, 0o700); mkdir(t + "/files", 0o700); mkdir(t + "/info", 0o700)
        mkdir(t + "/files/box", 0o777)
        #expect(chown(t + "/files/box", CoTenant.uid, CoTenant.uid) == 0)
        chmod(t, 0o755); chmod(t + "/files", 0o755)
        #expect(try CoTenant.sh("ln -s '\(w.root)/victim' '\(t)/files/box/link' && ln -s '\(w.root)/victim/data' '\(t)/files/box/file'").status == 0)
        chmod(t, 0o700); chmod(t + "/files", 0o700)
        symlink(w.root + "/victim", t + "/files/toplink")
        for name in ["box", "toplink"] {
            try Data("[Trash Info]\nPath=\(w.root)/\(name)\nDeletionDate=2020-01-01T00:00:00Z\n".utf8)
                .write(to: URL(fileURLWithPath: t + "/info/\(name).trashinfo"))
        }
        let run = try w.run(["trash", "--trash-dir", "Trash", "--empty"])
        #expect(run.status == 0, "\(run)")
        #expect(!w.exists("Trash/files/box") && !w.exists("Trash/files/toplink"))
        #expect(!w.exists("Trash/info/box.trashinfo") && !w.exists("Trash/info/toplink.trashinfo"))
        #expect(try String(contentsOfFile: w.root + "/victim/data", encoding: .utf8) == String(repeating: "a", count: 11))
        #expect(w.exists("victim/sub/more"))
    }

    @Test("another volume's .Trash-0 the co-tenant planted is never moved into: the item stays, exit 1",
          .enabled(if: CoTenant.isAvailable && ScratchDirectory.canMountTmpfs))
    func plantedVolumeTrash() throws {
        let w = try World()
        let vol = try w.scratch.tmpfs("root/vol", kilobytes: 1024)
        chmod(vol, 0o1777)
        try buildTree(at: w.root, [.file("vol/secret", size: 5)])
        chmod(vol + "/secret", 0o600)
        #expect(try CoTenant.sh("mkdir -m 0777 '\(vol)/.Trash-0' '\(vol)/.Trash-0/files' '\(vol)/.Trash-0/info'").status == 0)
        let run = try policyctl(["trash", "--root", w.root, "--trash-dir", "Trash", "vol/secret"])
        #expect(run.status == 1, "\(run)")
        #expect(run.stdout.contains("the trash folder .Trash-0 is owned by uid 12345"), "\(run.stdout)")
        #expect(w.exists("vol/secret"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: vol + "/.Trash-0/files").isEmpty)
    }
}
