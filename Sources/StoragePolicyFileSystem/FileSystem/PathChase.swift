// The path to a root (and to a state folder, a trash folder, a metrics file's folder) chased safely, folder by
// folder from "/" on descriptors, as systemd's chase() with CHASE_SAFE does: a co-tenant who owns a folder on the
// way, or can write one, must not be able to send root somewhere else with a symlink. The kernel's own resolution
// follows any symlink (fs.protected_symlinks covers only sticky world-writable folders), so the path is never
// handed to it whole: each folder is opened O_PATH|O_DIRECTORY|O_NOFOLLOW from its parent and fstat-ed, and a
// symlink met on the way is followed only when
//   - no folder from "/" down to the one holding it can be written by others than its owner (group or other
//     write; a sticky folder owned by root or the euid, such as /tmp, excepted), and
//   - the link and its folder belong to root or the euid and so does every folder above them, or the link and
//     its folder belong to one user U and every folder above them to root or U (systemd's "unsafe transition":
//     never from one unprivileged user to another).
// A link of U's (the second case) confines the rest of the chase to U's own entries: its target may not be
// absolute (that would start again at "/", root's) nor climb with ".." out of U's folders, and every folder or
// link reached through it must be U's, so U can send root nowhere U could not move its own folders anyway.
// Anything else is refused (FileSystemError `.refused`, EPERM) naming the link, its owner and the fix. The last
// component is opened O_NOFOLLOW as before: a root that is itself a symlink is never followed (ENOTDIR).
internal import CPosix

/// Where the path to a directory runs through a folder other users than root and the euid can write or own: the
/// first such folder above it. Someone who can write that folder can rename the directory away between runs and
/// put another in its place, so a plan over it says so (the root is reachable by other users).
package struct PathExposure: Sendable, Hashable, CustomStringConvertible {
    /// The folder, absolute, escaped for people.
    package var folder: String
    package var owner: UInt32
    package var mode: UInt32

    /// `/shared/team (owner uid 12345, mode 0755)`.
    package var description: String { "\(folder) (owner uid \(owner), mode \(PathChase.octal(mode)))" }
}

/// A directory reached by `PathChase`: its descriptor, its path with every symlink resolved, and the first folder
/// above it that others can write, if any.
package struct ChasedDirectory: Sendable {
    package let handle: DirectoryHandle
    /// Absolute, no symlink, no `.` or `..`: the path the chase took, as bytes turned into text.
    package let canonical: String
    package let exposure: PathExposure?
}

