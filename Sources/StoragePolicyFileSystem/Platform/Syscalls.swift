// The one file that calls the C library: `system_foo` is a thin wrapper for `foo`, with the platform's own
// argument and result types smoothed over. Never retries or interprets a result: `systemCall` does that.
internal import CPosix
#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#else
#error("StoragePolicy supports Linux (Glibc) and Apple platforms (Darwin) only")
#endif

// Everything outside Platform/ calls these, never libc by name, so that the Darwin differences live here and
// in CPosix.c alone. Signatures follow the C function they wrap; pointers to paths take Swift strings.

// MARK: errno

/// The calling thread's errno.
package var system_errno: Int32 {
    get { errno }
    set { errno = newValue }
}

package func system_strerror(_ number: Int32) -> String { String(cString: strerror(number)) }

// MARK: descriptors

package func system_open(_ path: UnsafePointer<CChar>, _ flags: Int32) -> Int32 { open(path, flags) }

package func system_open(_ path: UnsafePointer<CChar>, _ flags: Int32, _ mode: CInterop.Mode) -> Int32 {
    open(path, flags, mode)
}

package func system_openat(_ fd: Int32, _ path: UnsafePointer<CChar>, _ flags: Int32) -> Int32 { openat(fd, path, flags) }

package func system_openat(_ fd: Int32, _ path: UnsafePointer<CChar>, _ flags: Int32, _ mode: CInterop.Mode) -> Int32 {
    openat(fd, path, flags, mode)
}

@discardableResult package func system_close(_ fd: Int32) -> Int32 { close(fd) }

package func system_symlinkat(_ target: UnsafePointer<CChar>, _ fd: Int32, _ path: UnsafePointer<CChar>) -> Int32 {
    symlinkat(target, fd, path)
}

package func system_readlinkat(_ fd: Int32, _ path: UnsafePointer<CChar>, _ buffer: UnsafeMutablePointer<CChar>, _ size: Int) -> Int {
    readlinkat(fd, path, buffer, size)
}

package func system_dup(_ fd: Int32) -> Int32 { dup(fd) }

