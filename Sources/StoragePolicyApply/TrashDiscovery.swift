// Where the FreeDesktop trash specification puts trash folders: the home trash ($XDG_DATA_HOME/Trash) and, on
// every mounted volume, `$topdir/.Trash/$uid` (only when `.Trash` is a real folder, owned by root, sticky) or
// `$topdir/.Trash-$uid`. Run as root, every user's volume trashes; otherwise the running user's. Each candidate
// is looked at with fstatat(AT_SYMLINK_NOFOLLOW) through its volume's descriptor: a symlink, a `.Trash` that
// is not root's and sticky, or a per-user folder owned by anyone but its uid is ignored with a note naming it,
// never entered, because a co-tenant who can write a volume's top folder can plant any of those.

@_spi(Layers) import StoragePolicyFileSystem

/// A trash folder discovery found.
public struct DiscoveredTrash: Sendable, Hashable, Codable {
    /// Which of the specification's places it is.
    public enum Place: String, Sendable, Hashable, Codable {
        /// `$XDG_DATA_HOME/Trash` (by default `~/.local/share/Trash`).
        case home
        /// `$topdir/.Trash/$uid`, in the volume's shared, sticky, root-owned `.Trash`.
        case shared
        /// `$topdir/.Trash-$uid`.
        case own
    }

    /// The folder, absolute.
    public var path: String
    /// The user it belongs to (its owner).
    public var uid: UInt32
    public var place: Place
}

/// What discovery found, and every candidate it ignored with why.
public struct TrashDiscovery: Sendable, Hashable, Codable {
    public var found: [DiscoveredTrash]
    /// `PATH: problem; ignored`, one for each place that held something discovery would not use.
    public var ignored: [String]
}

