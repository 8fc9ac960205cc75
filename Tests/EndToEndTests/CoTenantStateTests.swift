// Issue 12's forged-state attacks, end to end: a co-tenant (uid 12345, via setpriv) writes a `.policyctl` with
// a journal whose checksums are valid into a root it can write (mode 1777), then root runs the built binary.
// Nothing it asked for may happen: no capability, no file moved or unlinked, nothing outside the root changed.
import TreeFixture
import Foundation
import StoragePolicy
import Testing

@Suite("Co-tenant forged state (binary, attacker uid 12345)")
struct CoTenantStateTests {
    /// Root here, with setpriv to become the co-tenant.
    static var canRunAsCoTenant: Bool { CoTenant.isAvailable }

    static let transaction = "20260101T000000Z-0000abcd"
    /// security.capability granting cap_dac_read_search (VFS_CAP_REVISION_2, permitted bit 2).
    static let capability: [UInt8] = [0x01, 0, 0, 0x02, 0x04, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]

    /// A root the co-tenant can write (1777, like /tmp), an old file the policy deletes, a root-owned 0600
    /// victim inside and another outside, and a --state-dir.
    final class World {
        let scratch = ScratchDirectory("cotenant")
        let root: String
        let outside: String
        let policy: String
        let stateDir: String

        init() throws {
            chmod(scratch.path, 0o755)
            root = scratch.sub("root")
            chmod(root, 0o1777)
            outside = scratch.sub("outside")
            policy = scratch.path + "/policy.yaml"
            stateDir = scratch.path + "/state"
            try writePolicy(policy, "version: 1\nname: cotenant\nrules:\n  - name: tmp-expiry\n    path: tmp\n    expire: 24h\n")
            try buildTree(at: root, [.dir("tmp", ageHours: 48), .file("tmp/old.dat")])
            try write("top secret\n", to: root + "/secret", mode: 0o600)
            try write("victim\n", to: root + "/victim", mode: 0o600)
            try write("outside\n", to: outside + "/keep", mode: 0o600)
        }

        func write(_ text: String, to path: String, mode: mode_t) throws {
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            chmod(path, mode)
        }

        /// Runs `script` with /bin/sh as uid/gid 12345 and no supplementary groups.
        @discardableResult
        func asCoTenant(_ script: String) throws -> PolicyctlBinary.Result {
            let r = try CoTenant.sh(script)
            #expect(r.status == 0, "co-tenant script failed: \(r.stderr)")
            return r
        }

        /// The co-tenant plants `.policyctl/journal.jsonl` holding `records` (bodies; framed here with valid sums).
        func plantJournal(_ records: [String]) throws {
            let lines = records.map { body in #"{"sum":""# + String(SHA256.hex(Array(body.utf8)).prefix(16)) + #"","rec":"# + body + "}\n" }
            let staged = scratch.path + "/forged.jsonl"
            try Data(lines.joined().utf8).write(to: URL(fileURLWithPath: staged))
            chmod(staged, 0o644)
            try asCoTenant("mkdir -m 0777 '\(root)/.policyctl' && cp '\(staged)' '\(root)/.policyctl/journal.jsonl' && chmod 0666 '\(root)/.policyctl/journal.jsonl'")
        }

        /// The begin record a real apply on this root would write (the root's true device and inode).
        func begin() throws -> String {
            let s = try stat(root)
            return #"{"tx":"\#(CoTenantStateTests.transaction)","seq":1,"type":"begin","kind":"apply","policy":"cotenant","root":"\#(root)","rootDev":\#(s.st_dev),"rootIno":\#(s.st_ino),"actions":1}"#
        }

        func stat(_ path: String) throws -> LibcStat {
            var s = LibcStat()
            guard lstat(path, &s) == 0 else { throw POSIXError(.ENOENT) }
            return s
        }

        var journalBytes: Data? { try? Data(contentsOf: URL(fileURLWithPath: root + "/.policyctl/journal.jsonl")) }

        /// What is outside the root: must never change.
        func outsideState() throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: outside).sorted().map { name in
                let s = try stat(outside + "/" + name)
                return "\(name) \(s.st_uid) \(String(s.st_mode & 0o7777, radix: 8)) " + (try String(contentsOfFile: outside + "/" + name, encoding: .utf8))
            }
        }

