// Configuration folders in systemd's precedence (tmpfiles.d(5), "Configuration Directories and Precedence"):
// policyctl.d drop-ins and the tmpfiles.d files plan reads beside them. A name in a folder earlier in the list
// overrides the same name in the later ones; a symlink to /dev/null masks the name everywhere; what is left is
// used in the lexical order of the names, whatever folder each came from.
// Run as root, a file in a folder others can write is an order, so every folder is opened under the trust rule
// (TrustedFile.openDirectory: it and every folder above it); each file is read under it again by its reader.
internal import CPosix

package struct ConfigFolders: Sendable {
    /// The folders, the highest precedence first (`/etc/...` before `/run/...` before `/usr/lib/...`).
    package var folders: [String]
    /// The ending a name must have to count (`.yaml`, `.conf`); other names are ignored, as tmpfiles does.
    package var suffix: String
    /// What a refusal calls a folder ("policy drop-in folder").
    package var what: String

    package init(folders: [String], suffix: String, what: String) {
        self.folders = folders; self.suffix = suffix; self.what = what
    }

    /// One file of the set: its name and where it is.
    package struct File: Sendable, Equatable {
        package var name: String
        package var path: String
        package var folder: String
    }

    /// The effective set: the files in lexical order of their names, and the names masked (each with the
    /// `/dev/null` symlink that masks it).
    package struct Listing: Sendable, Equatable {
        package var files: [File]
        package var masked: [File]
    }

    /// The effective set. A folder that does not exist is skipped; one that fails the trust rule, or cannot be
    /// read, is an error naming it (nothing of the set is used then: a partial set could drop an exclusion).
    package func list(rule: TrustRule = .current) throws(TrustedFile.ReadError) -> Listing {
        var chosen: [String: File] = [:]
        var masks: [String: File] = [:]
        for folder in folders {
            for entry in try entries(of: folder, rule: rule) where chosen[entry.file.name] == nil && masks[entry.file.name] == nil {
                if entry.masks { masks[entry.file.name] = entry.file } else { chosen[entry.file.name] = entry.file }
            }
        }
        // Byte order of the names, as systemd's strcmp: `10-a.yaml` before `9-b.yaml`, `A` before `a`.
        func sorted(_ files: Dictionary<String, File>.Values) -> [File] {
            files.sorted { Array($0.name.utf8).lexicographicallyPrecedes(Array($1.name.utf8)) }
        }
        return Listing(files: sorted(chosen.values), masked: sorted(masks.values))
    }

    /// The file of the set named `name` (with its suffix), or nil when no folder has it or it is masked.
    package func find(_ name: String, rule: TrustRule = .current) throws(TrustedFile.ReadError) -> File? {
        try list(rule: rule).files.first { $0.name == name }
    }

    private struct Entry { var file: File; var masks: Bool }

    /// The folder's names with the suffix, each a regular file or a symlink (a directory, FIFO or device is
    /// ignored, as systemd does); a symlink whose target is `/dev/null` masks.
    private func entries(of folder: String, rule: TrustRule) throws(TrustedFile.ReadError) -> [Entry] {
        let handle: DirectoryHandle
        do {
            handle = try TrustedFile.openDirectory(folder, create: false, what: what, rule: rule)
        } catch {
            if case .io(let e) = error, e.errno == .noSuchFile { return [] }
            throw error
        }
        let listed: [DirectoryEntry]
        do { listed = try handle.entries(limit: 100_000) } catch {
            throw .io(FileSystemError(error.operation, path: RelativePath(unchecked: Array(folder.utf8)), errno: error.errno))
        }
        var result: [Entry] = []
        for entry in listed {
            // A name that is no UTF-8 cannot be named faithfully in a message or a merged policy: not ours.
            guard let name = String(validating: entry.name.bytes, as: UTF8.self), name.hasSuffix(suffix),
                  name.count > suffix.count, !name.hasPrefix("."),
                  !name.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) else { continue }
            var type = entry.type
            if type == nil { type = try? handle.status(of: entry.name).type }
            let path = (folder.hasSuffix("/") ? folder : folder + "/") + name
            let file = File(name: name, path: path, folder: folder)
            switch type {
            case .regular: result.append(Entry(file: file, masks: false))
            case .symlink: result.append(Entry(file: file, masks: Self.readLink(handle.descriptor, name) == "/dev/null"))
            default: continue
            }
        }
        return result
    }

    private static func readLink(_ fd: Int32, _ name: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(_PATH_MAX) + 1)
        let n = name.withCString { system_readlinkat(fd, $0, &buffer, buffer.count - 1) }
        guard n > 0 else { return nil }
        return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
