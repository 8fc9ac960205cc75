// The command layer's one window on the C library: the only file in Sources/PolicyctlCommands that names a
// platform module. Never grows logic: what the commands need from the system belongs in the library's Platform/.
#if canImport(Glibc)
@_exported import Glibc
#elseif canImport(Darwin)
@_exported import Darwin
#else
#error("policyctl supports Linux (Glibc) and Apple platforms (Darwin) only")
#endif

// Re-exported so that no other file of the command layer repeats the `#if canImport` block. `@_exported` also
// reaches what imports PolicyctlCommands: policyctl's main.swift and compiled Swift policies' entry points.

/// write(2) under a name a type's own `write` method cannot shadow (which is why calls used to say `Glibc.write`).
func system_write(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int { write(fd, buffer, count) }

/// read(2) and open(2) under names a type's own `read`/`open` members cannot shadow.
func system_read(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int { read(fd, buffer, count) }
func system_open(_ path: String, _ flags: Int32, _ mode: mode_t = 0) -> Int32 { open(path, flags, mode) }

/// The process environment as a NULL-terminated C array: glibc's `environ`; Darwin's unistd.h does not declare
/// it and <crt_externs.h> hands it out through _NSGetEnviron.
var system_environ: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?> {
    #if canImport(Darwin)
    _NSGetEnviron()!.pointee!
    #else
    environ
    #endif
}
