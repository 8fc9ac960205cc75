// A snapshot of a tree for "changed nothing" checks: every entry's path bytes, type, size, mode, times and
// xattrs. Reads directories with O_NOATIME and never opens a file, so taking it changes nothing itself.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CPosix

public struct ManifestEntry: Hashable, CustomStringConvertible {
    public var path: [UInt8]
    public var type: UInt32
    public var size: Int64
    public var mode: UInt32
    public var mtimeNs: Int64
    public var atimeNs: Int64
    public var xattrs: [String: [UInt8]]

    public var description: String {
        "\(String(decoding: path, as: UTF8.self)) type=\(type) size=\(size) mode=\(String(mode, radix: 8)) mtime=\(mtimeNs) atime=\(atimeNs) xattrs=\(xattrs.keys.sorted())"
    }
}

public enum Manifest {
    public static func take(_ root: String) -> [ManifestEntry] {
        let fd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NOATIME_FLAG)
        guard fd >= 0 else { return [] }
        defer { close(fd) }
        var out: [ManifestEntry] = []
        var rootStatus = stat()
        fstat(fd, &rootStatus)
        out.append(entry([], rootStatus, xattrs: xattrs(fd, ".")))
        walk(fd, prefix: [], into: &out)
        return out.sorted { $0.path.lexicographicallyPrecedes($1.path) }
    }

    public static let O_NOATIME_FLAG = cposix_o_noatime()

    private static func entry(_ path: [UInt8], _ s: stat, xattrs: [String: [UInt8]]) -> ManifestEntry {
        ManifestEntry(path: path, type: UInt32(s.st_mode) & UInt32(S_IFMT), size: Int64(s.st_size),
                      mode: UInt32(s.st_mode) & 0o7777,
                      mtimeNs: Int64(s.st_mtim.tv_sec) * 1_000_000_000 + Int64(s.st_mtim.tv_nsec),
                      atimeNs: Int64(s.st_atim.tv_sec) * 1_000_000_000 + Int64(s.st_atim.tv_nsec),
                      xattrs: xattrs)
    }

    private static func walk(_ fd: Int32, prefix: [UInt8], into out: inout [ManifestEntry]) {
        let copy = dup(fd)
        guard let stream = fdopendir(copy) else { return }
        rewinddir(stream)
        var names: [[UInt8]] = []
        let offset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
        while let e = readdir(stream) {
            let raw = UnsafeRawPointer(e) + offset
            let bytes = Array(UnsafeRawBufferPointer(start: raw, count: strlen(raw.assumingMemoryBound(to: CChar.self))))
            if bytes == [0x2E] || bytes == [0x2E, 0x2E] { continue }
            names.append(bytes)
        }
        closedir(stream)
        for name in names {
            let path = prefix.isEmpty ? name : prefix + [0x2F] + name
            var s = stat()
            guard withCName(name, { fstatat(fd, $0, &s, AT_SYMLINK_NOFOLLOW) }) == 0 else { continue }
            let attributes = withCName(name) { n in xattrs(fd, n) }
            out.append(entry(path, s, xattrs: attributes))
            if UInt32(s.st_mode) & UInt32(S_IFMT) == UInt32(S_IFDIR) {
                let child = withCName(name) { openat(fd, $0, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NOATIME_FLAG) }
                if child >= 0 {
                    walk(child, prefix: path, into: &out)
                    close(child)
                }
            }
        }
    }

    private static func xattrs(_ dir: Int32, _ name: UnsafePointer<CChar>) -> [String: [UInt8]] {
        var list = [CChar](repeating: 0, count: 4096)
        let n = cposix_listxattrat(dir, name, &list, list.count)
        guard n > 0 else { return [:] }
        var out: [String: [UInt8]] = [:]
        let keys = list[0..<n].split(separator: 0).map { String(decoding: $0.map { UInt8(bitPattern: $0) }, as: UTF8.self) }
        for key in keys {
            var value = [UInt8](repeating: 0, count: 4096)
            let m = cposix_getxattrat(dir, name, key, &value, value.count)
            out[key] = m >= 0 ? Array(value[0..<m]) : []
        }
        return out
    }
}