package func system_read(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int { read(fd, buffer, count) }

package func system_pread(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int, _ offset: CInterop.Offset) -> Int {
    pread(fd, buffer, count, offset)
}

package func system_write(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int { write(fd, buffer, count) }

package func system_fsync(_ fd: Int32) -> Int32 { fsync(fd) }

package func system_ftruncate(_ fd: Int32, _ length: CInterop.Offset) -> Int32 { ftruncate(fd, length) }

package func system_flock(_ fd: Int32, _ operation: Int32) -> Int32 { flock(fd, operation) }

/// fcntl(fd, F_GETFL) / fcntl(fd, F_SETFL, flags): the only commands the engine uses.
package func system_fcntl(_ fd: Int32, _ command: Int32) -> Int32 { fcntl(fd, command) }

package func system_fcntl(_ fd: Int32, _ command: Int32, _ value: Int32) -> Int32 { fcntl(fd, command, value) }

package func system_isatty(_ fd: Int32) -> Int32 { isatty(fd) }

/// Reserves blocks for `length` bytes from `offset`, growing the file to cover them. Returns 0 or an errno (it
/// does not set errno). Darwin has no posix_fallocate: F_PREALLOCATE reserves the space past the end of the
/// file, and ftruncate grows the size as posix_fallocate would.
package func system_posix_fallocate(_ fd: Int32, _ offset: CInterop.Offset, _ length: CInterop.Offset) -> Int32 {
    #if canImport(Darwin)
    var store = fstore_t(fst_flags: UInt32(F_ALLOCATEALL), fst_posmode: F_PEOFPOSMODE, fst_offset: 0,
                         fst_length: offset + length, fst_bytesalloc: 0)
    if fcntl(fd, F_PREALLOCATE, &store) == -1 { return errno }
    var s = stat()
    if fstat(fd, &s) == -1 { return errno }
    if s.st_size < offset + length, ftruncate(fd, offset + length) == -1 { return errno }
    return 0
    #else
    return posix_fallocate(fd, offset, length)
    #endif
}

// MARK: status and names

package func system_fstat(_ fd: Int32, _ status: inout CInterop.Stat) -> Int32 { fstat(fd, &status) }

package func system_stat(_ path: UnsafePointer<CChar>, _ status: inout CInterop.Stat) -> Int32 { stat(path, &status) }

package func system_lstat(_ path: UnsafePointer<CChar>, _ status: inout CInterop.Stat) -> Int32 { lstat(path, &status) }

package func system_unlinkat(_ fd: Int32, _ path: UnsafePointer<CChar>, _ flags: Int32) -> Int32 { unlinkat(fd, path, flags) }

package func system_mkdir(_ path: UnsafePointer<CChar>, _ mode: CInterop.Mode) -> Int32 { mkdir(path, mode) }

package func system_mkdtemp(_ template: UnsafeMutablePointer<CChar>) -> UnsafeMutablePointer<CChar>? { mkdtemp(template) }

package func system_mkdirat(_ fd: Int32, _ path: UnsafePointer<CChar>, _ mode: CInterop.Mode) -> Int32 { mkdirat(fd, path, mode) }

package func system_fchmod(_ fd: Int32, _ mode: CInterop.Mode) -> Int32 { fchmod(fd, mode) }

/// `owner` or `group` of UInt32.max (-1) leaves that one as it is, as fchown(2) defines.
package func system_fchown(_ fd: Int32, _ owner: UInt32, _ group: UInt32) -> Int32 { fchown(fd, owner, group) }
package func system_fchownat(_ fd: Int32, _ path: UnsafePointer<CChar>, _ owner: UInt32, _ group: UInt32, _ flags: Int32) -> Int32 {
    fchownat(fd, path, owner, group, flags)
}

package func system_utimensat(_ fd: Int32, _ path: UnsafePointer<CChar>, _ times: UnsafePointer<CInterop.TimeSpec>,
                      _ flags: Int32) -> Int32 {
    utimensat(fd, path, times, flags)
}

/// realpath(path, nil): a buffer the caller frees with `system_free`, or nil with errno set.
package func system_realpath(_ path: UnsafePointer<CChar>, _ resolved: UnsafeMutablePointer<CChar>?) -> UnsafeMutablePointer<CChar>? {
    realpath(path, resolved)
}

package func system_free(_ pointer: UnsafeMutableRawPointer?) { free(pointer) }

package func system_getcwd(_ buffer: UnsafeMutablePointer<CChar>, _ size: Int) -> UnsafeMutablePointer<CChar>? {
    getcwd(buffer, size)
}

// MARK: directory streams

/// Opens a stream over `fd`, which it then owns. Linux's DIR is opaque and Darwin's is not: both are
/// handed out as an OpaquePointer.
package func system_fdopendir(_ fd: Int32) -> OpaquePointer? {
    #if canImport(Darwin)
    return fdopendir(fd).map(OpaquePointer.init)
    #else
    return fdopendir(fd)
    #endif
}

package func system_readdir(_ stream: OpaquePointer) -> UnsafeMutablePointer<CInterop.DirectoryEntry>? {
    #if canImport(Darwin)
    return readdir(UnsafeMutablePointer<DIR>(stream))
    #else
    return readdir(stream)
    #endif
}

package func system_closedir(_ stream: OpaquePointer) -> Int32 {
    #if canImport(Darwin)
    return closedir(UnsafeMutablePointer<DIR>(stream))
    #else
    return closedir(stream)
    #endif
}

// MARK: process, environment, time

/// Gives the rest of the time slice away (a spin waiting on another thread that is about to finish).
package func system_sched_yield() { _ = sched_yield() }

package func system_getpid() -> Int32 { getpid() }

package func system_geteuid() -> UInt32 { geteuid() }

package func system_getuid() -> UInt32 { getuid() }

package func system_kill(_ pid: Int32, _ signal: Int32) -> Int32 { kill(pid, signal) }

package func system_pause() { _ = pause() }

package func system_usleep(_ microseconds: UInt32) -> Int32 { usleep(CInterop.Microseconds(microseconds)) }

package func system_getenv(_ name: UnsafePointer<CChar>) -> UnsafeMutablePointer<CChar>? { getenv(name) }

package func system_exit(_ status: Int32) -> Never { exit(status) }

package func system_clock_gettime(_ clock: CInterop.ClockID, _ time: inout CInterop.TimeSpec) -> Int32 {
    clock_gettime(clock, &time)
}

package func system_gmtime_r(_ time: inout CInterop.Time, _ parts: inout CInterop.BrokenDownTime) {
    _ = gmtime_r(&time, &parts)
}

package func system_localtime_r(_ time: inout CInterop.Time, _ parts: inout CInterop.BrokenDownTime) {
    _ = localtime_r(&time, &parts)
}

package func system_timegm(_ parts: inout CInterop.BrokenDownTime) -> CInterop.Time { timegm(&parts) }

package func system_mktime(_ parts: inout CInterop.BrokenDownTime) -> CInterop.Time { mktime(&parts) }

/// The soft limit on open descriptors (RLIMIT_NOFILE), nil when getrlimit fails. `unlimited` is true for
/// RLIM_INFINITY, which is UInt64.max on Linux but Int64.max on Darwin.
package func system_openFileLimit() -> (soft: UInt64, unlimited: Bool)? {
    var limit = rlimit()
    #if canImport(Darwin)
    guard getrlimit(RLIMIT_NOFILE, &limit) == 0 else { return nil }
    let infinity = rlim_t(Int64.max)  // RLIM_INFINITY, ((1 << 63) - 1), a macro Swift may not import
    #else
    guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
    let infinity = rlim_t.max  // RLIM_INFINITY, (rlim_t)-1, which Swift cannot import
    #endif
    return (UInt64(limit.rlim_cur), limit.rlim_cur == infinity)
}

/// Grows this process's descriptor table now to hold `count` descriptors (or the soft RLIMIT_NOFILE, if lower):
/// a descriptor at `count - 1` is duplicated and closed. Linux grows the table of a process whose threads share it
/// only after an RCU grace period (expand_fdtable's synchronize_rcu), which the call that opens the 65th, 129th
/// or 257th descriptor then waits for: 5 to 20 ms on the benchmark machine, mid-apply, with the run waiting on
/// it. With one thread the table grows at no such cost, and it never shrinks. Call it before any thread starts;
/// a process-wide setting, so the command makes it and the library never does. Nothing to do on Darwin.
package func system_reserveDescriptorTable(_ count: Int) {
    #if os(Linux)
    guard let limit = system_openFileLimit() else { return }
    let top = Int32(clamping: min(count, limit.unlimited ? count : Int(clamping: limit.soft)) - 1)
    guard top > 2 else { return }
    // The lowest free descriptor at or above `top`: never one already open, whatever the process inherited.
    for source: Int32 in [2, 1, 0] {
        let copy = fcntl(source, F_DUPFD_CLOEXEC, top)
        if copy >= 0 {
            close(copy)
            return
        }
    }
    #endif
}

/// Cores online (sysconf _SC_NPROCESSORS_ONLN), at least 1.
package func system_processorCount() -> Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }

// MARK: memory and strings

package func system_strlen(_ s: UnsafePointer<CChar>) -> Int { strlen(s) }

@usableFromInline package func system_memcmp(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, _ count: Int) -> Int32 { memcmp(a, b, count) }
/// True when `count` bytes from `a` hold `byte` (memchr: a word or a vector at a time).
@usableFromInline package func system_memchrHolds(_ a: UnsafeRawPointer, _ byte: UInt8, _ count: Int) -> Bool { memchr(a, Int32(byte), count) != nil }
/// The offset of the first `byte` in `count` bytes from `a`, or nil (memchr): how the journal's reader finds line ends.
package func system_memchrOffset(_ a: UnsafeRawPointer, _ byte: UInt8, _ count: Int) -> Int? {
    guard let found = memchr(a, Int32(byte), count) else { return nil }
    return UnsafeRawPointer(found) - a
}

// MARK: threads

package func system_pthread_mutex_init(_ m: UnsafeMutablePointer<CInterop.Mutex>) { _ = pthread_mutex_init(m, nil) }
package func system_pthread_mutex_destroy(_ m: UnsafeMutablePointer<CInterop.Mutex>) { _ = pthread_mutex_destroy(m) }
package func system_pthread_mutex_lock(_ m: UnsafeMutablePointer<CInterop.Mutex>) { _ = pthread_mutex_lock(m) }
package func system_pthread_mutex_unlock(_ m: UnsafeMutablePointer<CInterop.Mutex>) { _ = pthread_mutex_unlock(m) }
package func system_pthread_cond_init(_ c: UnsafeMutablePointer<CInterop.Condition>) { _ = pthread_cond_init(c, nil) }
package func system_pthread_cond_destroy(_ c: UnsafeMutablePointer<CInterop.Condition>) { _ = pthread_cond_destroy(c) }
package func system_pthread_cond_signal(_ c: UnsafeMutablePointer<CInterop.Condition>) { _ = pthread_cond_signal(c) }
package func system_pthread_cond_broadcast(_ c: UnsafeMutablePointer<CInterop.Condition>) { _ = pthread_cond_broadcast(c) }
package func system_pthread_cond_wait(_ c: UnsafeMutablePointer<CInterop.Condition>, _ m: UnsafeMutablePointer<CInterop.Mutex>) {
    _ = pthread_cond_wait(c, m)
}

/// Starts a thread running `start(argument)`; nil when none could be made. Darwin's pthread_t is a
/// non-null pointer and its start routine takes a non-optional argument; Linux's is an integer.
/// `stackSize` (bytes), when given, replaces the platform default for secondary threads (512 KiB on Darwin).
package func system_pthread_create(_ start: @convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer?,
                           _ argument: UnsafeMutableRawPointer?, stackSize: Int? = nil) -> CInterop.Thread? {
    var attributes = pthread_attr_t()
    guard pthread_attr_init(&attributes) == 0 else { return nil }
    defer { pthread_attr_destroy(&attributes) }
    if let stackSize { _ = pthread_attr_setstacksize(&attributes, stackSize) }
    #if canImport(Darwin)
    var thread: pthread_t?
    let routine = unsafeBitCast(start, to: (@convention(c) (UnsafeMutableRawPointer) -> UnsafeMutableRawPointer?).self)
    guard pthread_create(&thread, &attributes, routine, argument) == 0 else { return nil }
    return thread
    #else
    var thread = pthread_t()
    guard pthread_create(&thread, &attributes, start, argument) == 0 else { return nil }
    return thread
    #endif
}


// MARK: threads

/// Whether this thread's calls are out of the fault-injection seam's count (FaultInjection.uncounted).
package func system_faultExempt() -> Bool { cposix_fault_exempt() != 0 }
package func system_setFaultExempt(_ exempt: Bool) { cposix_set_fault_exempt(exempt ? 1 : 0) }

// MARK: memory

/// Gives the free pages of every malloc arena back to the system (glibc's `malloc_trim(0)`). Memory freed by
/// other threads (a plan made on a pool thread, with its walkers) stays in their arenas otherwise, counted in
/// the process's RSS while the thread that goes on allocates in its own. Nothing to do on Darwin.
package func system_mallocTrim() {
    cposix_malloc_trim()
}

/// At most `count` malloc arenas for the whole process (glibc's `mallopt(M_ARENA_MAX, count)`); set before any
/// thread is started, it keeps the walker threads' freed memory in arenas `malloc_trim` can give back whole.
/// Nothing to do on Darwin. A process-wide setting: the command sets it for itself, the library never does.
package func system_limitMallocArenas(to count: Int32) {
    _ = cposix_malloc_arena_max(count)
}

/// Blocks under `bytes` served from the malloc arena (glibc's `mallopt(M_MMAP_THRESHOLD, bytes)`, at most 32 MiB
/// on 64-bit), not each mapped on its own. glibc maps a block of 128 KiB or more (the threshold rises only after
/// one is freed) and unmaps it when freed: a growing array's every doubling, and a buffer made again and again,
/// then came back as fresh pages, a page fault each, and each unmap interrupted the process's other threads to
/// flush their TLBs. Nothing to do on Darwin. A process-wide setting: the command sets it, the library never does.
package func system_keepLargeBlocksInArena(under bytes: Int32) {
    _ = cposix_malloc_mmap_threshold(bytes)
}