package enum TrashDiscoverer {
    /// The trash folders of `euid` (every user's volume trashes when it is 0) on the volumes mounted at
    /// `mountPoints`, and the home trash `homeTrash` when given.
    package static func discover(euid: UInt32, homeTrash: String?, mountPoints: [String]) -> TrashDiscovery {
        var result = TrashDiscovery(found: [], ignored: [])
        var seen = Set<String>()
        // One trash folder per volume and user: two mount points of one volume's top folder (a bind mount), or a
        // top folder with both `.Trash/UID` and `.Trash-UID`, give one root (the first, in the specification's
        // order), so one state folder and one journal per (volume, uid) however many names a user makes.
        var volumes: [VolumeUser: String] = [:]
        func add(_ trash: DiscoveredTrash, top: FileStatus?) {
            guard seen.insert(trash.path).inserted else { return }
            if let top {
                let key = VolumeUser(device: top.device, top: top.inode, uid: trash.uid)
                if let first = volumes[key] {
                    result.ignored.append("\(trash.path): uid \(trash.uid) already has the trash folder \(first) on this volume (one per volume and user); ignored")
                    return
                }
                volumes[key] = trash.path
            }
            result.found.append(trash)
        }
        if let homeTrash, let slash = homeTrash.lastIndex(of: "/"), slash != homeTrash.startIndex,
           let parent = try? DirectoryHandle.open(root: String(homeTrash[..<slash])),
           let name = FileName(String(homeTrash[homeTrash.index(after: slash)...])),
           let status = try? parent.statusIfPresent(of: name) {
            if let problem = ownProblem(status, uid: euid) {
                result.ignored.append("\(homeTrash): \(problem); ignored")
            } else {
                add(DiscoveredTrash(path: homeTrash, uid: euid, place: .home), top: nil)
            }
        }
        for point in mountPoints {
            guard let top = try? DirectoryHandle.open(root: point), let topStatus = try? top.status() else { continue }
            let base = point == "/" ? "" : point
            // $topdir/.Trash/$uid: only inside a shared .Trash that root owns and made sticky.
            if let shared = try? top.statusIfPresent(of: FileName(unchecked: Array(".Trash".utf8))) {
                if let problem = sharedProblem(shared) {
                    result.ignored.append("\(base)/.Trash: \(problem); ignored (the specification asks for a sticky folder owned by root)")
                } else if let folder = try? top.openDirectory(FileName(unchecked: Array(".Trash".utf8))) {
                    let names = euid == 0 ? ((try? folder.entries().map(\.name)) ?? []) : [FileName(unchecked: Array("\(euid)".utf8))]
                    for name in names.sorted(by: { $0.bytes.lexicographicallyPrecedes($1.bytes) }) {
                        guard let uid = canonicalUID(name.bytes[...]),
                              let status = try? folder.statusIfPresent(of: name) else { continue }
                        let path = "\(base)/.Trash/\(name.escaped)"
                        if let problem = ownProblem(status, uid: uid) { result.ignored.append("\(path): \(problem); ignored") }
                        else { add(DiscoveredTrash(path: path, uid: uid, place: .shared), top: topStatus) }
                    }
                }
            }
            // $topdir/.Trash-$uid.
            let prefix = Array(".Trash-".utf8)
            let names = euid == 0
                ? ((try? top.entries().map(\.name).filter { $0.bytes.starts(with: prefix) }) ?? [])
                : [FileName(unchecked: prefix + Array("\(euid)".utf8))]
            for name in names.sorted(by: { $0.bytes.lexicographicallyPrecedes($1.bytes) }) {
                guard let uid = canonicalUID(name.bytes.dropFirst(prefix.count)),
                      let status = try? top.statusIfPresent(of: name) else { continue }
                let path = "\(base)/\(name.escaped)"
                if let problem = ownProblem(status, uid: uid) { result.ignored.append("\(path): \(problem); ignored") }
                else { add(DiscoveredTrash(path: path, uid: uid, place: .own), top: topStatus) }
            }
        }
        return result
    }

    /// A volume's top folder (its device and inode: two mount points of it are one) and a user.
    private struct VolumeUser: Hashable {
        var device: UInt64
        var top: UInt64
        var uid: UInt32
    }

    /// The uid a `.Trash-UID` or `.Trash/UID` name spells, only in its one canonical decimal spelling: `0` or
    /// digits without a leading zero, no sign, no space, within UInt32. `UInt32(String)` also reads `012345`,
    /// `+12345`..., so one uid had any number of names (and a state folder each); those name no trash folder.
    package static func canonicalUID(_ digits: ArraySlice<UInt8>) -> UInt32? {
        guard !digits.isEmpty, digits.count <= 10, digits.allSatisfy({ (0x30...0x39).contains($0) }),
              digits.count == 1 || digits.first != 0x30 else { return nil }
        return UInt32(String(decoding: digits, as: UTF8.self))
    }

    /// Why a shared `$topdir/.Trash` may not be used; nil when it is a real folder, owned by root, sticky.
    static func sharedProblem(_ s: FileStatus) -> String? {
        if s.type == .symlink { return "is a symlink" }
        if s.type != .directory { return "is not a folder (\(s.type.rawValue))" }
        if s.userID != 0 { return "is owned by uid \(s.userID), not root" }
        if s.permissions & 0o1000 == 0 { return "is not sticky (mode \(String(s.permissions & 0o7777, radix: 8)))" }
        return nil
    }

    /// Why a user's own trash folder may not be used; nil when it is a real folder owned by `uid` that no one
    /// else can write.
    static func ownProblem(_ s: FileStatus, uid: UInt32) -> String? {
        if s.type == .symlink { return "is a symlink" }
        if s.type != .directory { return "is not a folder (\(s.type.rawValue))" }
        if s.userID != uid { return "is owned by uid \(s.userID), not uid \(uid) whose trash it would be" }
        if s.permissions & 0o022 != 0 { return "is writable by group or others (mode \(String(s.permissions & 0o7777, radix: 8)))" }
        return nil
    }
}
