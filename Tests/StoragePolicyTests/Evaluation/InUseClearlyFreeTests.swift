// The in-use check's shortcut (ClearlyFree): apply asks it about every delete before anything else, and it must
// answer exactly what the tables say. Pinned against the rule it replaced, written out here, over tables large
// enough that many inodes share a bit of its bitmap (those are the ones it must look up after all).
@_spi(Layers) @testable import StoragePolicyFileSystem
@_spi(Layers) @testable import StoragePolicyEvaluation
import Testing
import TreeFixture

@Suite("in-use check: the clearly-free shortcut answers as the tables do")
struct InUseClearlyFreeTests {
    /// The rule before the shortcut: read, app silent, complete, not open anywhere, /proc/locks rules a flock out.
    static func reference(_ check: InUseCheck, _ type: FileType?, _ identity: EntryIdentity) -> Bool {
        guard check.table.unreadable == nil, check.busy == nil else { return false }
        if type == .symlink { return true }
        guard check.table.incompleteness == nil else { return false }
        guard type != .directory, check.table.holder(device: identity.device, inode: identity.inode) == nil else { return false }
        return check.localDevices.contains(identity.device) && !check.flocks.mayHold(inode: identity.inode)
    }

    static let device: UInt64 = 0x803

    /// 20,000 open files on `device` at scattered inodes (a fixed generator), so about a quarter of the bitmap's
    /// bits are set; `others` are 40,000 inodes no one holds, scattered the same way.
    static let (open, others): ([UInt64], [UInt64]) = {
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        var seen = Set<UInt64>()
        var all: [UInt64] = []
        while all.count < 60_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let inode = (state >> 20) | 1
            if seen.insert(inode).inserted { all.append(inode) }
        }
        return (Array(all[..<20_000]), Array(all[20_000...]))
    }()

    static func busyTable() -> OpenFileTable {
        var table = OpenFileTable()
        for inode in open { table.record(device: device, inode: inode, pid: 4242) }
        return table
    }

    static func identity(_ inode: UInt64, device: UInt64 = device) -> EntryIdentity {
        EntryIdentity(device: device, inode: inode, size: 0, modificationTimeNs: 0)
    }

    @Test("over 60,000 scattered inodes, each type and a device not known to be local: the same answers as the tables, open files never free")
    func agreesWithTheTables() {
        let table = Self.busyTable()
        let checks = [
            InUseCheck(table: table, flocks: .read(), localDevices: [Self.device]),
            InUseCheck(table: table, flocks: FlockTable(), localDevices: [Self.device]),
            InUseCheck(table: table, flocks: .read(), localDevices: [Self.device, Self.device + 7]),
            InUseCheck(table: OpenFileTable(), flocks: .read(), localDevices: [Self.device]),
            InUseCheck(reading: InUseReading(table: table, flocks: .read(), localDevices: [Self.device], busy: { _ in false }), note: nil),
        ]
        // Inodes no one holds whose bit an open one set: answered only after the tables are asked.
        let slot = { (i: UInt64) in (i &* 0x9E37_79B9_7F4A_7C15) >> 48 }
        let openSlots = Set(Self.open.map(slot))
        let sharing = Self.others.filter { openSlots.contains(slot($0)) }
        #expect(sharing.count > 1_000)
        for (n, check) in checks.enumerated() {
            var mismatches: [String] = []
            for inode in Self.open + Self.others {
                for type: FileType? in [.regular, nil, .symlink, .directory] {
                    for device in [Self.device, Self.device + 7] {
                        let identity = Self.identity(inode, device: device)
                        if check.isClearlyFree(type: type, identity: identity) != Self.reference(check, type, identity) {
                            mismatches.append("inode \(inode) \(String(describing: type)) dev \(device)")
                        }
                    }
                }
            }
            #expect(mismatches.isEmpty, "check \(n): \(mismatches.prefix(5))")
            // A file the table lists open is never clearly free, as a file or without a known type.
            guard check.table.count > 0 else { continue }
            let heldFree = Self.open.filter { check.isClearlyFree(type: .regular, identity: Self.identity($0)) || check.isClearlyFree(type: nil, identity: Self.identity($0)) }
            #expect(heldFree.isEmpty, "check \(n): \(heldFree.prefix(5))")
        }
        // Where /proc/locks is trusted, the ones sharing a bit are free all the same (the lookup said so).
        if checks[0].flocks.incomplete == nil {
            let free = sharing.filter { checks[0].isClearlyFree(type: .regular, identity: Self.identity($0)) }
            #expect(free.count == sharing.filter { !checks[0].flocks.mayHold(inode: $0) }.count)
            #expect(!free.isEmpty)
        }
    }

    @Test("an unreadable /proc, or a run that could not read some processes: nothing is clearly free but symlinks where the table was read")
    func unreadableOrIncomplete() {
        let unreadable = InUseCheck(table: OpenFileTable(unreadable: FileSystemError(.open, path: .root, errno: .permissionDenied),
                                                         hiddenProcesses: 0, readWithoutPrivilege: false, hiddenNeeds: ""),
                                    flocks: .read(), localDevices: [Self.device])
        #expect(!unreadable.isClearlyFree(type: .regular, identity: Self.identity(5)))
        #expect(!unreadable.isClearlyFree(type: .symlink, identity: Self.identity(5)))
        let incomplete = InUseCheck(table: OpenFileTable(unreadable: nil, hiddenProcesses: 2, readWithoutPrivilege: true,
                                                         hiddenNeeds: "CAP_SYS_PTRACE"),
                                    flocks: .read(), localDevices: [Self.device])
        #expect(!incomplete.isClearlyFree(type: .regular, identity: Self.identity(5)))
        #expect(incomplete.isClearlyFree(type: .symlink, identity: Self.identity(5)))
    }
}
