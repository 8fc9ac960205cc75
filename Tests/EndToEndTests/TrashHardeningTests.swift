// Trash semantics no input can break, end to end against the built binary: a hostile .trashinfo date never
// stops plan or apply, enforced forbid lands in a real trash (restorable), and a co-tenant's hard link to a
// file outside the root never gets a trash xattr written to its inode.
import TreeFixture
import Foundation
import StoragePolicy
import Testing

@Suite("Trash hardening (binary)")
struct TrashHardeningTests {
    static let freedesktopPolicy = """
        version: 1
        name: p
        rules:
          - name: trash
            path: Trash
            trash: { retain: 30d }
          - name: no-databases
            path: work
            forbid: ["**/*.sqlite"]

        """

    /// True when this process is root and setpriv can switch to uid 12345.
    static let canActAsCoTenant: Bool = {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") else { return false }
        return (try? ChildProcess.run("/usr/bin/setpriv", ["--reuid=12345", "--regid=12345", "--clear-groups", "/bin/true"]))?.status == 0
    }()

    static func coTenant(_ executable: String, _ arguments: [String]) throws -> PolicyctlBinary.Result {
        try ChildProcess.run("/usr/bin/setpriv", ["--reuid=12345", "--regid=12345", "--clear-groups", executable] + arguments)
    }

    static func attributes(_ path: String) throws -> [String] {
        let slash = path.lastIndex(of: "/")!
        return try DirectoryHandle.open(root: String(path[..<slash]))
            .extendedAttributeNames(of: FileName(String(path[path.index(after: slash)...]))!)
    }

    @Test("a DeletionDate past 2262 or before 1677, or 30 February, never stops plan or apply: kept and reported")
    func hostileDates() throws {
        let scratch = ScratchDirectory("trash-dates")
        let root = scratch.sub("root")
        try buildTree(at: root, [.dir("Trash"), .dir("Trash/files"), .dir("Trash/info"), .dir("work"),
                                 .file("Trash/files/late"), .file("Trash/files/early"), .file("Trash/files/feb30")])
        for (name, date) in [("late", "2262-04-12T00:00:00"), ("early", "1677-09-20T00:00:00"), ("feb30", "2023-02-30T00:00:00")] {
            try Data("[Trash Info]\nPath=/x/\(name)\nDeletionDate=\(date)\n".utf8).write(to: URL(fileURLWithPath: "\(root)/Trash/info/\(name).trashinfo"))
        }
        let policy = scratch.path + "/p.yaml"
        try writePolicy(policy, Self.freedesktopPolicy)
        let before = try manifest(of: root)
        let plan = try policyctl(["plan", "--policy", policy, "--root", root])
        #expect(plan.signal == nil && [0, 1].contains(plan.status), "\(plan)")
        #expect(plan.stdout.contains("Trash/files/late: cannot tell when it was trashed: info/late.trashinfo has no readable DeletionDate ('2262-04-12T00:00:00' is not a valid time); kept"))
        #expect(plan.stdout.contains("Trash/files/early: cannot tell when it was trashed"))
        #expect(plan.stdout.contains("Trash/files/feb30: cannot tell when it was trashed: info/feb30.trashinfo has no readable DeletionDate ('2023-02-30T00:00:00' is not a valid time); kept"))
        let apply = try policyctl(["apply", "--policy", policy, "--root", root, "--yes"])
        #expect(apply.signal == nil && apply.status == 0, "\(apply)")
        #expect(try manifest(of: root) == before)
    }

    @Test("enforced forbid moves into files/NAME with info/NAME.trashinfo; --list shows the origin; --restore puts it back")
    func forbidIntoFreedesktop() throws {
        let scratch = ScratchDirectory("trash-forbid")
        let root = scratch.sub("root")
        try buildTree(at: root, [.dir("Trash"), .dir("Trash/files"), .dir("Trash/info"), .dir("work"), .dir("work/sub"),
                                 .file("work/sub/x.sqlite", size: 7), .file("Trash/files/x.sqlite", size: 1)])
        try Data("[Trash Info]\nPath=/elsewhere/x.sqlite\nDeletionDate=2999-01-01T00:00:00\n".utf8)
            .write(to: URL(fileURLWithPath: root + "/Trash/info/x.sqlite.trashinfo"))
        let policy = scratch.path + "/p.yaml"
        try writePolicy(policy, Self.freedesktopPolicy)
        let apply = try policyctl(["apply", "--policy", policy, "--root", root, "--yes"])
        #expect(apply.status == 0, "\(apply)")
        let m = try manifest(of: root)
        #expect(m.contains { $0.hasPrefix("Trash/files/x (2).sqlite file size=7") })
        #expect(!m.contains { $0.hasPrefix("Trash/files/x (2).sqlite/") || $0.hasPrefix("Trash/files/x.sqlite/") })
        #expect(!m.contains { $0.contains("user.policyctl") })
        let info = try String(contentsOfFile: root + "/Trash/info/x (2).sqlite.trashinfo", encoding: .utf8)
        #expect(info.hasPrefix("[Trash Info]\nPath=\(root)/work/sub/x.sqlite\nDeletionDate="))

        let list = try policyctl(["trash", "--root", root, "--policy", policy, "--list"])
        #expect(list.stdout.contains("x (2).sqlite\t"), "\(list)")
        #expect(list.stdout.contains("\twork/sub/x.sqlite\n"))
        let restore = try policyctl(["trash", "--root", root, "--policy", policy, "--restore", "x (2).sqlite"])
        #expect(restore.status == 0, "\(restore)")
        #expect(FileManager.default.fileExists(atPath: root + "/work/sub/x.sqlite"))
        #expect(!FileManager.default.fileExists(atPath: root + "/Trash/files/x (2).sqlite"))
        #expect(!FileManager.default.fileExists(atPath: root + "/Trash/info/x (2).sqlite.trashinfo"))
    }

