// Which files processes hold open, read once from /proc/*/fd, and whether an entry holds a BSD flock (probed the
// way systemd-tmpfiles does: a non-blocking exclusive flock that fails while anyone else holds one).
// Only ever keeps entries: a process or fd that cannot be read is counted (see `hiddenProcesses`), and InUseCheck
// treats a root run that could not read some as incomplete, never as a reason to delete.
internal import CPosix

/// The (device, inode) of every file some process had open when the table was read.
/// Root sees every process; another user sees only their own (the kernel hides other users' /proc/PID/fd).
package struct OpenFileTable: Sendable {
    package struct Key: Hashable, Sendable {
        package var device: UInt64
        package var inode: UInt64
    }

    private var holders: [Key: Int32] = [:]
    /// Why /proc could not be listed at all; nil when it was read.
    package private(set) var unreadable: FileSystemError?
    /// Processes whose descriptors could not be read (EACCES/EPERM on /proc/PID/fd or on an fd in it): another
    /// user's without root, or any process of another uid (or with more capabilities) for a root run without
    /// CAP_SYS_PTRACE. Such a root can list /proc/PID/fd but not stat the links in it.
    package private(set) var hiddenProcesses = 0

    /// An empty table that knows nothing (tests, and rules that opt out).
    package init() {}

    /// A table that could not read `hiddenProcesses` processes (tests).
    package init(hiddenProcesses: Int, readWithoutPtrace: Bool = true) {
        self.hiddenProcesses = hiddenProcesses
        self.readWithoutPtrace = readWithoutPtrace
    }

    /// True when the table was read as root (euid 0) without CAP_SYS_PTRACE: then other users' processes (and
    /// root's with capabilities this one lacks) are hidden for want of a capability the run should have.
    package private(set) var readWithoutPtrace = system_geteuid() == 0 && cposix_has_effective_capability(19) != 1
    /// What a run that could not read some processes lacked: CAP_SYS_PTRACE on Linux.
    private var hiddenNeeds = "CAP_SYS_PTRACE"

    /// Why the table is incomplete, or nil: a root run without CAP_SYS_PTRACE that could not read some
    /// processes' descriptors (a systemd CapabilityBoundingSet= or a container that drops it). A run as
    /// another user sees only its own processes by design (Docs/policy-reference.md, "Who is seen"), and
    /// root with CAP_SYS_PTRACE sees all it can (a container runtime's process in a parent user namespace
    /// stays hidden from it): neither is flagged.
    package var incompleteness: String? {
        guard readWithoutPtrace, hiddenProcesses > 0 else { return nil }
        return "\(hiddenProcesses) process\(hiddenProcesses == 1 ? "" : "es") unreadable (needs \(hiddenNeeds))"
    }

    /// Reads /proc/*/fd once. A process that exits meanwhile, or an fd closed meanwhile, is skipped.
    package static func read(proc: String = "/proc") -> OpenFileTable {
        FaultInjection.uncounted { readTable(proc: proc) }
    }

    private static func readTable(proc: String) -> OpenFileTable {
        var table = OpenFileTable()
        let processes: [DirectoryEntry]
        do {
            processes = try DirectoryHandle.open(kernelPath: proc).entries()
        } catch {
            table.unreadable = error
            return table
        }
        let own = system_getpid()
        for process in processes {
            guard let pid = Int32(String(decoding: process.name.bytes, as: UTF8.self)), pid > 0, pid != own else { continue }
            let fdPath = "\(proc)/\(pid)/fd"
            let fds: [DirectoryEntry]
            do { fds = try DirectoryHandle.open(kernelPath: fdPath).entries() } catch {
                if error.errno != .noSuchFile { table.hiddenProcesses += 1 }
                continue
            }
            var hidden = false
            for fd in fds {
                var s = CInterop.Stat()
                // Following the magic link is the point: it names the open file itself, wherever it is.
                let r = "\(fdPath)/\(String(decoding: fd.name.bytes, as: UTF8.self))".withCString { system_stat($0, &s) }
                guard r == 0 else {
                    // Closed meanwhile (ENOENT) is nothing; denied means this process's files are not known.
                    // The kernel decides that once for the whole process (may it be traced?), so the rest of
                    // its descriptors would be denied too: a container's init holds hundreds.
                    let e = Errno.current
                    if e == .permissionDenied || e == .notPermitted { hidden = true; break }
                    continue
                }
                let key = Key(device: UInt64(s.st_dev), inode: UInt64(s.st_ino))
                if table.holders[key] == nil { table.holders[key] = pid }
            }
            if hidden { table.hiddenProcesses += 1 }
        }
        return table
    }

    /// A table filled by another platform's reader (Platform/LibprocTable.swift): `unreadable` when the
    /// process list itself could not be had, `hiddenProcesses` whose files could not be listed, `hiddenNeeds`
    /// what the run lacked to see them (named in `incompleteness`).
    package init(unreadable: FileSystemError?, hiddenProcesses: Int, readWithoutPrivilege: Bool, hiddenNeeds: String) {
        self.unreadable = unreadable
        self.hiddenProcesses = hiddenProcesses
        self.readWithoutPtrace = readWithoutPrivilege
        self.hiddenNeeds = hiddenNeeds
    }

    /// Records that `pid` holds (device, inode) open; the first holder found is the one named.
    package mutating func record(device: UInt64, inode: UInt64, pid: Int32) {
        let key = Key(device: device, inode: inode)
        if holders[key] == nil { holders[key] = pid }
    }

    /// A process holding the file open, or nil when none is known to.
    package func holder(device: UInt64, inode: UInt64) -> Int32? {
        holders[Key(device: device, inode: inode)]
    }

    /// How many distinct files are open.
    package var count: Int { holders.count }

    /// Calls `body` with the inode of every open file (InUseCheck's filter of inodes no one holds).
    package func forEachInode(_ body: (UInt64) -> Void) {
        for key in holders.keys { body(key.inode) }
    }

    /// `PID (command)`, the command from /proc/PID/comm (escaped; `?` when it cannot be read).
    package static func describe(pid: Int32, proc: String = "/proc") -> String {
        "\(pid) (\(command(of: pid, proc: proc) ?? "?"))"
    }

    /// The command of a running process, escaped; nil when it has exited (or /proc hides it).
    package static func command(of pid: Int32, proc: String = "/proc") -> String? {
        #if os(macOS)
        // No /proc on Darwin: libproc names the process.
        var name = [CChar](repeating: 0, count: 256)
        guard cposix_pid_name(pid, &name, Int32(name.count)) > 0 else { return nil }
        return PathEscaping.escape(Array(name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }))
        #else
        guard let comm = try? DirectoryHandle.open(kernelPath: "\(proc)/\(pid)").readFile(FileName("comm")!, limit: 64) else { return nil }
        return PathEscaping.escape(comm.last == 0x0A ? Array(comm.dropLast()) : comm)
        #endif
    }

    /// The process /proc/locks names as holding a FLOCK on (device, inode), or nil.
    package static func flockHolder(device: UInt64, inode: UInt64, proc: String = "/proc") -> Int32? {
        guard let bytes = try? DirectoryHandle.open(kernelPath: proc).readFile(FileName("locks")!, limit: 16 << 20) else { return nil }
        let major = ((device >> 8) & 0xfff) | ((device >> 32) & ~UInt64(0xfff))
        let minor = (device & 0xff) | ((device >> 12) & ~UInt64(0xff))
        // "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF" (major and minor in hex).
        for line in bytes.split(separator: 0x0A) {
            let fields = line.split(separator: 0x20)
            guard fields.count >= 6, fields[1].elementsEqual("FLOCK".utf8) else { continue }
            let id = fields[5].split(separator: 0x3A)
            guard id.count == 3,
                  UInt64(String(decoding: id[0], as: UTF8.self), radix: 16) == major,
                  UInt64(String(decoding: id[1], as: UTF8.self), radix: 16) == minor,
                  UInt64(String(decoding: id[2], as: UTF8.self)) == inode else { continue }
            return Int32(String(decoding: fields[4], as: UTF8.self))
        }
        return nil
    }
}
