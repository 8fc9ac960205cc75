// `policyctl trash` and `--restore` end to end: Finder-style unique names, FreeDesktop .trashinfo and app
// xattr stamps, journaled like apply, and restores that never replace anything.
import TreeFixture
import Foundation
import StoragePolicy
import Testing

@Suite("policyctl trash (binary)")
struct ApplyTrashTests {
    @Test("FreeDesktop layout: files/ and info/NAME.trashinfo, unique names, restore puts it back")
    func freedesktop() throws {
        let scratch = ScratchDirectory("trash")
        let root = scratch.sub("root")
        try buildTree(at: root, [.dir("docs"), .file("docs/report.pdf", size: 11), .dir("other"), .file("other/report.pdf", size: 12),
                                 .dir("Trash"), .dir("Trash/files"), .dir("Trash/info"), .file("Trash/files/report.pdf", size: 1),
                                 .file("Trash/info/report.pdf.trashinfo", size: 1)])
        let run = try policyctl(["trash", "--root", root, "--trash-dir", "Trash", "docs/report.pdf", root + "/other/report.pdf"])
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.contains("trash docs/report.pdf -> Trash/files/report (2).pdf"))
        #expect(run.stdout.contains("trash other/report.pdf -> Trash/files/report (3).pdf"))
        let info = try String(contentsOfFile: root + "/Trash/info/report (2).pdf.trashinfo", encoding: .utf8)
        let lines = info.split(separator: "\n")
        #expect(lines.count == 3)
        #expect(lines[0] == "[Trash Info]")
        #expect(lines[1] == "Path=\(root)/docs/report.pdf")
        #expect(lines[2].hasPrefix("DeletionDate="))
        #expect(lines[2].count == "DeletionDate=2026-01-01T00:00:00".count)

        let list = try policyctl(["trash", "--root", root, "--trash-dir", "Trash", "--list"])
        #expect(list.stdout.contains("report (2).pdf\t"))
        #expect(list.stdout.contains("\tdocs/report.pdf"))

