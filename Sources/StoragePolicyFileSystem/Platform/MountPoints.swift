// The mount points of this process's mount namespace, from /proc/self/mountinfo (field 5, octal escapes such as
// \040 for a space undone): where FreeDesktop trash discovery looks for `$topdir/.Trash`. In debug builds
// (POLICYCTL_FAULT_INJECTION) POLICYCTL_MOUNTINFO=FILE is read instead, so end-to-end tests can point discovery
// at fixture volumes without mounting anything; a release build never reads the variable.
#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

package enum MountPoints {
    /// Every mount point, in the table's order, each once; nil when the table cannot be read (no /proc).
    package static func current() -> [String]? {
        // /proc/self is a symlink, and a root folder is opened refusing one: the pid's own folder instead.
        var folder = "/proc/\(system_getpid())"
        var name = "mountinfo"
        #if POLICYCTL_FAULT_INJECTION
        if let raw = getenv("POLICYCTL_MOUNTINFO") {
            let path = String(cString: raw)
            if let slash = path.lastIndex(of: "/"), slash != path.startIndex {
                folder = String(path[..<slash])
                name = String(path[path.index(after: slash)...])
            }
        }
        #endif
        guard let file = FileName(name), let directory = try? DirectoryHandle.open(root: folder),
              let bytes = try? directory.readFile(file, limit: 1 << 24) else { return nil }
        return parse(bytes)
    }

    /// The mount points of a mountinfo table (`ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS ...`).
    package static func parse(_ bytes: [UInt8]) -> [String] {
        var seen = Set<[UInt8]>()
        var points: [String] = []
        for line in bytes.split(separator: 0x0A) {
            let fields = line.split(separator: 0x20, omittingEmptySubsequences: true)
            guard fields.count > 4 else { continue }
            let point = unescape(fields[4])
            guard point.first == 0x2F, seen.insert(point).inserted else { continue }
            points.append(String(decoding: point, as: UTF8.self))
        }
        return points
    }

    /// `\ooo` (three octal digits) back to its byte, as the kernel escapes space, tab, newline and backslash.
    static func unescape(_ field: ArraySlice<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        var i = field.startIndex
        while i < field.endIndex {
            if field[i] == 0x5C, field.distance(from: i, to: field.endIndex) >= 4 {
                let digits = field[(i + 1)...(i + 3)]
                if digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x37 }) {
                    out.append(digits.reduce(0) { $0 &* 8 &+ ($1 - 0x30) })
                    i += 4
                    continue
                }
            }
            out.append(field[i])
            i += 1
        }
        return out
    }
}
