// The cache of compiled Swift policies: DIR/KEY/policy, DIR being --cache-dir or
// $XDG_CACHE_HOME/policyctl/scripts (~/.cache/policyctl/scripts). Nothing in it is trusted unless this euid
// made it: DIR, KEY and the executable are opened O_NOFOLLOW and must be owned by the euid and writable by
// no one else (a co-tenant must not plant a program root then runs). A build happens in a private
// mkdtemp folder inside DIR and is renamed to KEY whole, so a reader sees a complete build or none.
import StoragePolicy

struct ScriptCache {
    /// The cache folder, absolute.
    let path: String
    /// It, opened O_DIRECTORY|O_NOFOLLOW and checked.
    let fd: Int32

    /// The folder `--cache-dir` names, or the default one.
    static func directory(_ option: String?) throws(CommandFailure) -> String {
        if let option { return RootSession.absolute(option) }
        if let xdg = ScheduleCommand.environment("XDG_CACHE_HOME"), xdg.hasPrefix("/") { return xdg + "/policyctl/scripts" }
        guard let home = ScheduleCommand.homeDirectory else {
            throw CommandFailure(code: .ioError, message: "no cache folder for compiled Swift policies: HOME and XDG_CACHE_HOME are unset; pass --cache-dir <dir>")
        }
        return home + "/.cache/policyctl/scripts"
    }

    /// The cache folder, created (0700, with any missing parents) when missing, opened and checked.
    static func open(_ option: String?) throws(CommandFailure) -> ScriptCache {
        let path = try directory(option)
        var prefix = ""
        for component in path.split(separator: "/") {
            prefix += "/" + component
            if system_mkdir(prefix, 0o700) != 0 && system_errno != .fileExists {
                throw CommandFailure(code: .ioError, message: "cannot create the script cache \(prefix): \(system_errno)")
            }
        }
        let fd = system_open(path, [.readOnly, .directory, .noFollow, .closeOnExec])
        guard fd >= 0 else {
            throw CommandFailure(code: .ioError, message: "cannot open the script cache \(path): \(system_errno)")
        }
        do { try check(fd, path, what: "the script cache") } catch { system_close(fd); throw error }
        return ScriptCache(path: path, fd: fd)
    }

    /// Refuses what another user owns or can write: fstat on the descriptor, so what is checked is what is used.
    static func check(_ fd: Int32, _ path: String, what: String) throws(CommandFailure) {
        guard let st = system_fstat(fd) else { throw CommandFailure(code: .ioError, message: "cannot check \(path): \(system_errno)") }
        let euid = system_geteuid()
        var problem: String? = nil
        if st.owner != euid { problem = "owned by uid \(st.owner), not \(euid)" }
        else if st.permissions & 0o022 != 0 { problem = "writable by \(st.permissions & 0o002 != 0 ? "others" : "its group")" }
        if let problem {
            throw CommandFailure(code: .ioError, message: "refusing \(what) \(path): it is \(problem), so another user could plant the program that runs as uid \(euid); remove it, or pass --cache-dir <dir> (a folder only you can write)")
        }
    }

    /// The compiled program of `key`, opened and checked, ready for fexecve; nil when it was never built.
    func program(_ key: String) throws(CommandFailure) -> Int32? {
        let folder = system_openat(fd, key, [.readOnly, .directory, .noFollow, .closeOnExec])
        if folder < 0 {
            if system_errno == .noSuchFile { return nil }
            throw CommandFailure(code: .ioError, message: "refusing \(path)/\(key): \(system_errno) (not a folder policyctl made); remove it")
        }
        defer { system_close(folder) }
        try ScriptCache.check(folder, "\(path)/\(key)", what: "the compiled policy folder")
        let program = system_openat(folder, "policy", [.readOnly, .noFollow, .closeOnExec])
        guard program >= 0 else {
            throw CommandFailure(code: .ioError, message: "refusing \(path)/\(key): no program in it (\(system_errno)); remove it")
        }
        do throws(CommandFailure) {
            try ScriptCache.check(program, "\(path)/\(key)/policy", what: "the compiled policy")
            if system_fstat(program)?.kind != .regular {
                throw CommandFailure(code: .ioError, message: "refusing \(path)/\(key)/policy: not a regular file; remove \(path)/\(key)")
            }
        } catch {
            system_close(program)
            throw error
        }
        return program
    }

    /// Builds into a fresh private folder (`make` writes `policy` there) and renames it to `key`. A build
    /// that fails leaves nothing behind; another process finishing the same key first wins.
    func build(_ key: String, make: (String) throws(CommandFailure) -> Void) throws(CommandFailure) {
        guard let folder = system_mkdtemp("\(path)/.build-\(key.prefix(16))-XXXXXX") else {
            throw CommandFailure(code: .ioError, message: "cannot create a build folder in \(path): \(system_errno)")
        }
        let name = String(folder.split(separator: "/").last!)
        do {
            try make(folder)
        } catch {
            _ = Subprocess.runRemove(folder)
            throw error
        }
        if system_renameat(fd, name, fd, key) != 0 {
            let e = system_errno
            _ = Subprocess.runRemove(folder)
            guard e == .fileExists || e == .directoryNotEmpty else {
                throw CommandFailure(code: .ioError, message: "cannot move the build into \(path)/\(key): \(e)")
            }
        }
    }

    /// Writes a new file (O_EXCL, 0600) whole.
    static func writeFile(_ path: String, _ bytes: [UInt8]) throws(CommandFailure) {
        let fd = system_open(path, [.writeOnly, .create, .exclusive, .noFollow, .closeOnExec], 0o600)
        guard fd >= 0 else { throw CommandFailure(code: .ioError, message: "cannot write \(path): \(system_errno)") }
        defer { system_close(fd) }
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { system_write(fd, $0.baseAddress! + written, bytes.count - written) }
            if n < 0 {
                if system_errno == .interrupted { continue }
                throw CommandFailure(code: .ioError, message: "cannot write \(path): \(system_errno)")
            }
            written += n
        }
    }
}