        let restore = try policyctl(["trash", "--root", root, "--trash-dir", "Trash", "--restore", "report (2).pdf"])
        #expect(restore.status == 0, "\(restore)")
        #expect(FileManager.default.fileExists(atPath: root + "/docs/report.pdf"))
        #expect(!FileManager.default.fileExists(atPath: root + "/Trash/info/report (2).pdf.trashinfo"))
        #expect(!FileManager.default.fileExists(atPath: root + "/Trash/files/report (2).pdf"))
        try Data().write(to: URL(fileURLWithPath: root + "/other/report.pdf"))
        let taken = try policyctl(["trash", "--root", root, "--trash-dir", "Trash", "--restore", "report (3).pdf"])
        #expect(taken.status == 1)
        #expect(taken.stdout.contains("other/report.pdf exists; nothing replaced"))
        #expect(FileManager.default.fileExists(atPath: root + "/Trash/files/report (3).pdf"))
    }

    @Test("app layout: items directly in the folder with the trash stamp and origin xattrs; restore removes them")
    func appLayout() throws {
        let scratch = ScratchDirectory("trash")
        let root = scratch.sub("root")
        try buildTree(at: root, [.dir("Documents"), .dir("Documents/UserFiles"), .file("Documents/UserFiles/Notes.sqlite", size: 9),
                                 .dir("Documents/UserFiles/album"), .file("Documents/UserFiles/album/a.jpg")])
        let run = try policyctl(["trash", "--root", root, "--trash-dir", "Documents/UserFiles/.Trash",
                                 "Documents/UserFiles/Notes.sqlite", "Documents/UserFiles/album"])
        #expect(run.status == 0, "\(run)")
        let m = try manifest(of: root)
        #expect(m.contains { $0.hasPrefix("Documents/UserFiles/.Trash/Notes.sqlite file size=9") && $0.contains("user.policyctl.origin=Documents/UserFiles/Notes.sqlite") && $0.contains("user.policyctl.trashed=*") })
        #expect(m.contains { $0.hasPrefix("Documents/UserFiles/.Trash/album directory") })
        let stamp = try DirectoryHandle.open(root: root + "/Documents/UserFiles/.Trash")
            .extendedAttribute(Markers.trashStampAttribute, of: FileName("Notes.sqlite")!)
        let seconds = Int64(String(decoding: stamp ?? [], as: UTF8.self)) ?? 0
        #expect(abs(seconds - Int64(Date().timeIntervalSince1970)) < 60)

        let restore = try policyctl(["trash", "--root", root, "--trash-dir", "Documents/UserFiles/.Trash", "--restore", "Notes.sqlite", "album", "nonesuch"])
        #expect(restore.status == 1)
        #expect(restore.stdout.contains("skipped restore Documents/UserFiles/.Trash/nonesuch: not in the trash folder"))
        let back = try manifest(of: root)
        #expect(back.contains { $0 == "Documents/UserFiles/Notes.sqlite file size=9 mtime=\(manifestTime(ageHours: 48))" })
        #expect(back.contains("Documents/UserFiles/album/a.jpg file size=10 mtime=\(manifestTime(ageHours: 48))"))
        let journal = try policyctl(["journal", "--root", root])
        #expect(journal.stdout.contains("  trash  "))
        #expect(journal.stdout.contains("  restore  "))
    }

    @Test("trash is journaled: a crash midway is rolled back by recover")
    func trashCrash() throws {
        let scratch = ScratchDirectory("trash")
        let root = scratch.sub("root")
        try buildTree(at: root, [.dir("d"), .file("d/one"), .file("d/two"), .file("d/three")])
        let before = try manifest(of: root)
        let run = try policyctl(["trash", "--root", root, "--trash-dir", ".Trash", "d/one", "d/two", "d/three"],
                                environment: ["POLICYCTL_CRASH_AFTER_CHANGES": "5"])
        #expect(run.signal == SIGKILL)
        #expect(try policyctl(["recover", "--root", root]).status == 0)
        #expect(try manifest(of: root) == before)
    }

    @Test("a refused trash (the trash folder itself, an item already in it) journals nothing: no empty transaction")
    func refusedJournalsNothing() throws {
        let scratch = ScratchDirectory("trash")
        let root = scratch.sub("root")
        try buildTree(at: root, [.dir("data"), .dir("data/Trash"), .dir("data/Trash/files"), .dir("data/Trash/info"),
                                 .file("data/Trash/files/old.txt", size: 1)])
        let refused = try policyctl(["trash", "--root", root, "--trash-dir", "data/Trash", "data", "data/Trash/files/old.txt"])
        #expect(refused.status == 1, "\(refused)")
        #expect(refused.stdout.contains("skipped trash data: holds the trash folder itself"), "\(refused.stdout)")
        #expect(refused.stdout.contains("skipped trash data/Trash/files/old.txt: is already in the trash folder"), "\(refused.stdout)")
        #expect(!refused.stdout.contains("transaction"), "\(refused.stdout)")
        let journal = try policyctl(["journal", "--root", root])
        #expect(journal.stdout.hasPrefix("No transactions recorded"), "\(journal.stdout)")
    }

    @Test("usage errors: no folder, a path outside the root")
    func usage() throws {
        let scratch = ScratchDirectory("trash")
        let root = scratch.sub("root")
        #expect(try policyctl(["trash", "--root", root, "x"]).status == 64)
        let outside = try policyctl(["trash", "--root", root, "--trash-dir", ".Trash", "/etc/passwd"])
        #expect(outside.status == 64)
        #expect(outside.stderr.contains("is not inside the root"))
        let missing = try policyctl(["trash", "--root", root, "--trash-dir", ".Trash", "nothing-here"])
        #expect(missing.status == 1)
        #expect(missing.stdout.contains("no such file or directory"))
    }

    @Test("trash --policy loads like every command: an unreadable policy is 74 naming the file, an invalid one 65 at file:line:col")
    func policyErrors() throws {
        let scratch = ScratchDirectory("trash-policy")
        let root = scratch.sub("root")
        try buildTree(at: root, [.dir("docs"), .file("docs/a.txt")])
        let missing = try policyctl(["trash", "--root", root, "--policy", scratch.path + "/nope.yaml", "docs/a.txt"])
        #expect(missing.status == 74, "\(missing)")
        #expect(missing.stderr.contains("nope.yaml"), "\(missing)")
        let invalid = scratch.path + "/bad.yaml"
        try writePolicy(invalid, "version: 1\nname: bad\nrules:\n  - name: r\n    path: tmp\n    expire: soon\n")
        let bad = try policyctl(["trash", "--root", root, "--policy", invalid, "docs/a.txt"])
        #expect(bad.status == 65, "\(bad)")
        #expect(bad.stderr.contains("bad.yaml:6:"), "\(bad)")
        #expect(bad.stderr.contains("1 error in the policy; nothing was done."), "\(bad)")
        #expect(FileManager.default.fileExists(atPath: root + "/docs/a.txt"))
    }
}
