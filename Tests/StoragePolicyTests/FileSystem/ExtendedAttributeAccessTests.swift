// The xattr calls reach an entry through its folder's descriptor and never open the entry itself: root reads,
// sets and removes the attributes of a mode-000 file, and a FIFO (which an open for reading would block on until
// a writer came) answers at once. Linux goes through /proc/self/fd/N/NAME and the l*xattr calls (CPosix.c).
import Foundation
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
import Testing
import TreeFixture

@Suite("xattrs without opening the entry")
struct ExtendedAttributeAccessTests {
    static let isRoot = geteuid() == 0

    /// A fresh folder under the scratch directory, removed by the caller.
    static func folder(_ name: String) -> String {
        let path = TestScratch.path(name)
        _ = try? FileManager.default.removeItem(atPath: path)
        mkdir(path, 0o755)
        return path
    }

    /// True when the file system under the scratch directory takes user xattrs (tmpfs before 6.6 does not).
    static let userXattrs: Bool = {
        let path = folder("xattr-probe")
        defer { _ = try? FileManager.default.removeItem(atPath: path) }
        close(open(path + "/f", O_CREAT | O_WRONLY, 0o644))
        return (try? DirectoryHandle.open(root: path).setExtendedAttribute("user.probe", to: [1], of: FileName("f")!)) != nil
    }()

    @Test("root reads, lists, sets and removes the xattrs of a mode-000 file", .enabled(if: isRoot && userXattrs))
    func unreadableFile() throws {
        let path = Self.folder("xattr-000")
        defer { _ = try? FileManager.default.removeItem(atPath: path) }
        close(open(path + "/secret", O_CREAT | O_WRONLY, 0o644))
        let dir = try DirectoryHandle.open(root: path)
        let name = FileName("secret")!
        try dir.setExtendedAttribute("user.before", to: Array("kept".utf8), of: name)
        #expect(chmod(path + "/secret", 0) == 0)
        #expect(try dir.extendedAttribute("user.before", of: name) == Array("kept".utf8))
        try dir.setExtendedAttribute("user.after", to: [0x41], of: name)
        #expect(try dir.extendedAttributeNames(of: name).sorted() == ["user.after", "user.before"])
        try dir.removeExtendedAttribute("user.before", of: name)
        #expect(try dir.extendedAttribute("user.before", of: name) == nil)
        #expect(try dir.extendedAttribute("user.after", of: name) == [0x41])
    }

    @Test("a FIFO is never opened: reading its xattrs answers at once (an open for reading would block)")
    func fifoIsNeverOpened() throws {
        let path = Self.folder("xattr-fifo")
        defer { _ = try? FileManager.default.removeItem(atPath: path) }
        #expect(mkfifo(path + "/pipe", 0o644) == 0)
        let dir = try DirectoryHandle.open(root: path)
        let done = DispatchSemaphore(value: 0)
        let answer = Answer()
        Thread.detachNewThread {
            answer.set(Result { () throws(FileSystemError) -> [UInt8]? in try dir.extendedAttribute("user.any", of: FileName("pipe")!) })
            done.signal()
        }
        let inTime = done.wait(timeout: .now() + 5) == .success
        if !inTime {
            // The call opened the FIFO and waits for a writer: be one, so the test fails instead of hanging.
            let writer = open(path + "/pipe", O_WRONLY | O_NONBLOCK)
            if writer >= 0 { close(writer) }
            done.wait()
        }
        #expect(inTime, "the xattr read opened the FIFO and blocked")
        // No attribute there: nil (Linux refuses user xattrs on a FIFO with ENODATA), or a refusal named by errno.
        switch answer.get() {
        case .success(let value): #expect(value == nil)
        case .failure(let error): #expect(error.errno == .notSupported || error.errno == .notPermitted, "\(error)")
        case nil: Issue.record("no answer")
        }
        // Nothing holds the FIFO open for reading now: a non-blocking writer finds no reader (ENXIO).
        let writer = open(path + "/pipe", O_WRONLY | O_NONBLOCK)
        #expect(writer == -1 && errno == ENXIO)
        if writer >= 0 { close(writer) }
    }

    @Test("a device node is never opened: its xattrs read as absent, where an open would reach the driver (ENXIO)",
          .enabled(if: isRoot))
    func deviceNodeIsNeverOpened() throws {
        let path = Self.folder("xattr-device")
        defer { _ = try? FileManager.default.removeItem(atPath: path) }
        // Major 240 is reserved for local use: no driver answers it, so an open fails with ENXIO or ENODEV.
        guard mknod(path + "/dev", S_IFCHR | 0o600, dev_t((240 << 8) | 0)) == 0 else { return }  // no CAP_MKNOD here
        let opened = open(path + "/dev", O_RDONLY | O_NONBLOCK)
        #expect(opened == -1 && (errno == ENXIO || errno == ENODEV))
        if opened >= 0 { close(opened) }
        let dir = try DirectoryHandle.open(root: path)
        #expect(try dir.extendedAttribute("user.any", of: FileName("dev")!) == nil)
        #expect(try dir.extendedAttributeNames(of: FileName("dev")!).filter { $0.hasPrefix("user.") } == [])
    }

    final class Answer: @unchecked Sendable {
        private let lock = NSLock()
        private var value: Result<[UInt8]?, FileSystemError>?
        func set(_ v: Result<[UInt8]?, FileSystemError>) { lock.lock(); value = v; lock.unlock() }
        func get() -> Result<[UInt8]?, FileSystemError>? { lock.lock(); defer { lock.unlock() }; return value }
    }
}