    @Test("enforced forbid into an app trash: NAME with its stamps, restorable; a missing trash folder is made")
    func forbidIntoAppTrash() throws {
        let scratch = ScratchDirectory("trash-forbid-app")
        let root = scratch.sub("root")
        try buildTree(at: root, [.dir("work"), .file("work/y.sqlite", size: 5)])
        let policy = scratch.path + "/p.yaml"
        try writePolicy(policy, Self.freedesktopPolicy.replacingOccurrences(of: "path: Trash", with: "path: var/Trash"))
        let apply = try policyctl(["apply", "--policy", policy, "--root", root, "--yes"])
        #expect(apply.status == 0, "\(apply)")
        let m = try manifest(of: root)
        #expect(m.contains { $0.hasPrefix("var/Trash/y.sqlite file size=5") && $0.contains("user.policyctl.origin=work/y.sqlite")
            && $0.contains("user.policyctl.trashed=") }, "\(m)")
        #expect(!m.contains { $0.hasPrefix("var/Trash/y.sqlite/") })
        let list = try policyctl(["trash", "--root", root, "--policy", policy, "--list"])
        #expect(list.stdout.contains("y.sqlite\t20"), "\(list)")
        #expect(list.stdout.contains("\twork/y.sqlite\n"))
        let restore = try policyctl(["trash", "--root", root, "--policy", policy, "--restore", "y.sqlite"])
        #expect(restore.status == 0, "\(restore)")
        #expect(try Self.attributes(root + "/work/y.sqlite").filter { $0.hasPrefix("user.policyctl") }.isEmpty)
    }

    @Test("co-tenant hard link to a file outside the root: no xattr on that inode; the index dates, lists and restores it",
          .enabled(if: TrashHardeningTests.canActAsCoTenant))
    func hardLinkedOutsideFile() throws {
        let scratch = ScratchDirectory("trash-hardlink")
        chmod(scratch.path, 0o755)
        let root = scratch.sub("root")
        try buildTree(at: root, [.dir("shared"), .dir("work")])
        chmod(root + "/shared", 0o1777)
        chmod(root + "/work", 0o1777)
        // Beside the scratch folder, on its filesystem (a hard link cannot cross one; the filesystem matrix moves it).
        var template = Array((TestScratch.base + "/outside-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        try #require(made != nil)
        let outside = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        defer { _ = try? ChildProcess.run("/bin/rm", ["-rf", outside]) }
        #expect(chown(outside, 12345, 12345) == 0)
        for name in ["victim", "other.db"] {
            #expect(try Self.coTenant("/bin/sh", ["-c", "echo secret > \(outside)/\(name)"]).status == 0)
        }
        #expect(try Self.coTenant("/bin/ln", [outside + "/victim", root + "/shared/victim"]).status == 0)
        #expect(try Self.coTenant("/bin/ln", [outside + "/other.db", root + "/work/other.db"]).status == 0)

        // policyctl trash into an app trash.
        let trash = try policyctl(["trash", "--root", root, "--trash-dir", ".Trash", "shared/victim"])
        #expect(trash.status == 0, "\(trash)")
        #expect(try Self.attributes(outside + "/victim").filter { $0.hasPrefix("user.policyctl") }.isEmpty)
        let entry = root + "/.Trash/.policyctl-info/victim.trashinfo"
        let text = try String(contentsOfFile: entry, encoding: .utf8)
        #expect(text.hasPrefix("[Trash Info]\nPath=shared/victim\nDeletionDate=20"))
        #expect(text.hasSuffix("Z\n"))
        let list = try policyctl(["trash", "--root", root, "--trash-dir", ".Trash", "--list"])
        // Name, when, size in bytes, origin.
        #expect(list.stdout == "victim\t\(text.split(separator: "=").last!.dropLast())\t7\tshared/victim\n", "\(list)")

        // Enforced forbid (apply): the same, into the same trash.
        let policy = scratch.path + "/p.yaml"
        try writePolicy(policy, "version: 1\nname: p\nrules:\n  - name: trash\n    path: .Trash\n    trash: { retain: 30d }\n"
                        + "  - name: no-db\n    path: work\n    forbid: [\"*.db\"]\n")
        let apply = try policyctl(["apply", "--policy", policy, "--root", root, "--yes"])
        #expect(apply.status == 0, "\(apply)")
        #expect(try Self.attributes(outside + "/other.db").filter { $0.hasPrefix("user.policyctl") }.isEmpty)
        #expect(FileManager.default.fileExists(atPath: root + "/.Trash/.policyctl-info/other.db.trashinfo"))

        // Retention reads the index: an entry 40 days old makes the item due (written by root, so trusted).
        try Data("[Trash Info]\nPath=shared/victim\nDeletionDate=2001-01-01T00:00:00Z\n".utf8).write(to: URL(fileURLWithPath: entry))
        let plan = try policyctl(["plan", "--policy", policy, "--root", root])
        #expect(plan.stdout.contains("delete    .Trash/victim  0 B  trashed (trash index) "), "\(plan)")
        #expect(plan.stdout.contains("delete    .Trash/.policyctl-info/victim.trashinfo  "))
        #expect(plan.stdout.contains("Plan: 2 to delete"))
        // A co-tenant's forged entry for someone else's item does not count.
        #expect(chown(entry, 12345, 12345) == 0)
        #expect(chown(root + "/.Trash/victim", 0, 0) == 0)  // now the victim's inode is root's, the entry the co-tenant's
        let forged = try policyctl(["plan", "--policy", policy, "--root", root])
        #expect(!forged.stdout.contains(".Trash/victim  "), "\(forged)")
        #expect(forged.stdout.contains("No changes."))
        #expect(chown(entry, 0, 0) == 0)

        // Restore reads the index and removes the entry; still no xattr outside.
        let restore = try policyctl(["trash", "--root", root, "--trash-dir", ".Trash", "--restore", "victim", "other.db"])
        #expect(restore.status == 0, "\(restore)")
        #expect(FileManager.default.fileExists(atPath: root + "/shared/victim"))
        #expect(FileManager.default.fileExists(atPath: root + "/work/other.db"))
        #expect(!FileManager.default.fileExists(atPath: entry))
        #expect(!FileManager.default.fileExists(atPath: root + "/.Trash/.policyctl-info/other.db.trashinfo"))
        #expect(try Self.attributes(outside + "/victim").filter { $0.hasPrefix("user.policyctl") }.isEmpty)
        #expect(try Self.attributes(outside + "/other.db").filter { $0.hasPrefix("user.policyctl") }.isEmpty)
    }

    @Test("a half-made FreeDesktop trash: --list of one with only info/ is empty; trash into it makes files/")
    func halfMade() throws {
        let scratch = ScratchDirectory("trash-half")
        let root = scratch.sub("root")
        try buildTree(at: root, [.dir("Trash"), .dir("Trash/info"), .file("a.txt", size: 3)])
        let list = try policyctl(["trash", "--root", root, "--trash-dir", "Trash", "--list"])
        #expect(list.status == 0, "\(list)")
        #expect(list.stdout == "The trash folder Trash is empty.\n")
        let trash = try policyctl(["trash", "--root", root, "--trash-dir", "Trash", "a.txt"])
        #expect(trash.status == 0, "\(trash)")
        #expect(FileManager.default.fileExists(atPath: root + "/Trash/files/a.txt"))
        #expect(FileManager.default.fileExists(atPath: root + "/Trash/info/a.txt.trashinfo"))
    }

    @Test("the index is journaled: a crash after its mkdir, create or the move is rolled back by recover")
    func indexCrash() throws {
        for after in 1...3 {
            let scratch = ScratchDirectory("trash-index-crash")
            let root = scratch.sub("root")
            let outside = scratch.sub("outside")
            try buildTree(at: outside, [.file("f", size: 4)])
            try buildTree(at: root, [.dir("d"), .hardlink("d/f", target: outside + "/f"), .symlink("d/s", target: "/etc")])
            let before = try manifest(of: root)
            let run = try policyctl(["trash", "--root", root, "--trash-dir", ".Trash", "d/f", "d/s"],
                                    environment: ["POLICYCTL_CRASH_AFTER_CHANGES": String(after + 1)])
            #expect(run.signal == SIGKILL, "\(after): \(run)")
            #expect(try policyctl(["recover", "--root", root]).status == 0)
            // The trash folder itself was made on the way (-1 action) and is undone too.
            #expect(try manifest(of: root) == before, "\(after)")
            #expect(try Self.attributes(outside + "/f").filter { $0.hasPrefix("user.policyctl") }.isEmpty)
        }
    }
}
