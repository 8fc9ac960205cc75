// The quarantine through the binary (issue 50): with `quarantine: 7d` every kind's deletes (expired files and
// folders, quota's directory evictions, a FreeDesktop trash's items with their .trashinfo, an app trash's indexed
// item) are renames into ROOT/.policyctl/quarantine/TX, and `undo` gives back exactly the tree from before, times,
// modes, owners and xattrs included; eight days later (libfaketime) the next apply purges them and undo says so;
// `quarantine` lists and purges; `status` counts; a rule may say none; --state-dir keeps it at the root, 0700.
import TreeFixture
import Foundation
import StoragePolicy
import Testing

/// Every entry under `root` but the engine's state, strictly: type, size, mode, owner, mtime (folders too),
/// every xattr and a digest of every file's bytes. What "exactly as before" means here.
func strictManifest(_ root: String) throws -> [String] {
    let handle = try DirectoryHandle.open(root: root)
    var lines: [String] = []
    var pending: [RelativePath] = [.root]
    while let relative = pending.popLast() {
        let directory = try handle.openDirectory(at: relative)
        for entry in try directory.entries() {
            let path = relative.appending(entry.name)
            if relative.isRoot, entry.name.bytes.starts(with: Array(".policyctl".utf8)) { continue }
            let s = try directory.status(of: entry.name)
            var line = "\(path.escaped) \(s.type.rawValue) mode=\(String(s.permissions, radix: 8)) uid=\(s.userID) gid=\(s.groupID) mtime=\(s.modificationTimeNs)"
            switch s.type {
            case .directory: pending.append(path)
            case .regular:
                let bytes = try directory.readFile(entry.name, limit: 1 << 26)
                // FNV-1a of the bytes: a changed byte shows.
                var hash: UInt64 = 0xCBF2_9CE4_8422_2325
                for b in bytes { hash = (hash ^ UInt64(b)) &* 0x100_0000_01B3 }
                line += " size=\(s.size) fnv=\(String(hash, radix: 16))"
            case .symlink: line += " -> \(String(decoding: try directory.linkTarget(of: entry.name), as: UTF8.self))"
            default: line += " size=\(s.size)"
            }
            if s.type != .symlink {
                for name in try directory.extendedAttributeNames(of: entry.name).sorted() {
                    line += " \(name)=\(Base64.encode(try directory.extendedAttribute(name, of: entry.name) ?? []))"
                }
            }
            lines.append(line)
        }
    }
    return lines.sorted()
}

/// The transaction id an apply or undo printed (`...; transaction ID in 0.04s`).
func transactionID(_ r: RunResult) -> String? {
    r.stdout.split(whereSeparator: { $0 == " " || $0 == "\n" }).drop { $0 != "transaction" }.dropFirst().first.map(String.init)
}

let faketimeAvailable = FileManager.default.isExecutableFile(atPath: "/usr/bin/faketime")

@Suite("Quarantine (binary)", .serialized)
struct QuarantineTests {
    /// The units container (UnitCrashTests) with every delete held back for a week. Its forbid rule moves entries
    /// into the trash, a change that adds to the trash's folders (their mtimes are then honestly new, and an undo
    /// of the moves does not make them old): left out where the test holds the tree exactly.
    static let deletesOnly = UnitScenario.policyText.components(separatedBy: "  - name: no-databases")[0]

    static func scenario(_ extra: String = "quarantine: 7d\n", policy: String = deletesOnly) throws -> UnitScenario {
        let s = try UnitScenario()
        try writePolicy(s.policy, policy.replacingOccurrences(of: "name: units\n", with: "name: units\n" + extra))
        // Owners, modes and xattrs undo must give back as they were (a rename keeps them).
        chown(s.root + "/tmp/b", 12345, 12345)
        chmod(s.root + "/tmp/a", 0o600)
        try DirectoryHandle.open(root: s.root + "/tmp").setExtendedAttribute("user.note", to: Array("kept".utf8), of: FileName("a"))
        chown(s.root + "/builds/job1", 12345, 0)
        return s
    }

