// What a path-scoped `policyctl audit` looks at: PATH arguments made root-relative, the paths git says changed
// (`--changed-since REF`: the diff against REF plus untracked files, NUL-separated so any name survives), and
// the policy found by convention at ROOT/.policyctl.yaml. Git runs here, in the CLI, never in the library.
import Foundation
import StoragePolicy

enum AuditPaths {
    static let conventionalPolicyName = ".policyctl.yaml"

    /// `root`/.policyctl.yaml when it is a regular file with a single link; a usage error (64) otherwise.
    /// A symlink or a hard link is refused: as root, a policy quoted in diagnostics must not be another file.
    static func conventionalPolicy(root: String) throws(UsageError) -> String {
        let path = (root.hasSuffix("/") ? root : root + "/") + conventionalPolicyName
        guard let s = system_lstat(path) else {
            throw UsageError(message: "No --policy given and there is no \(path) (\(system_errno)); pass --policy <file> or create it",
                             command: "policyctl audit")
        }
        guard s.kind == .regular, s.linkCount == 1 else {
            throw UsageError(message: "No --policy given and \(path) is not a regular file with a single link (a symlink or a hard link is never followed); pass --policy <file>",
                             command: "policyctl audit")
        }
        return path
    }

    /// Lexically absolute: `.` parts and repeated slashes dropped, `..` kept (so it is refused later).
    static func absolute(_ path: String) -> [Substring] {
        OutputFile.absolute(path).split(separator: "/", omittingEmptySubsequences: true).filter { $0 != "." }
    }

    /// The PATH arguments as root-relative paths. Each is read relative to the working directory (or as absolute),
    /// the convention of pre-commit and linters; a relative one that does not lie inside the root that way but
    /// exists under the root (looked up from the root's descriptor, no symlink followed) is read as root-relative.
    /// Any other path is not governed by the policy: named on stderr and left out. When none is left, a usage
    /// error (64): a CI gate must never pass having audited nothing. `..` is a usage error.
    static func named(_ arguments: [String], root: String) throws(UsageError) -> [RelativePath] {
        let rootParts = absolute(root)
        let rootHandle = try? DirectoryHandle.open(root: root)
        var paths: [RelativePath] = []
        for argument in arguments {
            let parts = absolute(argument)
            guard !parts.contains("..") else {
                throw UsageError(message: "'\(argument)': a path with '..' is ambiguous through symlinks; name it from the root", command: "policyctl audit")
            }
            if parts.count >= rootParts.count, Array(parts.prefix(rootParts.count)) == rootParts,
               let relative = RelativePath(parts.dropFirst(rootParts.count).joined(separator: "/")) {
                paths.append(relative)
            } else if !argument.hasPrefix("/"), let rootHandle, let relative = RelativePath(argument), !relative.isRoot,
                      exists(relative, under: rootHandle) {
                paths.append(relative)
            } else {
                Terminal.err("audit: \(argument) is outside the root \(root); not audited")
            }
        }
        guard !paths.isEmpty else {
            throw UsageError(message: "none of the paths lies inside the root '\(root)', so nothing would be audited; name them from the current directory (\(root)/PATH) or from the root when they exist there",
                             command: "policyctl audit")
        }
        return paths
    }

    /// Whether `path` names an entry under the root: each directory on the way opened without following a
    /// symlink or crossing a mount, the last component lstat'ed (fstatat, AT_SYMLINK_NOFOLLOW).
    static func exists(_ path: RelativePath, under root: DirectoryHandle) -> Bool {
        guard let name = path.lastComponent, let parent = try? root.openDirectory(at: path.parent) else { return false }
        // `try?` flattens the optional: nil both when the entry is absent and when the stat failed.
        return (try? parent.statusIfPresent(of: name)) != nil
    }

    /// The paths under `root` that differ from `ref` in the working tree (deleted ones left out) plus the
    /// untracked files git does not ignore. A failing git is a usage error naming git's own message.
    static func changed(since ref: String, root: String) throws(UsageError) -> [RelativePath] {
        guard !ref.hasPrefix("-"), !ref.isEmpty else {
            throw UsageError(message: "--changed-since '\(ref)': not a git revision", command: "policyctl audit")
        }
        let diff = try git(["diff", "--name-only", "--relative", "-z", "--diff-filter=d", ref, "--"], root: root)
        let untracked = try git(["ls-files", "--others", "--exclude-standard", "-z", "--"], root: root)
        var seen = Set<RelativePath>()
        var paths: [RelativePath] = []
        for name in (diff + untracked).split(separator: 0) {
            guard let path = RelativePath(name), !path.isRoot, seen.insert(path).inserted else { continue }
            paths.append(path)
        }
        return paths
    }

    private static func git(_ arguments: [String], root: String) throws(UsageError) -> [UInt8] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["git"] + arguments
        process.currentDirectoryURL = URL(fileURLWithPath: root)
        var environment = ProcessInfo.processInfo.environment
        environment["GIT_OPTIONAL_LOCKS"] = "0"
        process.environment = environment
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        do { try process.run() } catch {
            throw UsageError(message: "--changed-since: cannot run git: \(error.localizedDescription)", command: "policyctl audit")
        }
        // stdout is drained first (it may be large); git's stderr is a few lines at most.
        let output = out.fileHandleForReading.readDataToEndOfFile()
        let message = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let text = String(decoding: message, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            throw UsageError(message: "--changed-since: 'git \(arguments.joined(separator: " "))' failed in \(root): \(text)", command: "policyctl audit")
        }
        return Array(output)
    }
}
