// What recovery trusts: state folders and files this euid made (owner, mode, no symlink), journals bound to
// their root, undo records limited to what the engine writes, every number range-checked. In process.
import TreeFixture
import Foundation
import Testing
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyApply

/// A journal record written by hand, framed with a valid checksum (as a forger, or a fuzzer, would).
func forgedRecord(_ type: String, tx: String = "20260101T000000Z-0000abcd", seq: Int, _ fields: (inout JSONWriter) -> Void = { _ in }) -> [UInt8] {
    var w = JSONWriter()
    w.string("tx", tx)
    w.int("seq", seq)
    w.string("type", type)
    fields(&w)
    return JournalRecord.frame(w.finished)
}

@Suite("Journal trust")
struct JournalTrustTests {
    private func append(_ f: ApplyFixture, _ lines: [[UInt8]]) throws {
        let fd = open(f.rootPath + "/.policyctl/journal.jsonl", O_WRONLY | O_CREAT | O_APPEND, 0o600)
        #expect(fd >= 0)
        defer { close(fd) }
        let bytes = Array(lines.joined())
        #expect(write(fd, bytes, bytes.count) == bytes.count)
    }

    /// A begin record for this fixture's root (its real device and inode, unless told otherwise).
    private func begin(_ f: ApplyFixture, tx: String = "20260101T000000Z-0000abcd", inode: UInt64? = nil) -> [UInt8] {
        forgedRecord("begin", tx: tx, seq: 1) { w in
            w.string("kind", "apply")
            w.string("root", f.rootPath)
            w.int("rootDev", f.lock.state.rootStatus.device)
            w.int("rootIno", inode ?? f.lock.state.rootStatus.inode)
            w.int("actions", 1)
        }
    }

    private func intent(seq: Int, op: Int, _ change: Change, identity: EntryIdentity? = nil) -> [UInt8] {
        forgedRecord("intent", seq: seq) { w in Intent(op: op, action: 0, change: change, identity: identity).encode(into: &w) }
    }

    // MARK: Numbers

    @Test("seq = 2^63-1 with a valid checksum is a damaged record: recovery names its line and does not crash")
    func sequenceOverflow() throws {
        let f = try ApplyFixture()
        f.file("a")
        try append(f, [begin(f), forgedRecord("rollback", seq: Int.max) { $0.string("reason", "x") }])
        let report = try Recovery.run(holding: f.lock)
        #expect(report.damaged.map(\.description) == [".policyctl/journal.jsonl:2: seq 9223372036854775807 out of range; ignored"])
        #expect(report.entries.map(\.resolution) == [.rolledBack])
        #expect(try Recovery.run(holding: f.lock).nothingToDo)
        #expect(f.exists("a"))
    }

    @Test("every number a record carries is range-checked; out of range is a damaged record, never a crash",
          arguments: ["seq", "op", "action", "actions", "pid", "size", "bytes", "bytesFreed", "skipped", "kept", "ops", "counts"])
    func ranges(field: String) {
        for value in [Int.max, Int.min, -2] {
            let line = forgedRecord("intent", seq: field == "seq" ? value : 1) { w in
                switch field {
                case "seq": break
                case "ops": w.integers("ops", [1, value])
                case "counts": var c = JSONWriter(); c.int("delete", value); w.object("counts", c)
                default: w.int(named: field, value)
                }
            }
            var seen = 0
            let scan = Journal.scan(line) { _, _ in seen += 1 }
            // -2 is in range only where negative numbers are: nowhere but `action` (which allows -1, not -2).
            #expect(seen == 0, "\(field) = \(value) was accepted")
            #expect(scan.damaged.count == 1 && scan.damaged.first?.line == 1, "\(field) = \(value)")
            #expect(!scan.tornTail, "a checksummed record is never a torn tail")
        }
    }