    @Test("apply then undo gives back exactly the tree from before: every kind's deletes, folders and trash records included")
    func roundTrip() throws {
        let s = try Self.scenario()
        let before = try strictManifest(s.root)
        let applied = try s.apply()
        #expect(applied.status == 0, "\(applied)")
        #expect(applied.stdout.contains("held in the quarantine until "), "\(applied.stdout)")
        let id = try #require(transactionID(applied))
        // Gone from the tree, held in the quarantine: 0700 folders owned by root, one per window.
        #expect(!FileManager.default.fileExists(atPath: s.root + "/tmp/a"))
        #expect(!FileManager.default.fileExists(atPath: s.root + "/Trash/info/dir1.trashinfo"))
        var st = stat()
        #expect(stat(s.root + "/.policyctl/quarantine/\(id)", &st) == 0 && st.st_mode & 0o7777 == 0o700 && st.st_uid == 0)

        let listed = try policyctl(["quarantine", "--root", s.root, "--format", "json"])
        #expect(listed.status == 0, "\(listed)")
        let contents = try JSONDecoder().decode(QuarantineContents.self, from: Data(listed.stdout.utf8))
        let paths = Set(contents.windows.flatMap { $0.entries.map(\.path) })
        #expect(paths.isSuperset(of: ["tmp/a", "tmp/b", "tmp/c", "Trash/files/dir1", "Trash/info/dir1.trashinfo", "Trash/files/f1",
                                      "app/.trash/link", "app/.trash/.policyctl-info/link.trashinfo", "builds/job1", "builds/job2"]),
                "\(paths.sorted())")
        #expect(contents.windows.allSatisfy { $0.transaction == id })

        let show = try policyctl(["journal", "show", "--root", s.root, id])
        #expect(show.stdout.contains("changed     delete tmp/a (quarantined until "), "\(show.stdout)")

        let undone = try policyctl(["undo", "--root", s.root, "--yes", "last"])
        #expect(undone.status == 0, "\(undone)")
        #expect(try strictManifest(s.root) == before)
        // The quarantine it emptied is gone; a second undo has nothing left to put back.
        #expect(!FileManager.default.fileExists(atPath: s.root + "/.policyctl/quarantine/\(id)"))
        let again = try policyctl(["undo", "--root", s.root, "--yes", id])
        #expect(again.stdout.contains("deleted for good (its quarantine was purged)") || again.stdout.contains("nothing to undo"), "\(again)")
    }

    @Test("eight days later the next apply purges what is past its window, and undo says the deletes are gone for good",
          .enabled(if: faketimeAvailable, "faketime is not installed (apt-get install faketime)"))
    func purgedAfterWindow() throws {
        let s = try Self.scenario()
        let applied = try s.apply()
        let id = try #require(transactionID(applied))
        let later = try ChildProcess.run("/usr/bin/faketime", ["-f", "+8d", PolicyctlBinary.path, "apply", "--policy", s.policy,
                                                              "--root", s.root, "--yes"])
        #expect(later.status == 0, "\(later)")
        #expect(later.stdout.contains("quarantine: purged "), "\(later.stdout)")
        #expect(later.stdout.contains("(past its window)"), "\(later.stdout)")
        #expect(!FileManager.default.fileExists(atPath: s.root + "/.policyctl/quarantine/\(id)"))
        let manifest = try strictManifest(s.root)
        let undo = try policyctl(["undo", "--root", s.root, "--yes", id])
        #expect(undo.status == 1, "\(undo)")
        #expect(undo.stdout.contains("cannot undo tmp/a: deleted for good (its quarantine was purged)"), "\(undo.stdout)")
        #expect(try strictManifest(s.root) == manifest)
        // The purge is a transaction of its own: journal lists it.
        let journal = try policyctl(["journal", "--root", s.root, "--format", "json"])
        let kinds = try JSONDecoder().decode([TransactionSummary].self, from: Data(journal.stdout.utf8)).map(\.kind)
        #expect(kinds.contains(.purge))
    }

    @Test("a rule's quarantine: none is a plain delete; another rule's own window is its own")
    func perRule() throws {
        let s = try Self.scenario()
        let text = Self.deletesOnly
            .replacingOccurrences(of: "name: units\n", with: "name: units\nquarantine: 7d\n")
            .replacingOccurrences(of: "    expire: 1h\n", with: "    expire: 1h\n    quarantine: none\n")
            .replacingOccurrences(of: "quota: { max: 1B, minAge: 1d, unit: directory }\n", with: "quota: { max: 1B, minAge: 1d, unit: directory }\n    quarantine: 1d\n")
        try writePolicy(s.policy, text)
        let plan = try policyctl(["plan", "--policy", s.policy, "--root", s.root, "--format", "json"])
        let decoded = try JSONDecoder().decode(Plan.self, from: Data(plan.stdout.utf8))
        #expect(decoded.quarantine?.windows == ["builds": "1d", "trash": "1w", "apptrash": "1w"], "\(String(describing: decoded.quarantine))")
        let applied = try s.apply()
        #expect(applied.status == 0, "\(applied)")
        let contents = try JSONDecoder().decode(QuarantineContents.self,
                                                from: Data(try policyctl(["quarantine", "--root", s.root, "--format", "json"]).stdout.utf8))
        #expect(contents.windows.count == 2)
        let held = Set(contents.windows.flatMap { $0.entries.map(\.path) })
        #expect(!held.contains("tmp/a") && held.contains("builds/job1") && held.contains("Trash/files/f1"))
        let undo = try policyctl(["undo", "--root", s.root, "--yes", "last"])
        #expect(undo.stdout.contains("cannot undo tmp/a: deleted; deletes cannot be undone"), "\(undo.stdout)")
        #expect(FileManager.default.fileExists(atPath: s.root + "/builds/job1/o"))
    }

    @Test("quarantine --purge empties it as a journaled run; --older-than picks by age; undo then says gone for good")
    func purgeCommand() throws {
        let s = try Self.scenario()
        let id = try #require(transactionID(try s.apply()))
        let young = try policyctl(["quarantine", "--root", s.root, "--purge", "--older-than", "1d", "--yes"])
        #expect(young.status == 0, "\(young)")
        #expect(young.stdout.contains("Nothing to purge"), "\(young.stdout)")
        let noYes = try policyctl(["quarantine", "--root", s.root, "--purge"])
        #expect(noYes.status == 64, "\(noYes)")
        let purged = try policyctl(["quarantine", "--root", s.root, "--purge", "--yes"])
        #expect(purged.status == 0, "\(purged)")
        #expect(purged.stdout.contains("quarantine: purged "), "\(purged.stdout)")
        #expect(try policyctl(["quarantine", "--root", s.root]).stdout.contains("holds nothing"))
        #expect(try policyctl(["undo", "--root", s.root, "--dry-run", id]).stdout.contains("deleted for good"))
        let usage = try policyctl(["quarantine", "--root", s.root, "--older-than", "1d"])
        #expect(usage.status == 64, "\(usage)")
    }

    @Test("status counts what the quarantine holds, in text, JSON and Prometheus")
    func status() throws {
        let s = try Self.scenario()
        _ = try s.apply()
        let contents = try JSONDecoder().decode(QuarantineContents.self,
                                                from: Data(try policyctl(["quarantine", "--root", s.root, "--format", "json"]).stdout.utf8))
        let text = try policyctl(["status", "--policy", s.policy, "--root", s.root])
        #expect(text.stdout.contains("Quarantine: \(contents.entries) entries, "), "\(text.stdout)")
        let json = try policyctl(["status", "--policy", s.policy, "--root", s.root, "--format", "json"])
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        let q = object?["quarantine"] as? [String: Any]
        #expect(q?["entries"] as? Int == contents.entries && (q?["bytes"] as? Int).map(Int64.init) == contents.bytes)
        let prom = try policyctl(["status", "--policy", s.policy, "--root", s.root, "--format", "prometheus"])
        #expect(prom.stdout.contains("policyctl_quarantine_entries{"), "\(prom.stdout)")
        #expect(prom.stdout.contains("} \(contents.entries)\n"))
    }

    @Test("with --state-dir the quarantine is a fresh 0700 folder at the root, never walked; undo puts everything back")
    func stateDirectoryElsewhere() throws {
        let s = try Self.scenario()
        let state = s.scratch.path + "/state"
        let before = try strictManifest(s.root)
        let applied = try policyctl(["apply", "--policy", s.policy, "--root", s.root, "--yes", "--state-dir", state])
        #expect(applied.status == 0, "\(applied)")
        let id = try #require(transactionID(applied))
        var st = stat()
        #expect(lstat(s.root + "/.policyctl-quarantine-\(id)", &st) == 0 && st.st_mode & 0o7777 == 0o700)
        #expect(!FileManager.default.fileExists(atPath: s.root + "/.policyctl"))
        // Never planned on: the next plan deletes nothing inside it.
        let plan = try policyctl(["plan", "--policy", s.policy, "--root", s.root, "--format", "json"])
        #expect(!plan.stdout.contains(".policyctl-quarantine"), "\(plan.stdout)")
        let undone = try policyctl(["undo", "--root", s.root, "--yes", "--state-dir", state, id])
        #expect(undone.status == 0, "\(undone)")
        #expect(try strictManifest(s.root) == before)
    }

    @Test("the nested-rename case undoes in one go: a renamed folder and a renamed file inside it both come back")
    func nestedRenames() throws {
        let scratch = ScratchDirectory("nested")
        let root = scratch.sub("root")
        try buildTree(at: root, [.dir("Documents"), .dir("Documents/Projects"), .file("Documents/Projects/Report.DOCX"),
                                 .dir("Documents/Projects/Old"), .file("Documents/Projects/Old/A.TXT")])
        let policy = scratch.path + "/p.yaml"
        try writePolicy(policy, "version: 1\nname: lower\nrules:\n  - name: lower\n    path: Documents\n    naming: { case: lower }\n")
        let before = try manifest(of: root)
        let applied = try policyctl(["apply", "--policy", policy, "--root", root, "--yes"])
        #expect(applied.status == 0, "\(applied)")
        #expect(FileManager.default.fileExists(atPath: root + "/Documents/projects/old/a.txt"))
        let undone = try policyctl(["undo", "--root", root, "--yes", "last"])
        #expect(undone.status == 0, "\(undone)")
        #expect(!undone.stdout.contains("gone since the transaction"), "\(undone.stdout)")
        #expect(try manifest(of: root) == before)
    }
}
