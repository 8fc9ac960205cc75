// Runs policyctl itself as a child process with the terminal inherited, so `demo` shows exactly what
// the real commands print. Never runs anything but this binary.

enum Subprocess {
    /// The running binary's path (so an installed copy runs itself, not one on PATH).
    static var selfPath: String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        if n > 0 { return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) }
        return Policyctl.invokedAs
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
        var cArgs = argv.map { strdup($0) } + [nil]
        var cEnv = env.map { strdup($0) } + [nil]
        defer { cArgs.forEach { free($0) }; cEnv.forEach { free($0) } }
        var pid: pid_t = 0
        guard posix_spawn(&pid, argv[0], nil, nil, &cArgs, &cEnv) == 0 else { return 127 }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        if status & 0x7F == 0 { return (status >> 8) & 0xFF }
        return 128 + (status & 0x7F)
    }
}