    @Test("a transaction id that is not a plain name (it would become a staging folder's name) is damaged",
          arguments: ["../../etc", "a/b", "", ".", String(repeating: "x", count: 65), "t\u{0}"])
    func transactionNames(id: String) {
        var seen = 0
        let scan = Journal.scan(forgedRecord("begin", tx: id, seq: 1)) { _, _ in seen += 1 }
        #expect(seen == 0)
        #expect(scan.damaged.first?.reason == "transaction id is not a plain name")
    }

    // MARK: Undo records

    /// What a co-tenant's journal asked for in issue 12, and its like: each must be refused, never replayed.
    static let forged: [(String, Change, Bool)] = [
        ("a capability", .setxattr(path: RelativePath("cat")!, attribute: "security.capability", value: nil,
                                   previous: [1, 0, 0, 2, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]), false),
        ("a trusted attribute", .setxattr(path: RelativePath("cat")!, attribute: "trusted.overlay.opaque", value: nil, previous: [0x79]), false),
        ("an ACL", .setxattr(path: RelativePath("cat")!, attribute: "system.posix_acl_access", value: nil, previous: [2, 0, 0, 0]), false),
        ("a rename into .policyctl", .rename(from: RelativePath(".policyctl/loot")!, to: RelativePath("secret")!), true),
        ("a rename into a staging folder", .rename(from: RelativePath(".policyctl-staging-x/loot")!, to: RelativePath("secret")!), true),
        ("a create whose temporary name is a victim", .create(path: RelativePath("CACHEDIR.TAG")!, temp: FileName("secret")!, contents: []), false),
        ("a create of a file the engine never writes", .create(path: RelativePath("secret")!, temp: FileName(".policyctl-20260101T000000Z-0000abcd-1.tmp")!,
                                                                contents: Array("top secret\n".utf8)), false),
        ("a stage under a name the engine never makes", .stage(path: RelativePath("secret")!, name: FileName("loot")!), true),
        ("a mkdir inside .policyctl", .mkdir(path: RelativePath(".policyctl/x")!), false),
    ]

    @Test("forged undo records are refused and named, not replayed; the transaction still closes",
          arguments: 0..<forged.count)
    func forgedUndo(index: Int) throws {
        let (label, change, needsIdentity) = Self.forged[index]
        let f = try ApplyFixture()
        f.file("secret", size: 11)
        f.file("cat")
        chmod(f.rootPath + "/secret", 0o600)
        let identity = needsIdentity ? try f.status("secret").identity : nil
        try append(f, [begin(f), intent(seq: 2, op: 1, change, identity: identity)])
        let before = try f.listing()
        let report = try Recovery.run(holding: f.lock)
        #expect(report.damaged.count == 1, "\(label)")
        #expect(report.damaged.first?.line == 2)
        #expect(report.damaged.first?.outcome == "not replayed")
        #expect(report.damaged.first?.reason.hasPrefix("refused intent: ") == true, "\(label): \(report.damaged)")
        #expect(try f.listing() == before, "\(label)")
        #expect(try f.status("secret").size == 11)
        #expect(try f.root.extendedAttribute("security.capability", of: FileName("cat")!) == nil)
        #expect(try Recovery.run(holding: f.lock).nothingToDo, "\(label): the transaction must close")
    }

