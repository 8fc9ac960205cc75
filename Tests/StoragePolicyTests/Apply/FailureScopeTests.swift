// The typed sorting of apply's errors into "this entry" and "this run": each errno the issue names, the races,
// and the calls (write, read, fsync) that are about the disk whatever their errno.
import Testing
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyApply

@Suite("Failure scope")
struct FailureScopeTests {
    private func scope(_ operation: String, _ errno: Errno) -> FailureScope {
        FailureScope(FileSystemError(.init(name: operation), path: RelativePath("tmp/a")!, errno: errno))
    }

    @Test("EACCES, EPERM, ENAMETOOLONG, EBUSY, ELOOP, EROFS, ENOTEMPTY and EXDEV on an entry's call skip that entry")
    func entryErrors() {
        let errnos: [Errno] = [.permissionDenied, .notPermitted, .nameTooLong, .busy, .tooManySymbolicLinks, .readOnlyFileSystem, .crossDevice]
        for operation in ["renameat2", "mkdirat", "openat", "open", "fstatat", "setxattr", "removexattr", "getxattr", "readdir"] {
            for errno in errnos {
                #expect(scope(operation, errno) == .entry, "\(operation) \(errno)")
            }
        }
        #expect(scope("unlinkat", .directoryNotEmpty) == .entry)
    }

    @Test("a vanished entry and a destination that appeared are races, skipped as before")
    func races() {
        #expect(scope("renameat2", .noSuchFile) == .vanished)
        #expect(scope("openat", .notDirectory) == .vanished)
        #expect(scope("renameat2", .fileExists) == .appeared)
        #expect(scope("renameat2", .directoryNotEmpty) == .appeared)
        #expect(scope("mkdirat", .fileExists) == .appeared)
        #expect(scope("openat", .fileExists) == .appeared)
    }

    @Test("I/O errors, ENOSPC, EMFILE and unknown errnos, and every write, read and fsync, fail the run")
    func runErrors() {
        for operation in ["renameat2", "openat", "mkdirat", "setxattr"] {
            for errno in [Errno.ioError, .noSpace, .tooManyOpenFiles, .invalidArgument] {
                #expect(scope(operation, errno) == .run, "\(operation) \(errno)")
            }
        }
        for operation in ["write", "fsync", "read", "pread", "ftruncate", "some-new-call"] {
            for errno in [Errno.permissionDenied, .noSuchFile, .crossDevice, .ioError] {
                #expect(scope(operation, errno) == .run, "\(operation) \(errno)")
                #expect(!scope(operation, errno).isItemLevel)
            }
        }
        #expect(scope("setxattr", .fileExists) == .run)
    }
}
