// Making test trees at C speed: mkdir, openat(O_CREAT) and futimens in a loop, so a 1,000,000-entry tree takes
// seconds, not the minutes FileManager would. Only the app's own scratch folders are touched here; the library
// is given URLs and nothing else.
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

struct SetupError: Error, CustomStringConvertible {
    var description: String
    init(_ call: String, _ path: String) { description = "\(path): \(call): \(String(cString: strerror(errno)))" }
}

enum Files {
    /// A new directory at `url`, `age` old by its modification time when given (set after whatever `contents`
    /// makes). One that exists already is an error, never reused: the large tree goes in /dev/shm, where anyone
    /// may have put a folder or a symlink at the name first, and this program runs as root.
    static func directory(_ url: URL, mode: mode_t = 0o755, age: Duration? = nil, contents: () throws -> Void = {}) throws {
        guard mkdir(url.path, mode) == 0 else { throw SetupError("mkdir", url.path) }
        try contents()
        if let age { try setAge(url, age) }
    }

    /// A regular file at `url` holding `size` bytes, `age` old by its modification and access times.
    static func file(_ url: URL, age: Duration = .zero, size: Int = 100) throws {
        let fd = open(url.path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw SetupError("open", url.path) }
        defer { close(fd) }
        if size > 0 {
            let bytes = [UInt8](repeating: 0x61, count: size)
            guard write(fd, bytes, size) == size else { throw SetupError("write", url.path) }
        }
        var times = Files.times(age)
        guard futimens(fd, &times) == 0 else { throw SetupError("futimens", url.path) }
    }

    static func setAge(_ url: URL, _ age: Duration) throws {
        var times = Files.times(age)
        guard utimensat(AT_FDCWD, url.path, &times, AT_SYMLINK_NOFOLLOW) == 0 else { throw SetupError("utimensat", url.path) }
    }

    private static func times(_ age: Duration) -> [timespec] {
        let then = Date().timeIntervalSince1970 - Double(age.components.seconds)
        let t = timespec(tv_sec: Int(then), tv_nsec: 0)
        return [t, t]
    }

    /// The names under `url`, one level, sorted.
    static func names(_ url: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []).sorted()
    }

    /// Every path under `root`, relative to it, directories with a trailing "/", sorted.
    static func tree(_ root: URL) -> [String] {
        var out: [String] = []
        func walk(_ url: URL, _ prefix: String) {
            for name in names(url) {
                var isDirectory: ObjCBool = false
                _ = FileManager.default.fileExists(atPath: url.appendingPathComponent(name).path, isDirectory: &isDirectory)
                if isDirectory.boolValue {
                    out.append(prefix + name + "/")
                    walk(url.appendingPathComponent(name), prefix + name + "/")
                } else {
                    out.append(prefix + name)
                }
            }
        }
        walk(root, "")
        return out.sorted()
    }
}

/// `directories` folders of `files` empty files each under `root` (ROOT/dNNNN/fNNNN), made by `workers`
/// threads each taking every `workers`-th folder (folders are independent, so the kernel takes them in parallel).
enum BigTree {
    static func make(_ root: URL, directories: Int, files: Int, workers: Int) throws {
        let names: [[CChar]] = (0..<files).map { Array(String(format: "f%04d", $0).utf8CString) }
        let failure = FailureBox()
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            for d in stride(from: worker, to: directories, by: workers) {
                let path = root.appendingPathComponent(String(format: "d%04d", d)).path
                guard mkdir(path, 0o755) == 0 else { failure.set(SetupError("mkdir", path)); return }
                let dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
                guard dfd >= 0 else { failure.set(SetupError("open", path)); return }
                defer { close(dfd) }
                for name in names {
                    let fd = name.withUnsafeBufferPointer { openat(dfd, $0.baseAddress!, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o644) }
                    guard fd >= 0 else { failure.set(SetupError("openat", path)); return }
                    close(fd)
                }
            }
        }
        if let error = failure.error { throw error }
    }

    /// Removes what ``make(_:directories:files:workers:)`` made, the same way round.
    static func remove(_ root: URL, directories: Int, files: Int, workers: Int) {
        let names: [[CChar]] = (0..<files).map { Array(String(format: "f%04d", $0).utf8CString) }
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            for d in stride(from: worker, to: directories, by: workers) {
                let path = root.appendingPathComponent(String(format: "d%04d", d)).path
                let dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
                guard dfd >= 0 else { continue }
                for name in names { _ = name.withUnsafeBufferPointer { unlinkat(dfd, $0.baseAddress!, 0) } }
                close(dfd)
                rmdir(path)
            }
        }
        rmdir(root.path)
    }
}

/// The first error of the generator's threads.
final class FailureBox: Sendable {
    private let first = Mutex<SetupError?>(nil)
    func set(_ error: SetupError) { first.withLock { if $0 == nil { $0 = error } } }
    var error: SetupError? { first.withLock { $0 } }
}
