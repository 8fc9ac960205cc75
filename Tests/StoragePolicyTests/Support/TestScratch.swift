// One scratch folder per test run: every temporary tree, file and install stage goes under it, and it is
// removed when the test process exits, passing or failing. Never removes anything outside /tmp/policyctl-tests-* (or $POLICYCTL_TEST_SCRATCH/policyctl-tests-*).
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The per-run scratch folder, `/tmp/policyctl-tests-PID-XXXXXX/`.
public enum TestScratch {
    /// The folder's path, ending in "/". Mode 0755, so an unprivileged uid (`setpriv --reuid`) can reach
    /// the trees co-tenant tests open up to it.
    public static var directory: String { folder + "/" }

    /// A fresh path `directory + label + "-" + 8 hex digits`, not yet created. Short on purpose: some tests
    /// put sockets (108-byte paths at most) under it.
    public static func path(_ label: String) -> String {
        directory + label + "-" + String(UInt32.random(in: .min ... .max) | 0x1000_0000, radix: 16)
    }

    /// A template for mkdtemp under the scratch folder: `.../label-XXXXXX`.
    public static func template(_ label: String) -> [CChar] {
        Array((directory + label + "-XXXXXX").utf8CString)
    }

    /// Where the per-run folder is made: `/tmp`, or the folder `POLICYCTL_TEST_SCRATCH` names (the filesystem
    /// matrix, scripts/fs-matrix.sh, points it at an xfs, btrfs, overlayfs... mount so every tree the suites build
    /// lives there).
    public static let base: String = {
        if let dir = ProcessInfo.processInfo.environment["POLICYCTL_TEST_SCRATCH"], !dir.isEmpty {
            var isDirectory: ObjCBool = false
            precondition(FileManager.default.fileExists(atPath: dir, isDirectory: &isDirectory) && isDirectory.boolValue,
                         "POLICYCTL_TEST_SCRATCH=\(dir) is not a folder")
            return dir.hasSuffix("/") ? String(dir.dropLast()) : dir
        }
        return "/tmp"
    }()

    private static var prefix: String { base + "/policyctl-tests-" }

    private static let folder: String = {
        removeStaleFolders()
        var template = Array((prefix + "\(getpid())-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(made != nil, "mkdtemp failed: \(String(cString: strerror(errno)))")
        let path = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        chmod(path, 0o755)
        registered = path
        atexit { TestScratch.removeAtExit() }
        return path
    }()

    /// Set once the folder exists; read by the exit handler (which cannot capture).
    nonisolated(unsafe) private static var registered: String?

    private static func removeAtExit() {
        guard let path = registered else { return }
        remove(path)
    }

    /// Unmounts whatever a test left mounted inside `path` (deepest first), then removes it without
    /// crossing into any mount that could not be detached.
    private static func remove(_ path: String) {
        let mounts = (try? String(contentsOfFile: "/proc/self/mounts", encoding: .utf8)) ?? ""
        let inside = mounts.split(separator: "\n").compactMap { line -> String? in
            let fields = line.split(separator: " ")
            guard fields.count > 1 else { return nil }
            let point = String(fields[1])
            return point.hasPrefix(path + "/") ? point : nil
        }
        for point in inside.sorted(by: { $0.count > $1.count }) { umount2(point, Int32(MNT_DETACH)) }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/rm")
        p.arguments = ["-rf", "--one-file-system", path]
        try? p.run()
        p.waitUntilExit()
    }

    /// Folders left by runs that were killed before their exit handler ran (their pid is gone).
    private static func removeStaleFolders() {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: base) else { return }
        for name in names where name.hasPrefix("policyctl-tests-") {
            let pid = name.dropFirst("policyctl-tests-".count).split(separator: "-").first.flatMap { Int32($0) }
            guard let pid, pid != getpid(), kill(pid, 0) != 0, errno == ESRCH else { continue }
            remove(base + "/" + name)
        }
    }
}
