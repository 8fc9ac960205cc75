// The C library for the tests, named in one place: Glibc on Linux, Darwin on Apple systems. Every test file that
// calls libc (stat, chmod, kill, ...) imports TreeFixture, which re-exports the platform's, so no test file
// carries an #if of its own and the tests build on Darwin as they do here.
#if canImport(Glibc)
@_exported import Glibc
#elseif canImport(Darwin)
@_exported import Darwin
#endif

/// libc's `struct stat`, for a test whose own helper is named `stat` (the function hides the type there).
public typealias LibcStat = stat
