// macOS: which files processes hold open, from libproc (proc_listallpids, then proc_pidinfo PROC_PIDLISTFDS and
// proc_pidfdinfo PROC_PIDFDVNODEPATHINFO per process, in CPosix/Processes.c). There is no /proc/locks on Darwin,
// so every candidate gets the flock probe. Compiled everywhere: off macOS the C calls answer ENOSYS, the table is
// unreadable, and the check keeps every delete it judges, saying so (a test runs exactly that on Linux).
internal import CPosix

/// macOS: the open files of every process this run may inspect (root: all of them; another user: their own).
package struct LibprocInUseStrategy: InUseStrategy {
    package let busy: (@Sendable (RelativePath) -> Bool)?

    package init(busy: (@Sendable (RelativePath) -> Bool)? = nil) { self.busy = busy }

    package var note: String? {
        "in-use check: judged by libproc (the open files of every process this user may inspect) and a flock probe of each entry"
    }

    package func read(root: DirectoryHandle?) -> InUseReading {
        InUseReading(table: Self.table(), flocks: FlockTable(), source: "libproc", busy: busy)
    }

    /// Reads every process's open vnodes once. A process that exits meanwhile is skipped; one this run may not
    /// inspect is counted, and for root (which may inspect all) makes the table incomplete.
    package static func table() -> OpenFileTable {
        var pids = [Int32](repeating: 0, count: 1024)
        var count: Int32
        while true {
            count = cposix_list_pids(&pids, Int32(pids.count))
            if count < 0 {
                return OpenFileTable(unreadable: FileSystemError(.other("proc_listallpids"), path: RelativePath(unchecked: Array("libproc".utf8)),
                                                                  errno: Errno.current),
                                     hiddenProcesses: 0, readWithoutPrivilege: false, hiddenNeeds: "root")
            }
            // A full buffer may have been cut short: ask again with room for more.
            if Int(count) < pids.count { break }
            pids = [Int32](repeating: 0, count: pids.count * 2)
        }
        let own = system_getpid()
        var hidden = 0
        var holders: [(UInt64, UInt64, Int32)] = []
        var devices = [UInt64](repeating: 0, count: 256)
        var inodes = [UInt64](repeating: 0, count: 256)
        for pid in pids.prefix(Int(count)) where pid > 0 && pid != own {
            var n = cposix_pid_open_vnodes(pid, &devices, &inodes, Int32(devices.count))
            if n > Int32(devices.count) {
                devices = [UInt64](repeating: 0, count: Int(n) + 64)
                inodes = devices
                n = cposix_pid_open_vnodes(pid, &devices, &inodes, Int32(devices.count))
            }
            guard n >= 0 else {
                // Exited meanwhile is nothing; denied means this process's files are not known.
                let e = Errno.current
                if e == .permissionDenied || e == .notPermitted { hidden += 1 }
                continue
            }
            for i in 0..<min(Int(n), devices.count) { holders.append((devices[i], inodes[i], pid)) }
        }
        // Root may inspect every process: one it could not is a gap. Another user sees only their own by design.
        var table = OpenFileTable(unreadable: nil, hiddenProcesses: hidden, readWithoutPrivilege: system_geteuid() == 0,
                                  hiddenNeeds: "an unsandboxed root")
        for (device, inode, pid) in holders { table.record(device: device, inode: inode, pid: pid) }
        return table
    }
}
