// The flock side of the in-use check: /proc/locks, read once, spares every entry it does not list the per-entry
// probe when it can be trusted (the initial PID namespace, a local filesystem), and the probe still runs where it
// cannot. This test process holds the flocks itself (another open file description than the probe's), and it is
// left out of the /proc/*/fd table, so only the flock side can find them.
import Foundation
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyEvaluation
import Testing
import TreeFixture

@Suite("in-use check: flocks from /proc/locks, probes only where it cannot say")
struct InUseCheckTests {
    /// A folder of `count` empty files f0..f(count-1), the first one flocked (exclusively) by this process.
    final class Folder {
        let path = TestScratch.path("inuse-flock")
        let handle: DirectoryHandle
        let names: [FileName]
        private let lockFD: Int32

        init(count: Int) throws {
            mkdir(path, 0o755)
            names = (0..<count).map { FileName("f\($0)")! }
            for name in names { close(open(path + "/" + String(decoding: name.bytes, as: UTF8.self), O_CREAT | O_WRONLY, 0o644)) }
            lockFD = open(path + "/f0", O_RDONLY)
            #expect(flock(lockFD, LOCK_EX | LOCK_NB) == 0)
            handle = try DirectoryHandle.open(root: path)
        }

        deinit {
            close(lockFD)
            for name in names { unlink(path + "/" + String(decoding: name.bytes, as: UTF8.self)) }
            rmdir(path)
        }

        /// Each file's in-use reason, in order.
        func reasons(_ check: InUseCheck) throws -> [String?] {
            try names.map { name in
                let status = try handle.status(of: name)
                return check.reason(parent: handle, name: name, path: RelativePath([name]), type: .regular,
                                    identity: status.identity)
            }
        }
    }

    /// Where the kernel's /proc/locks can be trusted for the scratch folder: the initial PID namespace, a local filesystem.
    static var trusted: Bool {
        FlockTable.isInitialPIDNamespace() && ((try? DirectoryHandle.open(root: TestScratch.directory).flocksAreLocal) ?? false)
    }

    @Test("/proc/locks: FLOCK lines give their inode; waiters, POSIX, OFD and lease locks do not")
    func parse() {
        let text = """
        1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF
        1: -> FLOCK  ADVISORY  WRITE 1240 08:01:5679 0 EOF
        2: POSIX  ADVISORY  WRITE 20999 fe:00:16286194 1073741824 1073742335
        3: OFDLCK ADVISORY  READ  -1 00:05:1111 0 EOF
        4: LEASE  ACTIVE    READ  77 00:2e:2222 0 EOF
        5: FLOCK  ADVISORY  READ  99 00:2e:3333 0 EOF
        junk
        """
        #expect(FlockTable.parse(Array(text.utf8)) == [5678, 3333])
    }

    @Test("a /proc without locks, or not the initial PID namespace's, is not trusted: every entry may hold a flock")
    func untrustedTables() throws {
        let fake = TestScratch.path("fake-proc")
        mkdir(fake, 0o755)
        defer { unlink(fake + "/locks"); rmdir(fake) }
        let missing = FlockTable.read(proc: fake)
        #expect(missing.incomplete?.hasPrefix("\(fake)/locks could not be read") == true)
        #expect(missing.mayHold(inode: 42))
        // Readable, but with no `self` in it: it is not known to be the initial namespace's /proc.
        try "1: FLOCK  ADVISORY  WRITE 1 08:01:7 0 EOF\n".write(toFile: fake + "/locks", atomically: false, encoding: .utf8)
        let foreign = FlockTable.read(proc: fake)
        #expect(foreign.incomplete == "\(fake) is not the initial PID namespace's; it hides the locks of processes outside it")
        #expect(foreign.count == 1)
        #expect(foreign.mayHold(inode: 42) && foreign.mayHold(inode: 7))
        #expect(FlockTable().mayHold(inode: 42))
    }

