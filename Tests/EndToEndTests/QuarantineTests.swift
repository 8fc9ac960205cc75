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

    @Test("a folder a held entry left, removed since, is made again as recorded (mode, owner) and the entry goes back into it")
    func folderMadeAgain() throws {
        let scratch = ScratchDirectory("quarantine-folder")
        let root = scratch.sub("root")
        try buildTree(at: root, [.dir("tmp", ageHours: 0.01), .dir("tmp/keep", ageHours: 0.01), .file("tmp/keep/f", size: 33)])
        chmod(root + "/tmp/keep", 0o750)
        chown(root + "/tmp/keep", 12345, 54321)
        let policy = scratch.path + "/p.yaml"
        try writePolicy(policy, "version: 1\nname: held\nquarantine: 7d\nrules:\n  - name: t\n    path: tmp\n    expire: 1d\n")
        let applied = try policyctl(["apply", "--policy", policy, "--root", root, "--yes"])
        let id = try #require(transactionID(applied), "\(applied)")
        #expect(rmdir(root + "/tmp/keep") == 0)
        let undone = try policyctl(["undo", "--root", root, "--yes", id])
        #expect(undone.status == 0, "\(undone)")
        var st = stat()
        #expect(lstat(root + "/tmp/keep", &st) == 0 && st.st_mode & 0o7777 == 0o750 && st.st_uid == 12345 && st.st_gid == 54321)
        #expect(lstat(root + "/tmp/keep/f", &st) == 0 && st.st_size == 33)
        // With the folder above it gone too, nothing is made: the entry stays held, and undo says why.
        let again = try policyctl(["apply", "--policy", policy, "--root", root, "--yes"])
        let second = try #require(transactionID(again), "\(again)")
        #expect(rmdir(root + "/tmp/keep") == 0 && rmdir(root + "/tmp") == 0)
        let refused = try policyctl(["undo", "--root", root, "--yes", second])
        #expect(refused.stdout.contains("tmp/keep/f: its folder tmp/keep is gone (and so is the one above it); left in the quarantine"), "\(refused)")
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

@Suite("The quarantine under free-space pressure (binary, a full tmpfs, private mount namespace)")
struct QuarantinePressureTests {
    /// $1 policyctl, $2 mount point, $3 policy folder. A 4 MiB tmpfs: an expired 1 MiB file is quarantined (it frees
    /// nothing), then the volume is filled to 95 %; the next apply purges the quarantine first and, with that
    /// enough, evicts no cache file.
    static let script = #"""
        set -e
        P="$1"; R="$2"; D="$3"
        mount -t tmpfs -o size=4m,mode=0755 tmpfs "$R"
        free() { echo $(( $(stat -f -c '%a' "$R") * $(stat -f -c '%S' "$R") )); }
        mkdir -p "$R/cache" "$R/tmp" "$R/docs"
        now=$(date +%s)
        i=1; while [ $i -le 10 ]; do head -c 102400 /dev/zero > "$R/cache/c$i"; touch -d "@$(( now - i * 86400 ))" "$R/cache/c$i"; i=$((i+1)); done
        head -c 1048576 /dev/zero > "$R/tmp/old"; touch -d "@$(( now - 3 * 86400 ))" "$R/tmp/old"
        st=0; "$P" apply --policy "$D/p.yaml" --root "$R" --yes > "$D/out1" 2>&1 || st=$?
        echo "first: $st"
        echo "held: $(ls "$R/.policyctl/quarantine" | wc -l)"
        want=$(( 4194304 * 5 / 100 )); a=$(free); if [ $a -gt $want ]; then head -c $(( a - want )) /dev/zero > "$R/docs/filler" || true; fi
        echo "before: $(free)"
        "$P" plan --policy "$D/p.yaml" --root "$R" > "$D/plan" 2>&1 || true
        st=0; "$P" apply --policy "$D/p.yaml" --root "$R" --yes > "$D/out2" 2>&1 || st=$?
        echo "second: $st"
        echo "after: $(free)"
        echo "cache: $(ls "$R/cache" | sort | tr '\n' ' ')"
        echo "quarantine: $(ls "$R/.policyctl/quarantine" | wc -l)"
        umount "$R"
        """#

    static let policy = """
        version: 1
        name: held
        quarantine: 7d
        pressure:
          - name: low-disk
            freeBelow: 10%
            freeUntil: 15%
            evict: [cache]
        rules:
          - name: tmp
            path: tmp
            expire: 1d
          - name: cache
            path: cache
            regenerable: true
            quota: { max: 1GiB, minAge: 1h }

        """

    @Test("a full volume purges the quarantine (oldest first) before any live file", .enabled(if: PressureTmpfsTests.canMountTmpfs))
    func purgesBeforeLiveFiles() throws {
        let scratch = ScratchDirectory("quarantine-pressure")
        chmod(scratch.path, 0o755)
        let mount = scratch.sub("mnt"), folder = scratch.sub("policy")
        try writePolicy(folder + "/p.yaml", Self.policy)
        try Self.script.write(toFile: folder + "/run.sh", atomically: true, encoding: .utf8)
        let r = try ChildProcess.run("/usr/bin/unshare", ["-m", "/bin/sh", folder + "/run.sh", PolicyctlBinary.path, mount, folder])
        let out1 = (try? String(contentsOfFile: folder + "/out1", encoding: .utf8)) ?? ""
        let out2 = (try? String(contentsOfFile: folder + "/out2", encoding: .utf8)) ?? ""
        #expect(r.status == 0, "\(r)\n\(out1)\n\(out2)")
        var values: [String: String] = [:]
        for line in r.stdout.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if parts.count == 2 { values[parts[0]] = parts[1] }
        }
        #expect(values["first"] == "0" && values["held"] == "1", "\(r.stdout)\n\(out1)")
        #expect(values["second"] == "0", "\(out2)")
        #expect(out2.contains("quarantine: purged 1 quarantined entry") && out2.contains("free-space pressure, oldest first"), "\(out2)")
        // The plan says so before: the quarantine counts first, no cache file is planned.
        let plan = (try? String(contentsOfFile: folder + "/plan", encoding: .utf8)) ?? ""
        #expect(plan.contains("the quarantine's deletes are purged first (oldest first)"), "\(plan)")
        #expect(!plan.contains("cache/c"), "\(plan)")
        // Every cache file is still there: the quarantine's megabyte was enough.
        #expect(values["cache"]?.split(separator: " ").count == 10, "\(r.stdout)\n\(out2)")
        #expect(values["quarantine"] == "0", "\(r.stdout)")
        #expect((Int64(values["after"] ?? "0") ?? 0) > 4_194_304 * 15 / 100, "\(r.stdout)")
    }
}
