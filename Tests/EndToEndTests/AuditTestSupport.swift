// Temporary trees for the audit and schedule end-to-end tests: files with byte names and chosen ages, a
// snapshot of every entry's metadata (to prove an audit changes nothing), and policy files beside them.
import Foundation
import TreeFixture

final class AuditTree {
    /// The tree's directory (absolute); the root the policy is audited against is `root`.
    let directory: String
    var root: String { directory + "/root" }

    init() throws {
        directory = TestScratch.path("audit")
        try FileManager.default.createDirectory(atPath: directory + "/root", withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }

    /// Creates a regular file under the root (parents included) whose mtime and atime are `ageHours` old.
    func file(_ relative: [UInt8], ageHours: Double = 0, size: Int = 16) {
        let path = Array(root.utf8) + [0x2F] + relative
        if let slash = relative.lastIndex(of: 0x2F) { makeDirectories(Array(relative[..<slash])) }
        let fd = withPath(path) { open($0, O_WRONLY | O_CREAT | O_TRUNC, 0o644) }
        precondition(fd >= 0, "cannot create \(String(decoding: path, as: UTF8.self))")
        _ = [UInt8](repeating: 0x61, count: size).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        age(path, hours: ageHours)
    }

    func file(_ relative: String, ageHours: Double = 0, size: Int = 16) { file(Array(relative.utf8), ageHours: ageHours, size: size) }

    func folder(_ relative: String) { makeDirectories(Array(relative.utf8)) }

    /// Writes a policy file next to the root (never inside it) and returns its path.
    func policy(_ yaml: String, name: String = "policy.yaml") throws -> String {
        let path = directory + "/" + name
        try yaml.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Every entry under the root with its type, size, mode and times, in a stable order.
    func snapshot() -> [String] {
        var out: [String] = []
        func walk(_ path: [UInt8], _ relative: String) {
            // Read with O_NOATIME (Linux's 01000000; allowed on our own files), so taking the snapshot does
            // not itself move directory atimes under relatime.
            let fd = withPath(path) { open($0, O_RDONLY | O_DIRECTORY | O_CLOEXEC | 0o1000000) }
            guard fd >= 0, let dir = fdopendir(fd) else { return }
            defer { closedir(dir) }
            var names: [[UInt8]] = []
            while let entry = readdir(dir) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix { $0 != 0 }) }
                if name != [0x2E] && name != [0x2E, 0x2E] { names.append(name) }
            }
            for name in names.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
                let child = path + [0x2F] + name
                var s = stat()
                _ = withPath(child) { lstat($0, &s) }
                let shown = relative + "/" + name.map { String($0, radix: 16) }.joined(separator: ".")
                out.append("\(shown) mode=\(s.st_mode) size=\(s.st_size) ino=\(s.st_ino) mtime=\(s.st_mtim.tv_sec).\(s.st_mtim.tv_nsec) atime=\(s.st_atim.tv_sec).\(s.st_atim.tv_nsec) ctime=\(s.st_ctim.tv_sec).\(s.st_ctim.tv_nsec)")
                if (s.st_mode & S_IFMT) == S_IFDIR { walk(child, shown) }
            }
        }
        walk(Array(root.utf8), "")
        return out
    }

    private func makeDirectories(_ relative: [UInt8]) {
        var path = Array(root.utf8)
        for component in relative.split(separator: 0x2F) {
            path += [0x2F] + component
            _ = withPath(path) { mkdir($0, 0o755) }
        }
    }

    private func age(_ path: [UInt8], hours: Double) {
        let seconds = time(nil) - Int(hours * 3600)
        var times = [timespec(tv_sec: seconds, tv_nsec: 0), timespec(tv_sec: seconds, tv_nsec: 0)]
        _ = withPath(path) { utimensat(AT_FDCWD, $0, &times, AT_SYMLINK_NOFOLLOW) }
    }

    private func withPath<R>(_ path: [UInt8], _ body: (UnsafePointer<CChar>) -> R) -> R {
        (path + [0]).withUnsafeBufferPointer { $0.withMemoryRebound(to: CChar.self) { body($0.baseAddress!) } }
    }
}

enum AuditSupport {
    /// A small app-container policy: tmp expiry (warning), a forbidden database (error), a layout directory.
    static let policy = """
        version: 1
        name: app-sandbox
        layout:
          - Documents/UserFiles
        rules:
          - name: tmp-expiry
            path: tmp
            expire: { after: 24h }
          - name: no-private-data
            path: Documents/UserFiles
            forbid: ["**/*.sqlite"]
            mode: audit
        """

    /// True once the planner is in: a stub planner fails every plan, so the audits below cannot run yet.
    static let plannerAvailable: Bool = {
        guard let tree = try? AuditTree(), let policy = try? tree.policy(policy) else { return false }
        tree.folder("Documents/UserFiles")
        let result = try? PolicyctlBinary.run(["audit", "--policy", policy, "--root", tree.root])
        return result.map { $0.status == 0 || $0.status == 1 } ?? false
    }()
}