    @Test("trusted /proc/locks: the flocked file is found with one probe, the 19 others are not probed",
          .enabled(if: InUseCheckTests.trusted))
    func foundThroughProcLocks() throws {
        let folder = try Folder(count: 20)
        let check = InUseCheck.now(root: folder.handle)
        #expect(check.flocks.incomplete == nil)
        #expect(check.localDevices == [try folder.handle.status().device])
        let reasons = try folder.reasons(check)
        #expect(reasons[0]?.hasPrefix("in use by \(getpid()) (") == true, "\(reasons[0] ?? "nil")")
        #expect(reasons[0]?.hasSuffix("): holds a BSD flock") == true, "\(reasons[0] ?? "nil")")
        #expect(reasons.dropFirst().allSatisfy { $0 == nil })
        #expect(check.flockProbes == 1)
    }

    @Test("untrusted /proc/locks (another PID namespace, a network filesystem): every candidate is probed, the flock found",
          .enabled(if: InUseCheckTests.trusted))
    func foundByProbe() throws {
        let folder = try Folder(count: 20)
        let device = try folder.handle.status().device
        // Not the initial namespace's table: it knows nothing, so each of the 20 is probed once.
        let check = InUseCheck(table: OpenFileTable(), flocks: FlockTable(), localDevices: [device])
        let reasons = try folder.reasons(check)
        #expect(reasons[0]?.hasSuffix("holds a BSD flock") == true, "\(reasons[0] ?? "nil")")
        #expect(reasons.dropFirst().allSatisfy { $0 == nil })
        #expect(check.flockProbes == 20)
        // A trusted table, but the entries on a device not known to be local: probed all the same.
        let elsewhere = InUseCheck(table: OpenFileTable(), flocks: .read(), localDevices: [device &+ 1])
        #expect(try folder.reasons(elsewhere)[0]?.hasSuffix("holds a BSD flock") == true)
        #expect(elsewhere.flockProbes == 20)
    }

    @Test("a trusted table is believed: a flock it does not list is not probed for (the table read before the lock)",
          .enabled(if: InUseCheckTests.trusted))
    func trustedTableIsBelieved() throws {
        // /proc/locks read before the lock is taken: the window a per-run reading leaves, pinned.
        let before = FlockTable.read()
        let folder = try Folder(count: 3)
        let check = InUseCheck(table: OpenFileTable(), flocks: before, localDevices: [try folder.handle.status().device])
        // Another file system's flocked file may share an inode number: such a name is probed (and f0 then found).
        let listed = try folder.names.map { try before.mayHold(inode: folder.handle.status(of: $0).inode) }
        // (Only another file system's flocked file can share f0's inode number; then there is nothing to pin.)
        guard !listed[0] else { return }
        #expect(try folder.reasons(check) == [nil, nil, nil])
        #expect(check.flockProbes == listed.filter { $0 }.count)
    }

    @Test("a root run without CAP_SYS_PTRACE that could not read some processes is incomplete: a note, and every candidate kept; not so with the capability")
    func incompleteWithoutPtrace() throws {
        let folder = try Folder(count: 2)
        let blind = InUseCheck(table: OpenFileTable(hiddenProcesses: 12, readWithoutPtrace: true))
        #expect(blind.unreadableNote == "in-use check incomplete: 12 processes unreadable (needs CAP_SYS_PTRACE); entries that expire, quota and trash rules would delete are kept (set 'inUse: ignore' on a rule to delete regardless)")
        #expect(try folder.reasons(blind) == [String](repeating: "in use unknown: 12 processes unreadable (needs CAP_SYS_PTRACE); kept", count: 2))
        let one = InUseCheck(table: OpenFileTable(hiddenProcesses: 1, readWithoutPtrace: true))
        #expect(one.unreadableNote?.hasPrefix("in-use check incomplete: 1 process unreadable (needs CAP_SYS_PTRACE); ") == true)
        // Another user's run (or root with the capability) hides what it must: nothing flagged.
        let user = InUseCheck(table: OpenFileTable(hiddenProcesses: 12, readWithoutPtrace: false))
        #expect(user.unreadableNote == nil)
        #expect(try folder.reasons(user)[1] == nil)
    }
}
