// Backup exclusion on Apple systems. Reading: the raw `com.apple.metadata:com_apple_backup_excludeItem` bytes,
// accepted when they hold the string `com.apple.backupd` anywhere (a binary or XML plist, or the bare string, as
// other readers accept), so an Apple tree is audited the same from Linux. Writing on Darwin: the documented calls,
// `CSBackupSetItemExcluded` (CoreServices, what `tmutil addexclusion` calls) on macOS and
// `URLResourceValues.isExcludedFromBackup` on iOS, then a check on the folder's descriptor that the entry this
// run holds carries the marker (the raw bytes are written through the descriptor when it does not). Elsewhere
// the raw bytes are written as before. The Darwin half has not been compiled on the Linux machine that builds
// this package (Docs/library.md, "Platform strategies").
#if os(macOS)
import CoreServices
import Foundation
#elseif canImport(Darwin)
import Foundation
#endif
internal import CPosix

package enum ExclusionMarker {
    /// `com.apple.backupd`, the string every Apple exclusion value holds.
    static let appleMarkerString: [UInt8] = Array("com.apple.backupd".utf8)

    /// True when `value`, read from the Apple attribute, excludes the item.
    package static func isAppleExclusion(_ value: [UInt8]?) -> Bool {
        guard let value, value.count >= appleMarkerString.count else { return false }
        let first = appleMarkerString[0]
        var i = value.startIndex
        while i <= value.count - appleMarkerString.count {
            if value[i] == first, value[i..<(i + appleMarkerString.count)].elementsEqual(appleMarkerString) { return true }
            i += 1
        }
        return false
    }

    /// True when `current`, the value of the marker attribute `marker.name`, already says what `marker` asks:
    /// for the Apple attribute any exclusion value; for the others exactly `marker.value`.
    package static func satisfies(_ marker: (name: String, value: [UInt8]), current: [UInt8]?) -> Bool {
        marker.name == Markers.appleBackupAttribute ? isAppleExclusion(current) : current == marker.value
    }

    /// True when two values of `attribute` mean the same: two Apple exclusions are one, whatever their bytes
    /// (the documented call writes its own); anything else only when equal.
    package static func same(_ attribute: String, _ a: [UInt8]?, _ b: [UInt8]?) -> Bool {
        if a == b { return true }
        return attribute == Markers.appleBackupAttribute && isAppleExclusion(a) && isAppleExclusion(b)
    }

    /// Sets (`exclude`) or clears the exclusion of `name` (the folder itself when nil) in `directory` through the
    /// platform's documented call; false where there is none (Linux), and the caller writes the raw bytes.
    static func setThroughSystem(_ exclude: Bool, of name: FileName?, in directory: DirectoryHandle) throws(FileSystemError) -> Bool {
        #if canImport(Darwin)
        let target = name.map(directory.path.appending) ?? directory.path
        var buffer = [CChar](repeating: 0, count: 4096)
        guard cposix_fd_path(directory.descriptor, &buffer, Int32(buffer.count)) >= 0 else {
            throw FileSystemError(.other("F_GETPATH"), path: target, errno: Errno.current)
        }
        let folder = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let path = name.map { folder + "/" + String(decoding: $0.bytes, as: UTF8.self) } ?? folder
        // The documented calls take a path: it must lead to the entry the descriptor holds, now.
        let held: FileStatus
        if let name { held = try directory.status(of: name) } else { held = try directory.status() }
        var found = CInterop.Stat()
        guard path.withCString({ system_lstat($0, &found) }) == 0,
              UInt64(bitPattern: Int64(found.st_dev)) == held.device, UInt64(found.st_ino) == held.inode else {
            throw FileSystemError(.refused("its path \(path) no longer leads to the entry being marked (renamed or replaced meanwhile); run apply again"),
                                  path: target, errno: .busy)
        }
        #if os(macOS)
        let status = CSBackupSetItemExcluded(URL(fileURLWithPath: path) as CFURL, exclude, false)
        guard status == 0 else {
            throw FileSystemError(.other("CSBackupSetItemExcluded (OSStatus \(status))"), path: target, errno: .ioError)
        }
        #else
        var url = URL(fileURLWithPath: path)
        var values = URLResourceValues()
        values.isExcludedFromBackup = exclude
        do { try url.setResourceValues(values) } catch {
            throw FileSystemError(.other("isExcludedFromBackup (\(error.localizedDescription))"), path: target, errno: .ioError)
        }
        #endif
        return true
        #else
        _ = (exclude, name, directory)
        return false
        #endif
    }
}
