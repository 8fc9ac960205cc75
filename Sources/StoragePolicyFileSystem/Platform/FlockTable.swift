// Which inodes hold a BSD flock, from one reading of /proc/locks per run, and whether that reading can be trusted
// to list every flock: only then may it spare an entry the per-entry probe. It is trusted only when /proc is the
// initial PID namespace's (the kernel lists there the locks of every namespace, to any reader) and was read whole;
// the caller adds that the entry lies on a local filesystem (a network filesystem's other clients are not listed).
// Anything not trusted, or an inode the table lists, is probed as before: the table only ever skips a probe.

/// The inodes some process holds a FLOCK on, as /proc/locks listed them when the table was read.
package struct FlockTable: Sendable {
    /// Matched by inode alone: /proc/locks names the superblock's device, which is not `st_dev` on a btrfs
    /// subvolume, so an inode listed on any device is probed rather than trusted absent.
    private var inodes: Set<UInt64> = []
    /// Why the table may miss a flock (so every entry is probed); nil when it lists every flock there is.
    package private(set) var incomplete: String? = "/proc/locks not read"

    /// A table that knows nothing: every entry is probed.
    package init() {}

    /// Reads `proc`/locks once. Trusted only in the initial PID namespace: a /proc of another namespace hides the
    /// locks of processes outside it (Linux 4.9 and later filter /proc/locks by the mount's namespace).
    package static func read(proc: String = "/proc") -> FlockTable {
        FaultInjection.uncounted { readTable(proc: proc) }
    }

    private static func readTable(proc: String) -> FlockTable {
        var table = FlockTable()
        let bytes: [UInt8]
        do {
            bytes = try DirectoryHandle.open(kernelPath: proc).readFile(FileName("locks")!, limit: 64 << 20)
        } catch {
            table.incomplete = "\(proc)/locks could not be read (\(error))"
            return table
        }
        table.inodes = parse(bytes)
        table.incomplete = isInitialPIDNamespace(proc: proc) ? nil
            : "\(proc) is not the initial PID namespace's; it hides the locks of processes outside it"
        return table
    }

    /// True unless the table is complete and does not list `inode`: then no process holds a flock on it.
    package func mayHold(inode: UInt64) -> Bool {
        incomplete != nil || inodes.contains(inode)
    }

    /// How many distinct inodes hold a flock.
    package var count: Int { inodes.count }

    /// Calls `body` with every inode the table lists (InUseCheck's filter of inodes no one holds).
    package func forEachInode(_ body: (UInt64) -> Void) {
        for inode in inodes { body(inode) }
    }

    /// The inodes of the FLOCK lines: `1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF`. Waiters (`1: -> FLOCK ...`)
    /// hold nothing yet; POSIX, OFDLCK and LEASE locks do not conflict with a flock on a local filesystem.
    static func parse(_ bytes: [UInt8]) -> Set<UInt64> {
        var inodes = Set<UInt64>()
        for line in bytes.split(separator: 0x0A) {
            let fields = line.split(separator: 0x20)
            guard fields.count >= 6, fields[1].elementsEqual("FLOCK".utf8) else { continue }
            let id = fields[5].split(separator: 0x3A)
            guard id.count == 3, let inode = UInt64(String(decoding: id[2], as: UTF8.self)) else { continue }
            inodes.insert(inode)
        }
        return inodes
    }

    /// The /proc mount is the initial PID namespace's when this process, which it must show to have a `self`,
    /// is in that namespace: its nsfs inode is the kernel's fixed PROC_PID_INIT_INO.
    static func isInitialPIDNamespace(proc: String = "/proc") -> Bool {
        var s = CInterop.Stat()
        guard "\(proc)/self/ns/pid".withCString({ system_stat($0, &s) }) == 0 else { return false }
        return UInt64(s.st_ino) == 0xEFFF_FFFC
    }
}