        func content(_ rel: String) -> String? { try? String(contentsOfFile: root + "/" + rel, encoding: .utf8) }

        /// Leftover per-transaction staging folders in the root (there must be none after a clean run).
        func stagingFolders() throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: root).filter { $0.hasPrefix(".policyctl-staging-") }
        }

        /// Root takes the forged folder over (owner root, 0700/0600), as if it had got past the ownership check:
        /// the second line, the undo-record rules, must still refuse it.
        func adoptForgedState() {
            chown(root + "/.policyctl", 0, 0)
            chmod(root + "/.policyctl", 0o700)
            chown(root + "/.policyctl/journal.jsonl", 0, 0)
            chmod(root + "/.policyctl/journal.jsonl", 0o600)
        }
    }

    /// Root's apply and recover on the world: both refuse the co-tenant's .policyctl, naming it and the fix.
    private func expectRefused(_ w: World, file: String = ".policyctl", problem: String) throws {
        let outside = try w.outsideState()
        for arguments in [["apply", "--policy", w.policy, "--root", w.root, "--yes"], ["recover", "--root", w.root]] {
            let run = try policyctl(arguments)
            #expect(run.status == 74, "\(arguments[0]): \(run)")
            #expect(run.stderr.contains("Error: \(w.root)/\(file): \(problem); refused: "), "\(arguments[0]): \(run)")
            #expect(run.stderr.contains("--state-dir"), "the fix is named: \(run)")
        }
        #expect(w.content("tmp/old.dat") != nil, "nothing was applied while the state was refused")
        #expect(try w.outsideState() == outside)
    }

    /// The file's security.capability, read through the library's own xattr call (getfattr is not installed).
    private func capabilityOf(_ path: String) throws -> [UInt8]? {
        let slash = path.lastIndex(of: "/")!
        let directory = try DirectoryHandle.open(root: String(path[..<slash]))
        return try directory.extendedAttribute("security.capability", of: FileName(String(path[path.index(after: slash)...]))!)
    }

    @Test("a forged setxattr undo never gives the co-tenant's copy of cat a capability",
          .enabled(if: CoTenantStateTests.canRunAsCoTenant))
    func forgedCapability() throws {
        let w = try World()
        try w.asCoTenant("cp /usr/bin/cat '\(w.root)/cat'")
        let b64 = Data(Self.capability).base64EncodedString()
        try w.plantJournal([try w.begin(),
            #"{"tx":"\#(Self.transaction)","seq":2,"type":"intent","op":1,"action":0,"change":"setxattr","path":"cat","attr":"security.capability","previousBase64":"\#(b64)"}"#])
        try expectRefused(w, problem: "is owned by uid 12345, not by uid 0 that runs policyctl")
        #expect(try capabilityOf(w.root + "/cat") == nil)
        let getcap = try ChildProcess.run("/usr/sbin/getcap", [w.root + "/cat"])
        #expect(getcap.stdout.isEmpty, "getcap: \(getcap.stdout)")

        // Even a journal that got past the ownership check never sets a security.* attribute.
        w.adoptForgedState()
        let recover = try policyctl(["recover", "--root", w.root])
        #expect(recover.status == 0, "\(recover)")
        #expect(recover.stdout.contains("recover: .policyctl/journal.jsonl:2: refused intent: attribute security.capability is not one the engine sets; not replayed"), "\(recover)")
        #expect(try capabilityOf(w.root + "/cat") == nil)
    }

    @Test("a forged rename undo never moves root's 0600 file into .policyctl",
          .enabled(if: CoTenantStateTests.canRunAsCoTenant))
    func forgedRename() throws {
        let w = try World()
        let s = try w.stat(w.root + "/secret")
        let mtime = Int64(s.st_mtim.tv_sec) * 1_000_000_000 + Int64(s.st_mtim.tv_nsec)
        try w.plantJournal([try w.begin(),
            #"{"tx":"\#(Self.transaction)","seq":2,"type":"intent","op":1,"action":0,"change":"rename","path":".policyctl/loot","to":"secret","dev":\#(s.st_dev),"ino":\#(s.st_ino),"size":\#(s.st_size),"mtimeNs":\#(mtime)}"#])
        try expectRefused(w, problem: "is owned by uid 12345, not by uid 0 that runs policyctl")
        #expect(w.content("secret") == "top secret\n")
        #expect(try w.stat(w.root + "/secret").st_mode & 0o7777 == 0o600)
        #expect(w.content(".policyctl/loot") == nil)

        w.adoptForgedState()
        let recover = try policyctl(["recover", "--root", w.root])
        #expect(recover.status == 0, "\(recover)")
        #expect(recover.stdout.contains("recover: .policyctl/journal.jsonl:2: refused intent: rename of .policyctl/loot, inside the engine's own state; not replayed"), "\(recover)")
        #expect(w.content("secret") == "top secret\n")
        #expect(w.content(".policyctl/loot") == nil)
    }

    @Test("a forged create undo never unlinks an arbitrary file",
          .enabled(if: CoTenantStateTests.canRunAsCoTenant))
    func forgedCreate() throws {
        let w = try World()
        try w.plantJournal([try w.begin(),
            #"{"tx":"\#(Self.transaction)","seq":2,"type":"intent","op":1,"action":0,"change":"create","path":"x","temp":"victim","contents":""}"#])
        try expectRefused(w, problem: "is owned by uid 12345, not by uid 0 that runs policyctl")
        #expect(w.content("victim") == "victim\n")

        w.adoptForgedState()
        let recover = try policyctl(["recover", "--root", w.root])
        #expect(recover.status == 0, "\(recover)")
        #expect(recover.stdout.contains("recover: .policyctl/journal.jsonl:2: refused intent: create of x, not a file the engine writes; not replayed"), "\(recover)")
        #expect(w.content("victim") == "victim\n")
    }

    @Test("a .policyctl the co-tenant made world-writable, or a symlink in its place, is refused too",
          .enabled(if: CoTenantStateTests.canRunAsCoTenant))
    func forgedSymlink() throws {
        let w = try World()
        try w.asCoTenant("mkdir '\(w.root)/mine' && ln -s mine '\(w.root)/.policyctl'")
        try expectRefused(w, problem: "is not a directory (a symlink or a file someone else put there)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: w.root + "/mine").isEmpty, "nothing was written through the link")
    }

    @Test("touch ROOT/.policyctl by the co-tenant: refused without --state-dir; with it, reported, ignored, and cleanup goes ahead",
          .enabled(if: CoTenantStateTests.canRunAsCoTenant))
    func touchedStateFile() throws {
        let w = try World()
        try w.asCoTenant("touch '\(w.root)/.policyctl'")
        try expectRefused(w, problem: "is not a directory (a symlink or a file someone else put there)")
        let outside = try w.outsideState()
        let run = try policyctl(["apply", "--policy", w.policy, "--root", w.root, "--yes", "--state-dir", w.stateDir])
        #expect(run.status == 0, "\(run)")
        #expect(run.stderr.contains("warning: .policyctl (owned by uid 12345) in the root is ignored: state is kept in \(w.stateDir) (--state-dir)"), "\(run)")
        #expect(run.stdout.contains("applied: 1 delete"), "\(run)")
        #expect(w.content("tmp/old.dat") == nil)
        #expect(try w.stat(w.root + "/.policyctl").st_uid == 12345, "the co-tenant's file is left alone")
        #expect(try w.stagingFolders().isEmpty)
        #expect(try w.outsideState() == outside)
        // recover and journal read the same --state-dir.
        #expect(try policyctl(["recover", "--root", w.root, "--state-dir", w.stateDir]).status == 0)
        let journal = try policyctl(["journal", "--root", w.root, "--state-dir", w.stateDir])
        #expect(journal.status == 0)
        #expect(journal.stdout.contains("policy cotenant  committed"), "\(journal)")
    }

    @Test("apply --state-dir cleans a root holding a hostile .policyctl with a forged journal, and never replays it",
          .enabled(if: CoTenantStateTests.canRunAsCoTenant))
    func stateDirIgnoresHostileState() throws {
        let w = try World()
        try w.asCoTenant("cp /usr/bin/cat '\(w.root)/cat'")
        let b64 = Data(Self.capability).base64EncodedString()
        try w.plantJournal([try w.begin(),
            #"{"tx":"\#(Self.transaction)","seq":2,"type":"intent","op":1,"action":0,"change":"setxattr","path":"cat","attr":"security.capability","previousBase64":"\#(b64)"}"#,
            #"{"tx":"\#(Self.transaction)","seq":3,"type":"intent","op":2,"action":0,"change":"create","path":"x","temp":"victim","contents":""}"#])
        let forged = w.journalBytes
        let outside = try w.outsideState()
        let run = try policyctl(["apply", "--policy", w.policy, "--root", w.root, "--yes", "--state-dir", w.stateDir])
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.contains("applied: 1 delete"), "\(run)")
        #expect(w.content("tmp/old.dat") == nil)
        #expect(try capabilityOf(w.root + "/cat") == nil)
        #expect(w.content("victim") == "victim\n")
        #expect(w.content("secret") == "top secret\n")
        #expect(w.journalBytes == forged, "the hostile journal is neither replayed nor written to")
        #expect(try w.stagingFolders().isEmpty)
        #expect(try w.outsideState() == outside)
        let state = try w.stat(w.stateDir)
        #expect(state.st_uid == 0 && state.st_mode & 0o7777 == 0o700)
        #expect(FileManager.default.fileExists(atPath: w.stateDir + "/journal.jsonl"))
    }

    @Test("trash --state-dir trashes and restores past a planted .policyctl; without it the planted one is refused",
          .enabled(if: CoTenantStateTests.canRunAsCoTenant))
    func trashWithStateDir() throws {
        let w = try World()
        try w.asCoTenant("mkdir -m 0777 '\(w.root)/.policyctl'")
        let refused = try policyctl(["trash", "--root", w.root, "--trash-dir", "trash", "--layout", "app", "tmp/old.dat"])
        #expect(refused.status == 74, "\(refused)")
        #expect(refused.stderr.contains("\(w.root)/.policyctl: is owned by uid 12345"), "\(refused)")
        let trashed = try policyctl(["trash", "--root", w.root, "--trash-dir", "trash", "--layout", "app", "--state-dir", w.stateDir, "tmp/old.dat"])
        #expect(trashed.status == 0, "\(trashed)")
        #expect(w.content("tmp/old.dat") == nil)
        #expect(w.content("trash/old.dat") != nil)
        let restored = try policyctl(["trash", "--root", w.root, "--trash-dir", "trash", "--state-dir", w.stateDir, "--restore", "old.dat"])
        #expect(restored.status == 0, "\(restored)")
        #expect(w.content("tmp/old.dat") != nil)
        #expect(try FileManager.default.contentsOfDirectory(atPath: w.root + "/.policyctl").isEmpty)
        #expect(try w.stagingFolders().isEmpty)
    }

    @Test("a co-tenant-writable --state-dir is refused naming the path and the fix")
    func sharedStateDirRefused() throws {
        let w = try World()
        mkdir(w.stateDir, 0o777)
        chmod(w.stateDir, 0o777)
        let run = try policyctl(["apply", "--policy", w.policy, "--root", w.root, "--yes", "--state-dir", w.stateDir])
        #expect(run.status == 74)
        #expect(run.stderr.contains("Error: \(w.stateDir): is writable by group or others (mode 777); refused: give --state-dir a directory owned by uid 0 with mode 0700"), "\(run)")
        #expect(w.content("tmp/old.dat") != nil)
    }

    @Test("damaged journal records are named FILE:LINE with what was done, by journal, recover and apply's own recovery")
    func damagedRecordsNamed() throws {
        let w = try World()
        let first = try policyctl(["apply", "--policy", w.policy, "--root", w.root, "--yes"])
        #expect(first.status == 0, "\(first)")
        // A record with seq = 2^63-1 and a valid checksum (issue 19: recover died with "arithmetic overflow").
        let body = #"{"tx":"\#(Self.transaction)","seq":9223372036854775807,"type":"rollback","reason":"x"}"#
        let line = #"{"sum":""# + String(SHA256.hex(Array(body.utf8)).prefix(16)) + #"","rec":"# + body + "}\n"
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: w.root + "/.policyctl/journal.jsonl"))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(line.utf8))
        try handle.close()
        let lineNumber = try journalLines(w.root).count
        let named = ".policyctl/journal.jsonl:\(lineNumber): seq 9223372036854775807 out of range"

        let journal = try policyctl(["journal", "--root", w.root])
        #expect(journal.status == 0, "\(journal)")
        #expect(journal.stderr.contains("note: \(named); ignored"), "\(journal)")
        let recover = try policyctl(["recover", "--root", w.root])
        #expect(recover.status == 0, "\(recover)")
        #expect(recover.signal == nil)
        #expect(recover.stdout.contains("recover: \(named); ignored"), "\(recover)")
        try buildTree(at: w.root, [.file("tmp/new.dat")])
        let apply = try policyctl(["apply", "--policy", w.policy, "--root", w.root, "--yes"])
        #expect(apply.status == 0, "\(apply)")
        #expect(apply.stdout.contains("recover: \(named); ignored"), "\(apply)")
        #expect(apply.stdout.contains("applied: 1 delete"), "\(apply)")
    }

    @Test("an interrupted apply's .policyctl copied along with the tree is not replayed on the copy")
    func copiedJournalRefused() throws {
        let w = try World()
        // Killed right after the begin record and the first intents are durable: a transaction left open.
        let crashed = try policyctl(["apply", "--policy", w.policy, "--root", w.root, "--yes"], environment: ["POLICYCTL_CRASH_AFTER_RECORDS": "2"])
        #expect(crashed.signal != nil || crashed.status != 0, "\(crashed)")
        let copy = w.scratch.path + "/copy"
        let cp = try ChildProcess.run("/bin/cp", ["-a", w.root, copy])
        #expect(cp.status == 0, "\(cp.stderr)")
        let before = try manifest(of: copy)
        let refused = try policyctl(["recover", "--root", copy])
        #expect(refused.status == 74, "\(refused)")
        #expect(refused.stderr.contains(".policyctl/journal.jsonl:1: it began on another directory"), "\(refused)")
        #expect(refused.stderr.contains("move .policyctl aside"), "\(refused)")
        #expect(try manifest(of: copy) == before)
        #expect(FileManager.default.fileExists(atPath: copy + "/tmp/old.dat"), "the copy's entry is never deleted")
        // The original still recovers: its durable roll-forward delete is finished there, and only there.
        let recover = try policyctl(["recover", "--root", w.root])
        #expect(recover.status == 0, "\(recover)")
        #expect(recover.stdout.contains("1 roll-forward delete finished"), "\(recover)")
        #expect(w.content("tmp/old.dat") == nil)
    }
}
