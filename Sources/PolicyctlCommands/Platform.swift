// The command layer's one window on the C library: the only file in Sources/PolicyctlCommands that names a
// platform module, imported here alone (not re-exported: neither the other command files nor what imports
// PolicyctlCommands, policyctl's main.swift and compiled Swift policies' entry points, get libc from it).
// Each call the commands make is a small function below, in the library's `system_` style (Syscalls.swift);
// none grows logic: what the commands need from the system beyond a call belongs in the library's Platform/.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#else
#error("policyctl supports Linux (Glibc) and Apple platforms (Darwin) only")
#endif
import StoragePolicy

// MARK: errno

/// The calling thread's errno, as the library's Errno (compare with `.interrupted`, `.fileExists`, ...).
var system_errno: Errno { Errno(rawValue: errno) }

// MARK: descriptors and files

/// open(2)'s flags the commands use, by name (so no file but this one spells O_...).
struct OpenFlags: OptionSet {
    let rawValue: Int32
    static let readOnly = OpenFlags(rawValue: O_RDONLY)
    static let writeOnly = OpenFlags(rawValue: O_WRONLY)
    static let create = OpenFlags(rawValue: O_CREAT)
    static let exclusive = OpenFlags(rawValue: O_EXCL)
    static let directory = OpenFlags(rawValue: O_DIRECTORY)
    static let noFollow = OpenFlags(rawValue: O_NOFOLLOW)
    static let closeOnExec = OpenFlags(rawValue: O_CLOEXEC)
    static let noControllingTerminal = OpenFlags(rawValue: O_NOCTTY)
}

