// Runs policyctl itself as a child process with the terminal inherited, so `demo` shows exactly what
// the real commands print. Never runs anything but this binary.

enum Subprocess {
    /// The running binary's path (so an installed copy runs itself, not one on PATH).
    static var selfPath: String {
        system_readlink("/proc/self/exe") ?? Policyctl.invokedAs
    }

    /// Removes a folder this process created (the demo's temporary folder) with `rm -rf`.
    static func runRemove(_ path: String) -> Int32 { spawn(["/bin/rm", "-rf", "--", path], environment: [:]) }

    /// Runs `policyctl ARGS...` and waits; returns its exit status (128+signal when killed).
    static func runSelf(_ arguments: [String], environment extra: [String: String] = [:]) -> Int32 {
        spawn([selfPath] + arguments, environment: extra)
    }

    private static func spawn(_ argv: [String], environment extra: [String: String]) -> Int32 {
        var env = extra.map { "\($0)=\($1)" }
        var i = 0
        while let entry = system_environ[i] {
            let s = String(cString: entry)
            if !extra.keys.contains(where: { s.hasPrefix($0 + "=") }) { env.append(s) }
            i += 1
        }
        guard let pid = system_spawn(argv, environment: env) else { return 127 }
        var status: Int32 = 0
        while true {
            if let s = system_waitpid(pid) { status = s; break }
            if system_errno != .interrupted { break }
        }
        if status & 0x7F == 0 { return (status >> 8) & 0xFF }
        return 128 + (status & 0x7F)
    }
}