package enum PathChase {
    /// Symlinks followed in one chase at most (the kernel's own limit).
    static let maximumLinks = 40
    /// Folders held open at once on the way (a path may hold no more components than PATH_MAX allows anyway).
    static let maximumDepth = 1024

    private struct Folder {
        var name: [UInt8]
        var handle: DirectoryHandle
        var status: FileStatus
    }

    /// Opens the directory `path` (absolute, or relative to the working directory): its folders chased by the
    /// rule above, the last component opened `O_RDONLY|O_DIRECTORY|O_NOFOLLOW` from its folder's descriptor.
    package static func directory(_ path: String) throws(FileSystemError) -> ChasedDirectory {
        let (folder, name) = try parent(of: path)
        let flags = cposix_o_directory_flags()
        let last = name ?? FileName(unchecked: [0x2E])
        let r = last.withCString { n in systemCall(.open) { system_openat(folder.handle.descriptor, n, flags) } }
        switch r {
        case .success(let fd):
            return ChasedDirectory(handle: DirectoryHandle(descriptor: fd, path: .root),
                                   canonical: join(folder.canonical, name), exposure: folder.exposure)
        case .failure(let e): throw FileSystemError(.open, path: .root, errno: e)
        }
    }

    /// The folder holding the last component of `path`, chased by the rule above and opened for reading (or
    /// `O_PATH` where it may only be searched), with that last name; nil for `/` and a path ending in `..`, whose
    /// folder is then the directory itself.
    package static func parent(of path: String) throws(FileSystemError) -> (folder: ChasedDirectory, name: FileName?) {
        let absolute = PathNormalization.absolute(path)
        var components = absolute.utf8.split(separator: 0x2F, omittingEmptySubsequences: true).map { Array($0) }
        var name: FileName? = nil
        if let last = components.last, last != [0x2E, 0x2E], last != [0x2E] {
            name = FileName(last)
            guard name != nil else { throw FileSystemError(.open, path: .root, errno: .invalidArgument) }
            components.removeLast()
        }
        return (try chase(components, from: absolute.hasPrefix("/") ? "/" : "."), name)
    }

    /// `from`: "/", or "." for a relative path whose working directory cannot be named (removed, too long):
    /// then only what lies below it is chased.
    /// `parent(of:)` for a path that must name an entry in its folder (a file to write): `/` or a path ending in
    /// `..` is a directory (EISDIR).
    package static func folder(holding path: String) throws(FileSystemError) -> (folder: ChasedDirectory, name: FileName) {
        let (folder, name) = try parent(of: path)
        guard let name else { throw FileSystemError(.openat, path: .root, errno: .isDirectory) }
        return (folder, name)
    }

    private static func chase(_ components: [[UInt8]], from start: String = "/") throws(FileSystemError) -> ChasedDirectory {
        let euid = system_geteuid()
        var slash = try openStart(start)
        var slashStatus = try slash.status()
        var base = start
        var stack: [Folder] = []
        var todo = Array(components.reversed())
        var links = 0
        // Set once a link of an unprivileged user U (not root, not the euid) was followed: from there on only
        // U's own entries may be reached.
        var confinedTo: (uid: UInt32, link: String)? = nil
        func shown(_ names: [[UInt8]]) -> String {
            (base == "/" ? "/" : "./") + names.map(PathEscaping.escape).joined(separator: "/")
        }
        func here() -> String { shown(stack.map(\.name)) }

        while let name = todo.popLast() {
            if name.isEmpty || name == [0x2E] { continue }
            if name == [0x2E, 0x2E] {
                guard let left = stack.popLast() else { continue }
                if let confined = confinedTo {
                    let parent = stack.last?.status ?? slashStatus
                    if parent.userID != confined.uid {
                        throw refusal(confined.link, confined.uid, "it leads with '..' from \(shown(stack.map(\.name) + [left.name])) up to \(here()), owned by uid \(parent.userID), out of uid \(confined.uid)'s folders")
                    }
                }
                continue
            }
            guard stack.count < maximumDepth else { throw FileSystemError(.open, path: .root, errno: .nameTooLong) }
            let folder = stack.last?.handle ?? slash
            let folderStatus = stack.last?.status ?? slashStatus
            let file = FileName(unchecked: name)
            FaultInjection.pause(at: .chaseStep)
            let flags = cposix_o_path() | cposix_o_directory_flags()
            let opened = file.withCString { n in systemCall(.open) { system_openat(folder.descriptor, n, flags) } }
            switch opened {
            case .success(let fd):
                let handle = DirectoryHandle(descriptor: fd, path: .root)
                let status = try handle.status()
                if let confined = confinedTo, status.userID != confined.uid {
                    throw refusal(confined.link, confined.uid, "it leads to \(shown(stack.map(\.name) + [name])), owned by uid \(status.userID), out of uid \(confined.uid)'s folders")
                }
                stack.append(Folder(name: name, handle: handle, status: status))
            case .failure(let e) where e == .notDirectory || e == .tooManySymbolicLinks:
                let status = try folder.status(of: file)
                guard status.type == .symlink else { throw FileSystemError(.open, path: .root, errno: .notDirectory) }
                links += 1
                guard links <= maximumLinks else { throw FileSystemError(.open, path: .root, errno: .tooManySymbolicLinks) }
                let link = shown(stack.map(\.name) + [name])
                let chain = [slashStatus] + stack.map(\.status)
                if let confined = confinedTo, status.userID != confined.uid {
                    throw refusal(confined.link, confined.uid, "it leads to the symlink \(link), owned by uid \(status.userID), out of uid \(confined.uid)'s folders")
                }
                if let why = linkProblem(status, folder: folderStatus, chain: chain, chainNames: stack.map(\.name), euid: euid) {
                    throw refusal(link, status.userID, why)
                }
                let target = try folder.linkTarget(of: file)
                guard !target.isEmpty else { throw FileSystemError(.open, path: .root, errno: .noSuchFile) }
                if !trusted(status.userID, euid), confinedTo == nil { confinedTo = (status.userID, link) }
                if target.first == 0x2F {
                    if let confined = confinedTo {
                        throw refusal(confined.link, confined.uid, "it points to the absolute path \(PathEscaping.escape(target)), which starts again at '/' (root's), out of uid \(confined.uid)'s folders")
                    }
                    stack.removeAll()
                    if base != "/" {
                        slash = try openStart("/")
                        slashStatus = try slash.status()
                        base = "/"
                    }
                }
                let parts = target.split(separator: 0x2F, omittingEmptySubsequences: true).map { Array($0) }
                todo.append(contentsOf: parts.reversed())
            case .failure(let e):
                throw FileSystemError(.open, path: .root, errno: e)
            }
        }
        // The folder handed back must be usable as a folder (fsync, listing): opened for reading where it can be.
        var result = stack.last?.handle ?? slash
        let reopened = systemCall(.open) { system_openat(result.descriptor, ".", cposix_o_directory_flags()) }
        if case .success(let fd) = reopened { result = DirectoryHandle(descriptor: fd, path: .root) }
        var exposure: PathExposure? = nil
        for (i, status) in ([slashStatus] + stack.map(\.status)).enumerated() where exposed(status, euid) {
            exposure = PathExposure(folder: shown(stack.prefix(i).map(\.name)), owner: status.userID, mode: status.permissions)
            break
        }
        return ChasedDirectory(handle: result, canonical: here(), exposure: exposure)
    }

    /// Why the symlink `link` in `folder` may not be followed, or nil. `chain`: every folder from "/" down to
    /// `folder` (its last element), `chainNames` their names below "/".
    static func linkProblem(_ link: FileStatus, folder: FileStatus, chain: [FileStatus], chainNames: [[UInt8]],
                            euid: UInt32) -> String? {
        func name(_ i: Int) -> String { "/" + chainNames.prefix(i).map(PathEscaping.escape).joined(separator: "/") }
        for (i, status) in chain.enumerated() where othersCanWrite(status, euid) {
            return "it lies below \(name(i)) (owner uid \(status.userID), mode \(octal(status.permissions))), which users other than its owner can write: no symlink there is followed"
        }
        let owners: Set<UInt32>
        if trusted(link.userID, euid) {
            owners = [0, euid]
        } else {
            guard folder.userID == link.userID else {
                return "its folder is owned by uid \(folder.userID): a symlink is followed only when it and its folder belong to \(trustedNames(euid)), or both to one same user"
            }
            owners = [0, link.userID]
        }
        guard owners.contains(folder.userID) else {
            return "its folder is owned by uid \(folder.userID): a symlink is followed only when it and its folder belong to \(trustedNames(euid)), or both to one same user"
        }
        for (i, status) in chain.enumerated() where !owners.contains(status.userID) {
            return "\(name(i)) above it is owned by uid \(status.userID): a symlink is followed only when every folder above it belongs to root or to the link's own owner"
        }
        return nil
    }

    /// `mkdir -p` on descriptors: the existing part of `path` chased by the rule above, each missing folder made
    /// with mkdirat (`permissions`) in its parent's descriptor, then opened O_NOFOLLOW|O_DIRECTORY and kept only
    /// when it is a directory owned by the euid (EEXIST from someone else's racing mkdir: what is there is then
    /// chased like any folder on the way). Returns the last folder.
    @discardableResult
    package static func makeDirectories(_ path: String, permissions: UInt32) throws(FileSystemError) -> ChasedDirectory {
        let absolute = PathNormalization.absolute(path)
        let start = absolute.hasPrefix("/") ? "/" : "."
        let parts = absolute.utf8.split(separator: 0x2F, omittingEmptySubsequences: true).map { Array($0) }
        var last = try chase([], from: start)
        for count in parts.indices.map({ $0 + 1 }) {
            // Every component a folder on the way (a safe symlink to a folder is followed, as `mkdir -p` does).
            do {
                last = try chase(Array(parts[..<count]), from: start)
                continue
            } catch where error.errno == .noSuchFile {}
            let folder = try chase(Array(parts[..<(count - 1)]), from: start)
            guard let name = FileName(parts[count - 1]), parts[count - 1] != [0x2E, 0x2E] else {
                throw FileSystemError(.mkdirat, path: .root, errno: .invalidArgument)
            }
            do { try folder.handle.makeDirectory(name, permissions: permissions) } catch where error.errno == .fileExists {}
            last = try chase(Array(parts[..<count]), from: start)
            let status = try last.handle.status()
            guard status.type == .directory, trusted(status.userID, system_geteuid()) else {
                throw FileSystemError(.refused("\(last.canonical) was made by uid \(status.userID) as policyctl was making it; inspect it, then remove it"),
                                      path: .root, errno: .notPermitted)
            }
        }
        return last
    }

    /// Root or the user running policyctl.
    static func trusted(_ uid: UInt32, _ euid: UInt32) -> Bool { uid == 0 || uid == euid }

    /// Group or other write, except on a sticky folder owned by root or the euid (/tmp), where others can add
    /// entries but never rename or replace ours.
    static func othersCanWrite(_ status: FileStatus, _ euid: UInt32) -> Bool {
        status.permissions & 0o022 != 0 && !(status.permissions & 0o1000 != 0 && trusted(status.userID, euid))
    }

    /// True for a folder someone other than root and the euid can change: owned by another user, or writable by
    /// others (othersCanWrite).
    static func exposed(_ status: FileStatus, _ euid: UInt32) -> Bool {
        !trusted(status.userID, euid) || othersCanWrite(status, euid)
    }

    private static func refusal(_ link: String, _ owner: UInt32, _ why: String) -> FileSystemError {
        FileSystemError(.refused("refusing to follow the symlink \(link), owned by uid \(owner): \(why); fix: name the folder by its real path (no symlink another user controls), or have root own the link and every folder above it"),
                        path: .root, errno: .notPermitted)
    }

    /// `root`, or `root or uid 1000 (that runs policyctl)`.
    package static func trustedNames(_ euid: UInt32) -> String { euid == 0 ? "root" : "root or uid \(euid) that runs policyctl" }

    /// `0755`, `1777`: four octal digits.
    package static func octal(_ mode: UInt32) -> String {
        let digits = String(mode & 0o7777, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    private static func openStart(_ start: String) throws(FileSystemError) -> DirectoryHandle {
        let r = start.withCString { s in systemCall(.open) { system_open(s, cposix_o_path() | cposix_o_directory_flags()) } }
        switch r {
        case .success(let fd): return DirectoryHandle(descriptor: fd, path: .root)
        case .failure(let e): throw FileSystemError(.open, path: .root, errno: e)
        }
    }

    private static func join(_ folder: String, _ name: FileName?) -> String {
        guard let name else { return folder }
        return (folder == "/" ? "" : folder) + "/" + name.escaped
    }
}

extension FileSystemError {
    /// An `EIO` from `operation` with no path: a failure that gave no errno of its own (a writer's closure).
    package static func unexplained(_ operation: Operation) -> FileSystemError {
        FileSystemError(operation, path: .root, errno: .ioError)
    }

    /// What went wrong, for a message that names the path itself: the errno (`Permission denied (EACCES)`), or,
    /// for a refusal (an unsafe symlink on the way to a root, untrusted state), the refusal and its fix.
    package var reason: String {
        if case .refused(let why) = operation { return why }
        return "\(errno)"
    }
}
