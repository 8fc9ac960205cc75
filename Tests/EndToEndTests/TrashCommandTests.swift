// `policyctl trash --list --format json` (with sizes), `--restore NAME --to PATH`, `--empty [--older-than]` and the
// FreeDesktop `directorysizes` cache they keep current, end to end with the built binary on generated trees.
import TreeFixture
import Foundation
import StoragePolicy
import Testing

@Suite("policyctl trash --list json, --restore --to, --empty, directorysizes (binary)")
struct TrashCommandTests {
    /// The `.trashinfo` of an item trashed `daysAgo` days ago from ROOT/`origin` (DeletionDate in UTC, with Z).
    static func trashInfo(root: String, origin: String, daysAgo: Double) -> String {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime]
        return "[Trash Info]\nPath=\(root)/\(origin)\nDeletionDate=\(f.string(from: Date().addingTimeInterval(-daysAgo * 86_400)))\n"
    }

    static func write(_ path: String, _ text: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    static func mtimeSeconds(_ path: String) -> Int64 {
        var st = stat()
        precondition(lstat(path, &st) == 0, "no \(path)")
        return Int64(st.st_mtim.tv_sec)
    }

    static func setMtime(_ path: String, seconds: Int64) {
        var times = [timespec(tv_sec: Int(seconds), tv_nsec: 0), timespec(tv_sec: Int(seconds), tv_nsec: 0)]
        utimensat(AT_FDCWD, path, &times, AT_SYMLINK_NOFOLLOW)
    }

    static func exists(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0
    }

    static func listJSON(_ root: String, _ extra: [String] = []) throws -> [String: Any] {
        let run = try policyctl(["trash", "--root", root, "--trash-dir", "Trash", "--list", "--format", "json"] + extra)
        #expect(run.status == 0, "\(run)")
        return try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], "\(run.stdout)")
    }

    /// A folder `docs/album` of 100 + 50 bytes of regular files, a symlink to a big file outside (counted as
    /// nothing, never followed) and an empty folder; a 9-byte `docs/notes.txt`.
    static func tree(_ root: String) throws {
        try buildTree(at: root, [.dir("docs"), .dir("docs/album"), .file("docs/album/a.jpg", size: 100), .dir("docs/album/sub"),
                                 .file("docs/album/sub/b.jpg", size: 50), .dir("docs/album/empty"),
                                 .symlink("docs/album/big", target: "/proc/kcore"), .file("docs/notes.txt", size: 9),
                                 .dir("Trash"), .dir("Trash/files"), .dir("Trash/info"), .dir("elsewhere")])
    }

    @Test("trash of a folder into a FreeDesktop trash writes its directorysizes entry; --list --format json gives every item exactly")
    func listJSONAndCache() throws {
        let scratch = ScratchDirectory("trash-json")
        let root = scratch.sub("root")
        try Self.tree(root)
        let run = try policyctl(["trash", "--root", root, "--trash-dir", "Trash", "docs/album", "docs/notes.txt"])
        #expect(run.status == 0, "\(run)")
        let infoMtime = Self.mtimeSeconds(root + "/Trash/info/album.trashinfo")
        let cache = try String(contentsOfFile: root + "/Trash/directorysizes", encoding: .utf8)
        #expect(cache == "150 \(infoMtime) album\n")
        #expect(!Self.exists(root + "/Trash/.directorysizes.policyctl.tmp"))

        let json = try Self.listJSON(root)
        #expect(json["folder"] as? String == "Trash")
        let items = try #require(json["items"] as? [[String: Any]])
        #expect(items.count == 2)
        #expect(items.map { $0["name"] as? String } == ["album", "notes.txt"])
        #expect(items.map { $0["type"] as? String } == ["directory", "file"])
        #expect(items.map { $0["size"] as? Int } == [150, 9])
        #expect(items.map { $0["originalPath"] as? String } == ["docs/album", "docs/notes.txt"])
        #expect(items.allSatisfy { Set($0.keys) == ["name", "trashedAt", "originalPath", "type", "size"] })
        // RFC 3339 in UTC, and the moment the .trashinfo records (written now).
        let f = ISO8601DateFormatter()
        let at = try #require((items[0]["trashedAt"] as? String).flatMap(f.date(from:)))
        #expect(abs(at.timeIntervalSinceNow) < 120)
        #expect((items[0]["trashedAt"] as? String)?.hasSuffix("Z") == true)

        // The text form gains the size column: name, when, size, origin.
        let text = try policyctl(["trash", "--root", root, "--trash-dir", "Trash", "--list"])
        let lines = text.stdout.split(separator: "\n").map { $0.split(separator: "\t", omittingEmptySubsequences: false) }
        #expect(lines.map { $0.count } == [4, 4])
        #expect(lines.map { String($0[2]) } == ["150", "9"])
        #expect(lines.map { String($0[3]) } == ["docs/album", "docs/notes.txt"])
    }

    @Test("a current cache entry is used; a stale one (the .trashinfo mtime differs) is ignored, whatever size it claims; a broken line is skipped")
    func cacheCurrentAndStale() throws {
        let scratch = ScratchDirectory("trash-cache")
        let root = scratch.sub("root")
        try Self.tree(root)
        #expect(try policyctl(["trash", "--root", root, "--trash-dir", "Trash", "docs/album"]).status == 0)
        let infoMtime = Self.mtimeSeconds(root + "/Trash/info/album.trashinfo")
        // Root wrote it (trusted) and it is current: the listing takes its word.
        try Self.write(root + "/Trash/directorysizes", "not a line\n-5 1 x\n777 \(infoMtime) album\n")
        chmod(root + "/Trash/directorysizes", 0o600)
        #expect((try Self.listJSON(root)["items"] as? [[String: Any]])?.first?["size"] as? Int == 777)
        // Stale: a forged huge size with another mtime is ignored; the folder is measured.
        try Self.write(root + "/Trash/directorysizes", "9223372036854775807 \(infoMtime + 1) album\n")
        #expect((try Self.listJSON(root)["items"] as? [[String: Any]])?.first?["size"] as? Int == 150)
        // A restore drops the entry (the stale one too) and rewrites the file atomically.
        #expect(try policyctl(["trash", "--root", root, "--trash-dir", "Trash", "--restore", "album"]).status == 0)
        #expect(try String(contentsOfFile: root + "/Trash/directorysizes", encoding: .utf8) == "")
        #expect(Self.exists(root + "/docs/album/sub/b.jpg"))
    }

    @Test("--restore NAME --to PATH puts the item elsewhere under the root, never replacing anything, journaled as a restore")
    func restoreTo() throws {
        let scratch = ScratchDirectory("trash-to")
        let root = scratch.sub("root")
        try Self.tree(root)
        #expect(try policyctl(["trash", "--root", root, "--trash-dir", "Trash", "docs/notes.txt", "docs/album"]).status == 0)
        // Taken: nothing replaced, the item stays in the trash.
        try Self.write(root + "/elsewhere/taken.txt", "mine\n")
        let taken = try policyctl(["trash", "--root", root, "--trash-dir", "Trash", "--restore", "notes.txt", "--to", "elsewhere/taken.txt"])
        #expect(taken.status == 1, "\(taken)")
        #expect(taken.stdout.contains("elsewhere/taken.txt exists; nothing replaced"), "\(taken.stdout)")
        #expect(try String(contentsOfFile: root + "/elsewhere/taken.txt", encoding: .utf8) == "mine\n")
        #expect(Self.exists(root + "/Trash/files/notes.txt"))
        // A folder that does not exist is not made up.
        let missing = try policyctl(["trash", "--root", root, "--trash-dir", "Trash", "--restore", "notes.txt", "--to", "nowhere/notes.txt"])
        #expect(missing.status == 1, "\(missing)")
        #expect(!Self.exists(root + "/nowhere"))
        // Done: there, with its .trashinfo gone; an absolute path under the root works too.
        let done = try policyctl(["trash", "--root", root, "--trash-dir", "Trash", "--restore", "notes.txt", "--to", root + "/elsewhere/notes.txt"])
        #expect(done.status == 0, "\(done)")
        #expect(Self.exists(root + "/elsewhere/notes.txt"))
        #expect(!Self.exists(root + "/Trash/files/notes.txt"))
        #expect(!Self.exists(root + "/Trash/info/notes.txt.trashinfo"))
        #expect(!Self.exists(root + "/docs/notes.txt"))
        let album = try policyctl(["trash", "--root", root, "--trash-dir", "Trash", "--restore", "album", "--to", "elsewhere/photos"])
        #expect(album.status == 0, "\(album)")
        #expect(Self.exists(root + "/elsewhere/photos/sub/b.jpg"))
        #expect(try String(contentsOfFile: root + "/Trash/directorysizes", encoding: .utf8) == "")
        let journal = try policyctl(["journal", "--root", root])
        // Each attempt is a restore transaction, the two refused ones with their skips.
        #expect(journal.stdout.components(separatedBy: "  restore  ").count - 1 == 4, "\(journal.stdout)")
        #expect(journal.stdout.contains("skipped restore Trash/files/notes.txt: the folder it goes back to, nowhere, is gone; not restored (no folder is made)"), "\(journal.stdout)")
        // Usage: --to needs --restore and one name; outside the root is refused.
        #expect(try policyctl(["trash", "--root", root, "--trash-dir", "Trash", "--restore", "a", "b", "--to", "x"]).status == 64)
        #expect(try policyctl(["trash", "--root", root, "--trash-dir", "Trash", "--list", "--to", "x"]).status == 64)
        #expect(try policyctl(["trash", "--root", root, "--trash-dir", "Trash", "--restore", "a", "--to", "/etc/x"]).status == 64)
    }

    /// A FreeDesktop trash with `old` (10 days, a folder with a cache entry), `old.txt` (10 days), `new.txt` (now),
    /// `undated.txt` (no .trashinfo) and an orphaned old .trashinfo.
    static func emptyTree(_ root: String) throws {
        try buildTree(at: root, [.dir("Trash"), .dir("Trash/files"), .dir("Trash/info"), .dir("Trash/files/old"),
                                 .file("Trash/files/old/a", size: 20), .file("Trash/files/old.txt", size: 3),
                                 .file("Trash/files/new.txt", size: 4), .file("Trash/files/undated.txt", size: 5)])
        try write(root + "/Trash/info/old.trashinfo", trashInfo(root: root, origin: "old", daysAgo: 10))
        try write(root + "/Trash/info/old.txt.trashinfo", trashInfo(root: root, origin: "old.txt", daysAgo: 10))
        try write(root + "/Trash/info/new.txt.trashinfo", trashInfo(root: root, origin: "new.txt", daysAgo: 0))
        try write(root + "/Trash/info/gone.txt.trashinfo", trashInfo(root: root, origin: "gone.txt", daysAgo: 10))
        let infoMtime = mtimeSeconds(root + "/Trash/info/old.trashinfo")
        try write(root + "/Trash/directorysizes", "20 \(infoMtime) old\n")
        chmod(root + "/Trash/directorysizes", 0o600)
    }

    @Test("--empty --older-than 7d deletes what retention would, with records and cache entries; undated items are kept and reported (exit 1); --empty takes the rest")
    func empty() throws {
        let scratch = ScratchDirectory("trash-empty")
        let root = scratch.sub("root")
        try Self.emptyTree(root)
        let run = try policyctl(["trash", "--root", root, "--trash-dir", "Trash", "--empty", "--older-than", "7d"])
        #expect(run.status == 1, "\(run)")
        #expect(run.stderr.contains("kept: Trash/files/undated.txt: cannot tell when it was trashed: there is no info/undated.txt.trashinfo; kept"), "\(run.stderr)")
        var m = try manifest(of: root).map { String($0.split(separator: " ")[0]) }
        #expect(m.sorted() == ["Trash", "Trash/directorysizes", "Trash/files", "Trash/files/new.txt", "Trash/files/undated.txt",
                               "Trash/info", "Trash/info/new.txt.trashinfo"])
        #expect(try String(contentsOfFile: root + "/Trash/directorysizes", encoding: .utf8) == "")
        let journal = try policyctl(["journal", "--root", root])
        #expect(journal.stdout.contains("policyctl-trash-empty"), "\(journal.stdout)")

        let all = try policyctl(["trash", "--root", root, "--trash-dir", "Trash", "--empty"])
        #expect(all.status == 1, "\(all)")
        m = try manifest(of: root).map { String($0.split(separator: " ")[0]) }
        #expect(m.sorted() == ["Trash", "Trash/directorysizes", "Trash/files", "Trash/files/undated.txt", "Trash/info"])
        let nothing = try policyctl(["trash", "--root", root, "--trash-dir", "Trash", "--empty", "--older-than", "30d"])
        #expect(nothing.stdout == "Nothing to delete in the trash folder Trash trashed more than 30d ago.\n", "\(nothing)")
        #expect(nothing.status == 1, "the undated item is still reported: \(nothing)")
        // Usage.
        #expect(try policyctl(["trash", "--root", root, "--trash-dir", "Trash", "--empty", "--older-than", "soon"]).status == 64)
        #expect(try policyctl(["trash", "--root", root, "--trash-dir", "Trash", "--older-than", "7d", "--list"]).status == 64)
        #expect(try policyctl(["trash", "--root", root, "--trash-dir", "Trash", "--empty", "x"]).status == 64)
    }

    @Test("--empty is journaled like apply: a crash midway is finished or rolled back by recover, never half an item")
    func emptyCrash() throws {
        let scratch = ScratchDirectory("trash-empty-crash")
        let root = scratch.sub("root")
        try Self.emptyTree(root)
        let run = try policyctl(["trash", "--root", root, "--trash-dir", "Trash", "--empty", "--older-than", "7d"],
                                environment: ["POLICYCTL_CRASH_AFTER_CHANGES": "2"])
        #expect(run.signal == SIGKILL, "\(run)")
        #expect(try policyctl(["recover", "--root", root]).status == 0)
        let m = Set(try manifest(of: root).map { String($0.split(separator: " ")[0]) })
        // Each item with its record: both there, or both gone.
        for (item, info) in [("Trash/files/old", "Trash/info/old.trashinfo"), ("Trash/files/old.txt", "Trash/info/old.txt.trashinfo")] {
            #expect(m.contains(item) == m.contains(info), "\(m.sorted())")
        }
        #expect(m.contains("Trash/files/new.txt") && m.contains("Trash/files/undated.txt"))
        let again = try policyctl(["trash", "--root", root, "--trash-dir", "Trash", "--empty", "--older-than", "7d"])
        #expect(again.status == 1, "\(again)")
        #expect(!Self.exists(root + "/Trash/files/old") && !Self.exists(root + "/Trash/files/old.txt"))
    }

    @Test("apply's trash retention drops the directorysizes entries of the folder items it deletes, keeps the rest")
    func retentionDropsEntries() throws {
        let scratch = ScratchDirectory("trash-retention-cache")
        let root = scratch.sub("root")
        try Self.emptyTree(root)
        try buildTree(at: root, [.dir("Trash/files/recent"), .file("Trash/files/recent/b", size: 6)])
        try Self.write(root + "/Trash/info/recent.trashinfo", Self.trashInfo(root: root, origin: "recent", daysAgo: 0))
        let old = Self.mtimeSeconds(root + "/Trash/info/old.trashinfo")
        let recent = Self.mtimeSeconds(root + "/Trash/info/recent.trashinfo")
        try Self.write(root + "/Trash/directorysizes", "20 \(old) old\n6 \(recent) recent\n")
        chmod(root + "/Trash/directorysizes", 0o600)
        let policy = scratch.path + "/p.yaml"
        try Self.write(policy, "version: 1\nname: retention\nrules:\n  - name: trash\n    path: Trash\n    trash: { retain: 7d, layout: freedesktop }\n")
        let run = try policyctl(["apply", "--policy", policy, "--root", root, "--yes"])
        #expect(run.status == 0, "\(run)")
        #expect(!Self.exists(root + "/Trash/files/old"))
        #expect(try String(contentsOfFile: root + "/Trash/directorysizes", encoding: .utf8) == "6 \(recent) recent\n")
    }

    // MARK: another volume

    static func mode(_ path: String) -> (uid: uid_t, mode: mode_t)? {
        var st = stat()
        guard lstat(path, &st) == 0 else { return nil }
        return (st.st_uid, st.st_mode & 0o7777)
    }

    @Test("an item on another volume goes into that volume's .Trash-UID (made 0700), journaled there; the rest into the trash folder",
          .enabled(if: ScratchDirectory.canMountTmpfs))
    func otherVolume() throws {
        let scratch = ScratchDirectory("trash-volume")
        let root = scratch.sub("root")
        let vol = try scratch.tmpfs("root/vol", kilobytes: 1024)
        try buildTree(at: root, [.dir("docs"), .file("docs/a.txt", size: 3), .file("vol/photo.jpg", size: 7),
                                 .dir("vol/album"), .file("vol/album/x", size: 20)])
        let run = try policyctl(["trash", "--root", root, "--trash-dir", "Trash", "--layout", "freedesktop", "docs/a.txt", "vol/photo.jpg", "vol/album"])
        #expect(run.status == 0, "\(run)")
        #expect(run.stderr.contains("note: 2 items on the volume mounted at \(vol): into its trash \(vol)/.Trash-0, not copied across volumes"), "\(run.stderr)")
        #expect(Self.exists(root + "/Trash/files/a.txt"))
        #expect(Self.exists(vol + "/.Trash-0/files/photo.jpg") && Self.exists(vol + "/.Trash-0/files/album/x"))
        #expect(!Self.exists(vol + "/photo.jpg") && !Self.exists(root + "/Trash/files/photo.jpg"))
        for part in [".Trash-0", ".Trash-0/files", ".Trash-0/info"] {
            #expect(Self.mode(vol + "/" + part).map { $0.uid == 0 && $0.mode == 0o700 } == true, "\(part)")
        }
        let info = try String(contentsOfFile: vol + "/.Trash-0/info/photo.jpg.trashinfo", encoding: .utf8)
        #expect(info.hasPrefix("[Trash Info]\nPath=\(vol)/photo.jpg\nDeletionDate="))
        let infoMtime = Self.mtimeSeconds(vol + "/.Trash-0/info/album.trashinfo")
        #expect(try String(contentsOfFile: vol + "/.Trash-0/directorysizes", encoding: .utf8) == "20 \(infoMtime) album\n")
        // Journaled on the volume: recover and journal find it with --root at the volume's top.
        let journal = try policyctl(["journal", "--root", vol])
        #expect(journal.stdout.contains("  trash  "), "\(journal)")
        // And restored from there as from any trash.
        #expect(try policyctl(["trash", "--root", vol, "--trash-dir", ".Trash-0", "--restore", "photo.jpg"]).status == 0)
        #expect(Self.exists(vol + "/photo.jpg"))
    }

    @Test("another volume's root-owned sticky .Trash is used as .Trash/UID; a non-sticky or symlinked one is passed over for .Trash-UID",
          .enabled(if: ScratchDirectory.canMountTmpfs))
    func otherVolumeSharedTrash() throws {
        let scratch = ScratchDirectory("trash-volume-shared")
        let root = scratch.sub("root")
        let vol = try scratch.tmpfs("root/vol", kilobytes: 1024)
        try buildTree(at: root, [.file("vol/a", size: 1), .file("vol/b", size: 1), .file("vol/c", size: 1)])
        mkdir(vol + "/.Trash", 0o755)
        chmod(vol + "/.Trash", 0o1777)
        #expect(try policyctl(["trash", "--root", root, "--trash-dir", "Trash", "vol/a"]).status == 0)
        #expect(Self.exists(vol + "/.Trash/0/files/a"))
        #expect(Self.mode(vol + "/.Trash/0").map { $0.uid == 0 && $0.mode == 0o700 } == true)
        chmod(vol + "/.Trash", 0o777)
        let plain = try policyctl(["trash", "--root", root, "--trash-dir", "Trash", "vol/b"])
        #expect(plain.status == 0, "\(plain)")
        #expect(plain.stderr.contains("note: \(vol)/.Trash is not sticky (mode 777): not used"), "\(plain.stderr)")
        #expect(Self.exists(vol + "/.Trash-0/files/b"))
        _ = try ChildProcess.run("/bin/rm", ["-rf", vol + "/.Trash"])
        symlink("/tmp", vol + "/.Trash")
        #expect(try policyctl(["trash", "--root", root, "--trash-dir", "Trash", "vol/c"]).status == 0)
        #expect(Self.exists(vol + "/.Trash-0/files/c"))
        // With --state-dir the other volume's move is skipped, naming what to run: nothing moves.
        try buildTree(at: root, [.file("vol/d", size: 1)])
        let state = try policyctl(["trash", "--root", root, "--trash-dir", "Trash", "--state-dir", scratch.path + "/state", "vol/d"])
        #expect(state.status == 1, "\(state)")
        #expect(state.stdout.contains("skipped trash d on the volume mounted at \(vol): with --state-dir"), "\(state.stdout)")
        #expect(Self.exists(vol + "/d"))
    }
}