    @Test("the engine's own undo records pass: its markers, stamps, user attributes, tags and trash info")
    func engineRecordsPass() {
        let tmp = FileName(".policyctl-20260101T000000Z-0000abcd-3.tmp")!
        let allowed: [Change] = [
            .setxattr(path: RelativePath("a")!, attribute: Markers.linuxBackupAttribute, value: [1], previous: nil),
            .setxattr(path: RelativePath("a")!, attribute: Markers.appleBackupAttribute, value: [1], previous: nil),
            .setxattr(path: RelativePath("a")!, attribute: Markers.trashStampAttribute, value: [1], previous: nil),
            .setxattr(path: RelativePath("a")!, attribute: TrashFolder.originAttribute, value: [1], previous: nil),
            .setxattr(path: .root, attribute: "user.custom", value: [1], previous: nil),
            .create(path: RelativePath("d/CACHEDIR.TAG")!, temp: tmp, contents: []),
            .create(path: RelativePath("t/info/x.trashinfo")!, temp: tmp, contents: []),
            .stage(path: RelativePath("a")!, name: FileName("12")!),
            .mkdir(path: RelativePath("new")!),
        ]
        for change in allowed {
            #expect(Intent(op: 1, action: 0, change: change, identity: nil).refusal == nil, "\(change)")
        }
        let rename = Intent(op: 1, action: 0, change: .rename(from: RelativePath("a")!, to: RelativePath("b")!),
                            identity: EntryIdentity(device: 1, inode: 2, size: 0, modificationTimeNs: 0))
        #expect(rename.refusal == nil)
        #expect(Intent(op: 1, action: 0, change: .setxattr(path: RelativePath("a")!, attribute: "user.", value: nil, previous: nil),
                       identity: nil).refusal != nil)
    }

    // MARK: Damaged intents

    @Test("a transaction whose intent record is damaged is rolled back as far as it can be; what it staged is kept and it closes")
    func damagedIntent() throws {
        let f = try ApplyFixture()
        f.file("a", size: 5); f.file("b", size: 6); f.file("c", size: 7)
        let metadata = Transaction.Metadata(kind: .apply, policy: "unit", policySHA256: nil, policyPath: nil,
                                            planFile: nil, rootPath: f.rootPath, actions: 3)
        let t = try Transaction.begin(metadata, lock: f.lock, journal: try f.lock.state.openJournal())
        var intents: [Intent] = []
        for (i, name) in ["a", "b", "c"].enumerated() {
            intents.append(t.intend(.stage(path: RelativePath(name)!, name: t.stagingName()), action: i, identity: try f.status(name).identity))
        }
        try t.makeDurable()
        for intent in intents { try t.perform(intent) }
        // Line 3 (the intent for "b") is damaged: one byte of its body changed, so its checksum fails.
        let path = f.rootPath + "/.policyctl/journal.jsonl"
        var lines = try Data(contentsOf: URL(fileURLWithPath: path)).split(separator: 0x0A, omittingEmptySubsequences: false).map(Array.init)
        let at = lines[2].lastIndex(of: UInt8(ascii: "b"))!
        lines[2][at] = UInt8(ascii: "B")
        try Data(lines.joined(separator: [0x0A])).write(to: URL(fileURLWithPath: path))

        let report = try Recovery.run(holding: f.lock)
        #expect(report.damaged.map(\.description) == [".policyctl/journal.jsonl:3: checksum or framing mismatch; ignored"])
        let entry = try #require(report.entries.first)
        #expect(entry.resolution == .rolledBack)
        #expect(entry.undone == 2)
        #expect(entry.kept == ["2: staged by a damaged journal record; kept as .policyctl/staging/\(t.id)/2"])
        #expect(try f.status("a").size == 5)
        #expect(try f.status("c").size == 7)
        #expect(!f.exists("b"))
        #expect(try f.status(".policyctl/staging/\(t.id)/2").size == 6)
        // Closed: the next recovery has nothing to do, and the kept entry is still there (never deleted).
        #expect(try Recovery.run(holding: f.lock).entries.isEmpty)
        #expect(f.exists(".policyctl/staging/\(t.id)/2"))
        let history = try JournalHistory.read(f.lock.state)
        #expect(history.damaged.map(\.description) == [".policyctl/journal.jsonl:3: checksum or framing mismatch; ignored"])
        #expect(history.transactions.first?.outcome == .rolledBack)
    }

    @Test("a torn last line is named with its line number and cut off")
    func tornTailNamed() throws {
        let f = try ApplyFixture()
        try append(f, [begin(f), forgedRecord("end", seq: 2) { $0.string("outcome", "committed") }, Array(#"{"sum":"00","rec":{"tx""#.utf8)])
        let report = try Recovery.run(holding: f.lock)
        #expect(report.damaged.map(\.description) == [".policyctl/journal.jsonl:3: torn or corrupt last line (an interrupted write); cut off"])
    }

    // MARK: The root's identity

    @Test("an open transaction that began on another directory (a journal copied with its tree) is refused, never replayed")
    func boundToRoot() throws {
        let f = try ApplyFixture()
        f.file("a")
        let foreign = f.lock.state.rootStatus.inode + 1
        try append(f, [begin(f, inode: foreign),
                       intent(seq: 2, op: 1, .stage(path: RelativePath("a")!, name: FileName("1")!), identity: try f.status("a").identity)])
        do {
            _ = try Recovery.run(holding: f.lock)
            Issue.record("a journal of another directory was replayed")
        } catch let error as RecoveryError {
            #expect(error.description.contains(".policyctl/journal.jsonl:1: it began on another directory (device \(f.lock.state.rootStatus.device), inode \(foreign))"))
            #expect(error.description.contains("move .policyctl aside"))
        }
        #expect(f.exists("a"))
        // A closed transaction of another directory is history, not work: it does not block anything.
        let g = try ApplyFixture()
        try append(g, [begin(g, inode: g.lock.state.rootStatus.inode + 1), forgedRecord("end", seq: 2) { $0.string("outcome", "committed") }])
        #expect(try Recovery.run(holding: g.lock).nothingToDo)
    }

    // MARK: State folders and files

    @Test("a .policyctl that this uid does not own, that others can write, or that is not a directory is refused, naming the fix",
          arguments: ["owner", "mode", "symlink", "file"])
    func untrustedStateDirectory(kind: String) throws {
        let f = try ApplyFixture()
        let other = f.rootPath + "/other"
        mkdir(other, 0o755)
        let state = other + "/.policyctl"
        switch kind {
        case "owner": mkdir(state, 0o700); chown(state, 12345, 12345)
        case "mode": mkdir(state, 0o700); chmod(state, 0o777)
        case "symlink": mkdir(other + "/elsewhere", 0o700); symlink("elsewhere", state)
        default: close(open(state, O_CREAT | O_WRONLY, 0o644))
        }
        let root = try DirectoryHandle.open(root: other)
        do {
            _ = try StateDirectory.open(root: root, create: true)
            Issue.record("an untrusted .policyctl (\(kind)) was used")
        } catch let error as UntrustedState {
            #expect(error.path == ".policyctl")
            #expect(error.description.contains("--state-dir"))
            switch kind {
            case "owner": #expect(error.problem == "is owned by uid 12345, not by uid \(geteuid()) that runs policyctl")
            case "mode": #expect(error.problem == "is writable by group or others (mode 777)")
            default: #expect(error.problem.hasPrefix("is not a directory"))
            }
        }
    }

    @Test("a lock or journal file someone else owns, or a symlink in its place, is refused before it is used",
          arguments: ["lock", "journal.jsonl"])
    func untrustedStateFiles(name: String) throws {
        let f = try ApplyFixture()
        let other = f.rootPath + "/r"
        mkdir(other, 0o755)
        let root = try DirectoryHandle.open(root: other)
        let state = try #require(try StateDirectory.open(root: root, create: true))
        close(open(other + "/.policyctl/" + name, O_CREAT | O_WRONLY, 0o600))
        chown(other + "/.policyctl/" + name, 12345, 12345)
        #expect(throws: (any Error).self) {
            if name == "lock" { _ = try state.lock(wait: false) } else { _ = try state.openJournal() }
        }
        unlink(other + "/.policyctl/" + name)
        symlink("/etc/passwd", other + "/.policyctl/" + name)
        #expect(throws: (any Error).self) {
            if name == "lock" { _ = try state.lock(wait: false) } else { _ = try state.openJournal() }
        }
    }

    @Test("--state-dir: lock and journal outside the root, staging in a fresh 0700 ROOT/.policyctl-staging-<id>, a foreign .policyctl ignored")
    func externalState() throws {
        let f = try ApplyFixture()
        let other = f.rootPath + "/r"
        mkdir(other, 0o755)
        mkdir(other + "/.policyctl", 0o777)
        chown(other + "/.policyctl", 12345, 12345)
        close(open(other + "/old.tmp", O_CREAT | O_WRONLY, 0o644))
        let root = try DirectoryHandle.open(root: other)
        let stateDir = f.path + "/state/one"
        mkdir(f.path + "/state", 0o755)
        let state = try StateDirectory.open(root: root, stateDirectory: stateDir)
        #expect(state.notices == [".policyctl (owned by uid 12345) in the root is ignored: state is kept in \(stateDir) (--state-dir)"])
        var st = stat()
        #expect(stat(stateDir, &st) == 0 && st.st_mode & 0o7777 == 0o700)
        let lock = try state.lock(wait: false)
        let metadata = Transaction.Metadata(kind: .apply, policy: "unit", policySHA256: nil, policyPath: nil,
                                            planFile: nil, rootPath: other, actions: 1)
        let t = try Transaction.begin(metadata, lock: lock, journal: try state.openJournal())
        #expect(stat(other + "/.policyctl-staging-" + t.id, &st) == 0 && st.st_mode & 0o7777 == 0o700 && st.st_uid == geteuid())
        let staged = t.intend(.stage(path: RelativePath("old.tmp")!, name: t.stagingName()), action: 0,
                              identity: try root.status(of: FileName("old.tmp")!).identity)
        try t.makeDurable()
        try t.perform(staged)
        // A crash here: recovery finds the staging folder from the journal's transaction id and puts it back.
        let report = try Recovery.run(holding: lock)
        #expect(report.entries.first?.undone == 1)
        #expect(access(other + "/old.tmp", F_OK) == 0)
        #expect(access(other + "/.policyctl-staging-" + t.id, F_OK) != 0)
        #expect(access(stateDir + "/journal.jsonl", F_OK) == 0)
        // The foreign .policyctl was never written to.
        #expect(try FileManager.default.contentsOfDirectory(atPath: other + "/.policyctl").isEmpty)
        // The planner never lists engine state, in the root or from --state-dir.
        #expect(Markers.isEngineState(Array(".policyctl-staging-\(t.id)".utf8)))
        #expect(!Markers.isEngineState(Array(".policyctl2".utf8)))
    }

    @Test("StorageEngine.stateDirectory: lock and journal outside the root; a foreign .policyctl refused without it, ignored with it")
    func engineStateDirectory() throws {
        let f = try ApplyFixture()
        f.dir("r"); f.dir("r/tmp"); f.file("r/tmp/old", ageHours: 48)
        mkdir(f.rootPath + "/r/.policyctl", 0o777)
        chown(f.rootPath + "/r/.policyctl", 12345, 12345)
        var engine = try StorageEngine(yaml: "version: 1\nname: e\nrules:\n  - name: t\n    path: tmp\n    expire: 24h\n",
                                       root: f.rootPath + "/r")
        #expect {
            _ = try engine.apply()
        } throws: { error in
            guard case .untrustedState(let untrusted) = error as? EngineError else { return false }
            return untrusted.path == ".policyctl" && untrusted.problem.hasPrefix("is owned by uid 12345")
        }
        #expect(f.exists("r/tmp/old"))
        engine.stateDirectory = f.path + "/state"
        let result = try engine.apply()
        #expect(result.counts == [.delete: 1])
        #expect(!f.exists("r/tmp/old"))
        #expect(try engine.journal().map(\.outcome) == [.committed])
        #expect(access(f.path + "/state/journal.jsonl", F_OK) == 0)
    }

    @Test("a --state-dir that others can write or that another uid owns is refused, naming the fix")
    func untrustedExternalState() throws {
        let f = try ApplyFixture()
        let dir = f.path + "/shared"
        mkdir(dir, 0o777)
        chmod(dir, 0o777)
        #expect {
            _ = try StateDirectory.open(root: f.root, stateDirectory: dir)
        } throws: { error in
            (error as? UntrustedState)?.description == "\(dir): is writable by group or others (mode 777); refused: give --state-dir a directory owned by uid \(geteuid()) with mode 0700 (for example under /var/lib/policyctl)"
        }
    }
}