/// write(2) under a name a type's own `write` method cannot shadow (which is why calls used to say `Glibc.write`).
func system_write(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int { write(fd, buffer, count) }

/// read(2), open(2) and openat(2) under names a type's own `read`/`open` members cannot shadow.
func system_read(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int { read(fd, buffer, count) }
func system_open(_ path: String, _ flags: OpenFlags, _ mode: UInt32 = 0) -> Int32 { open(path, flags.rawValue, mode_t(mode)) }
func system_openat(_ fd: Int32, _ name: String, _ flags: OpenFlags) -> Int32 { openat(fd, name, flags.rawValue) }

/// close(2) whose result matters (a written file's last error can surface here): 0, or -1 with errno set.
func system_closeChecked(_ fd: Int32) -> Int32 { close(fd) }
func system_fsync(_ fd: Int32) -> Int32 { fsync(fd) }
func system_mkdir(_ path: String, _ mode: UInt32) -> Int32 { mkdir(path, mode_t(mode)) }
func system_unlink(_ path: String) -> Int32 { unlink(path) }
func system_rename(_ from: String, _ to: String) -> Int32 { rename(from, to) }
func system_renameat(_ fromDirectory: Int32, _ from: String, _ toDirectory: Int32, _ to: String) -> Int32 {
    renameat(fromDirectory, from, toDirectory, to)
}

/// access(2) with F_OK: something is at `path` (a symlink followed).
func system_exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

/// access(2) with X_OK: the real uid may execute `path`.
func system_isExecutable(_ path: String) -> Bool { access(path, X_OK) == 0 }

/// pipe(2), both ends close-on-exec: (read end, write end), or nil.
func system_pipe() -> (read: Int32, write: Int32)? {
    var fds: [Int32] = [0, 0]
    guard pipe(&fds) == 0 else { return nil }
    for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
    return (fds[0], fds[1])
}

/// mkdtemp(3): the folder made from `template` (ending XXXXXX), or nil with errno set.
func system_mkdtemp(_ template: String) -> String? {
    var bytes = Array(template.utf8CString)
    return bytes.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }.map { String(cString: $0) }
}

/// readlink(2) of `path`, or nil.
func system_readlink(_ path: String) -> String? {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let n = readlink(path, &buffer, buffer.count - 1)
    guard n > 0 else { return nil }
    return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// realpath(3): `path` absolute with every symlink resolved, or nil with errno set.
func system_realpath(_ path: String) -> String? {
    guard let resolved = realpath(path, nil) else { return nil }
    defer { free(resolved) }
    return String(cString: resolved)
}

/// What the commands read from a stat: the file's identity, owner, permission bits and type.
struct SystemFileStatus {
    enum Kind { case regular, directory, symbolicLink, other }
    var device: UInt64
    var inode: UInt64
    var owner: UInt32
    var linkCount: UInt64
    var size: Int64
    /// st_mtim: seconds and nanoseconds.
    var modified: (seconds: Int, nanoseconds: Int)
    /// The permission bits (st_mode without the type).
    var permissions: UInt32
    var kind: Kind

    init(_ st: stat) {
        device = UInt64(st.st_dev)
        inode = UInt64(st.st_ino)
        owner = UInt32(st.st_uid)
        linkCount = UInt64(st.st_nlink)
        size = Int64(st.st_size)
        #if canImport(Darwin)
        modified = (Int(st.st_mtimespec.tv_sec), Int(st.st_mtimespec.tv_nsec))
        #else
        modified = (Int(st.st_mtim.tv_sec), Int(st.st_mtim.tv_nsec))
        #endif
        permissions = UInt32(st.st_mode) & 0o7777
        switch st.st_mode & S_IFMT {
        case S_IFREG: kind = .regular
        case S_IFDIR: kind = .directory
        case S_IFLNK: kind = .symbolicLink
        default: kind = .other
        }
    }
}

/// fstat(2) of `fd`, or nil with errno set.
func system_fstat(_ fd: Int32) -> SystemFileStatus? {
    var st = stat()
    return fstat(fd, &st) == 0 ? SystemFileStatus(st) : nil
}

/// stat(2) of `path` (a symlink followed), or nil with errno set.
func system_stat(_ path: String) -> SystemFileStatus? {
    var st = stat()
    return stat(path, &st) == 0 ? SystemFileStatus(st) : nil
}

/// lstat(2) of `path` (a symlink is itself), or nil with errno set.
func system_lstat(_ path: String) -> SystemFileStatus? {
    var st = stat()
    return lstat(path, &st) == 0 ? SystemFileStatus(st) : nil
}

// MARK: the process

func system_isatty(_ fd: Int32) -> Bool { isatty(fd) == 1 }
func system_geteuid() -> UInt32 { UInt32(geteuid()) }

/// The home directory the user database gives this euid (getpwuid(3)), or nil.
func system_homeDirectoryOfEffectiveUser() -> String? {
    getpwuid(geteuid()).flatMap { $0.pointee.pw_dir.map { String(cString: $0) } }
}

/// The user name the user database gives this euid (getpwuid(3)), or nil.
func system_userNameOfEffectiveUser() -> String? {
    getpwuid(geteuid()).flatMap { $0.pointee.pw_name.map { String(cString: $0) } }
}
func system_getpid() -> Int32 { Int32(getpid()) }

/// SIGINT and SIGTERM stop ending the process: each now calls `handler`, in signal context, so it may only
/// do what is async-signal-safe (SignalCancellation's stores into an atomic). A plain signal(2): no helper
/// thread, nothing opened.
func system_onTerminationSignals(_ handler: @convention(c) (Int32) -> Void) {
    _ = signal(SIGINT, handler)
    _ = signal(SIGTERM, handler)
    // A parent may hand its blocked mask down (a runtime that takes signals through signalfd does): unblocked
    // on this thread, and so on every thread started after it, such as the walk's.
    var set = sigset_t()
    sigemptyset(&set)
    sigaddset(&set, SIGINT)
    sigaddset(&set, SIGTERM)
    _ = pthread_sigmask(SIG_UNBLOCK, &set, nil)
}

/// getenv(3): the variable's value, or nil when it is unset.
func system_getenv(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }

/// setenv(3), replacing any value.
func system_setenv(_ name: String, _ value: String) { _ = setenv(name, value, 1) }

/// time(2): the wall clock in whole seconds since the epoch.
func system_time() -> Int64 { Int64(time(nil)) }

/// CLOCK_MONOTONIC in seconds.
func system_monotonicSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// posix_spawn(3) of `argv[0]` with `argv`, and `environment` ("NAME=value"; nil: this process's own), each
/// `(from, to)` of `redirecting` dup2'd in the child: the child's pid, or nil.
func system_spawn(_ argv: [String], environment: [String]?, redirecting: [(from: Int32, to: Int32)] = []) -> Int32? {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    for (from, to) in redirecting { posix_spawn_file_actions_adddup2(&actions, from, to) }
    var cArgs = argv.map { strdup($0) } + [nil]
    var cEnv = (environment ?? []).map { strdup($0) } + [nil]
    defer { cArgs.forEach { free($0) }; cEnv.forEach { free($0) } }
    var pid: pid_t = 0
    let spawned = environment == nil
        ? posix_spawn(&pid, argv[0], &actions, nil, &cArgs, system_environ)
        : posix_spawn(&pid, argv[0], &actions, nil, &cArgs, &cEnv)
    return spawned == 0 ? Int32(pid) : nil
}

/// waitpid(2) for `pid`: its raw wait status, or nil with errno set.
func system_waitpid(_ pid: Int32) -> Int32? {
    var status: Int32 = 0
    return waitpid(pid_t(pid), &status, 0) < 0 ? nil : status
}

/// fexecve(3) of `fd` with `argv` and this process's environment: returns only when that failed, with its errno.
func system_fexecve(_ fd: Int32, _ argv: [String]) -> Errno {
    var cArgs = argv.map { strdup($0) } + [nil]
    defer { cArgs.forEach { free($0) } }
    fexecve(fd, &cArgs, system_environ)
    return system_errno
}

/// The process environment as a NULL-terminated C array: glibc's `environ`; Darwin's unistd.h does not declare
/// it and <crt_externs.h> hands it out through _NSGetEnviron.
var system_environ: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?> {
    #if canImport(Darwin)
    _NSGetEnviron()!.pointee!
    #else
    environ
    #endif
}

/// exit(3) under a name `Policyctl.exit` does not shadow.
private func system_exit(_ code: Int32) -> Never { exit(code) }

extension Policyctl {
    /// Ends the process with `code` (what `policyctl`'s main.swift and a compiled policy's entry point call
    /// with `main`'s result), so neither needs the C library or Foundation for it.
    public static func exit(_ code: Int32) -> Never { system_exit(code) }

    /// The last run's result, left for `exit` to free: a plan's actions and a report freed one object at a time
    /// (each action's path and names) took 2.5 ms after a 20,000-delete apply had printed its summary, and the
    /// exit that follows returns every page at once. One only, so a command over several roots holds no more
    /// than before. Set on the command's thread.
    nonisolated(unsafe) static var leftForExit: Any?
}
