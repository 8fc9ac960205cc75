// An open directory, used as the anchor for every *at call: entries are reached by name relative to it,
// so a directory swapped for a symlink mid-run cannot redirect an operation. Never follows a symlink.
internal import CPosix

/// One entry as the directory listing reports it, before any stat.
package struct DirectoryEntry: Sendable, Hashable {
    package var name: FileName
    /// From d_type; nil when the file system did not say (DT_UNKNOWN): stat to find out.
    package var type: FileType?
    package var inode: UInt64
}

package final class DirectoryHandle: Sendable {
    /// The descriptor; owned by this handle and closed when it goes away.
    package let descriptor: Int32
    /// Where this directory is, relative to the root it was opened under; used in error messages.
    package let path: RelativePath

    package init(descriptor: Int32, path: RelativePath) {
        self.descriptor = descriptor
        self.path = path
    }

    deinit { _ = system_close(descriptor) }

    /// Opens a root directory given as a path string (absolute or relative to the working directory): its
    /// folders chased from "/" on descriptors, a symlink on the way followed only by the rule of `PathChase`
    /// (anything else refused, naming the link, its owner and the fix); its last component must not be a symlink.
    package static func open(root: String) throws(FileSystemError) -> DirectoryHandle {
        try PathChase.directory(root).handle
    }

    /// Opens a directory of the kernel's own (`/proc`, `/proc/PID/fd`) by path, as the kernel resolves it: no
    /// user can plant anything on such a path. Its last component must not be a symlink.
    package static func open(kernelPath root: String) throws(FileSystemError) -> DirectoryHandle {
        let fd = systemCall(.open) { system_open(root, cposix_o_directory_flags()) }
        switch fd {
        case .success(let fd): return DirectoryHandle(descriptor: Int32(fd), path: .root)
        case .failure(let e): throw FileSystemError(.open, path: .root, errno: e)
        }
    }

    /// Opens the directory `name` inside this one, refusing a symlink (ELOOP/ENOTDIR) and a mount point
    /// (EXDEV, bind mounts included): openat2 with RESOLVE_NO_XDEV, or openat and a mount-id check where the
    /// kernel lacks openat2.
    package func openDirectory(_ name: FileName) throws(FileSystemError) -> DirectoryHandle {
        let target = path.appending(name)
        let flags = cposix_o_directory_flags()
        var r = name.withCString { n in systemCall(.open) { cposix_openat_same_mount(descriptor, n, flags) } }
        var checkMount = false
        if case .failure(let e) = r, e.rawValue == _ENOSYS {
            r = name.withCString { n in systemCall(.open) { system_openat(descriptor, n, flags) } }
            checkMount = true
        }
        switch r {
        case .success(let fd):
            let handle = DirectoryHandle(descriptor: fd, path: target)
            if checkMount, try !handle.status().isOnSameMount(as: status()) {
                throw FileSystemError(.openat, path: target, errno: .crossDevice)
            }
            return handle
        case .failure(let e): throw FileSystemError(.openat, path: target, errno: e)
        }
    }

    /// Opens a nested directory one component at a time, never following a symlink on the way.
    package func openDirectory(at relative: RelativePath) throws(FileSystemError) -> DirectoryHandle {
        var current = self
        for component in relative.components {
            current = try current.openDirectory(component)
        }
        return current
    }

    /// Status of this directory itself, with its mount id (statx of the descriptor).
    package func status() throws(FileSystemError) -> FileStatus {
        var s = cposix_stat()
        if case .failure(let e) = systemCall(.stat, { cposix_stat_at(descriptor, nil, &s) }) {
            throw FileSystemError(.fstat, path: path, errno: e)
        }
        return FileStatus(s)
    }

    /// Status of `name` inside this directory, without following a symlink, with its mount id (one statx).
    package func status(of name: FileName) throws(FileSystemError) -> FileStatus {
        var s = cposix_stat()
        let r = name.withCString { n in systemCall(.stat) { cposix_stat_at(descriptor, n, &s) } }
        if case .failure(let e) = r { throw FileSystemError(.fstatat, path: path.appending(name), errno: e) }
        return FileStatus(s)
    }

    /// The mount id of `name` (self when nil) from name_to_handle_at alone: the fallback `status` uses where
    /// statx has no STATX_MNT_ID; 0 when the file system cannot say. Tests compare it with statx's.
    func mountIDFromHandle(of name: FileName? = nil) -> UInt64 {
        guard let name else { return cposix_mount_id_fallback(descriptor, nil) }
        return name.withCString { cposix_mount_id_fallback(descriptor, $0) }
    }

    /// Status of `name`, or nil when it does not exist.
    package func statusIfPresent(of name: FileName) throws(FileSystemError) -> FileStatus? {
        do { return try status(of: name) } catch where error.errno == .noSuchFile { return nil }
    }

    /// Status of the entry `path` names in this folder (its last component, the folder's path or not), or nil
    /// when it does not exist: `statusIfPresent(of:)` without making the name (an unlink worker's check).
    package func statusIfPresent(ofLastComponentOf path: RelativePath) throws(FileSystemError) -> FileStatus? {
        var s = cposix_stat()
        let r = path.withLastComponentCString { n in systemCall(.stat) { cposix_stat_at(descriptor, n, &s) } }
        switch r {
        case .success: return FileStatus(s)
        case .failure(let e) where e == .noSuchFile: return nil
        case .failure(let e): throw FileSystemError(.fstatat, path: self.path.appending(path.lastComponent!), errno: e)
        }
    }

    /// Lists the entries (without "." and ".."), in the order the file system returns them; at most `limit`.
    package func entries(limit: Int = .max) throws(FileSystemError) -> [DirectoryEntry] {
        let dup = systemCall(.open) { system_dup(descriptor) }
        guard case .success(let fd) = dup else {
            if case .failure(let e) = dup { throw FileSystemError(.dup, path: path, errno: e) }
            return []
        }
        guard let dir = cposix_fdopendir(Int32(fd)) else {
            let e = Errno.current
            _ = system_close(Int32(fd))
            throw FileSystemError(.fdopendir, path: path, errno: e)
        }
        defer { _ = cposix_closedir(dir) }
        var result: [DirectoryEntry] = []
        var raw = cposix_dirent()
        while result.count < limit {
            if let injected = FaultInjection.check(.readdir) {
                throw FileSystemError(.readdir, path: path, errno: injected)
            }
            let r = cposix_readdir(dir, &raw)
            if r == 0 { break }
            if r < 0 {
                let e = Errno.current
                if e == .interrupted { continue }
                throw FileSystemError(.readdir, path: path, errno: e)
            }
            let length = system_strlen(raw.name)
            let bytes = UnsafeRawBufferPointer(start: raw.name, count: length)
            result.append(DirectoryEntry(name: FileName(unchecked: Array(bytes)),
                                         type: FileType(directoryEntryType: raw.type), inode: raw.ino))
        }
        return result
    }

    /// Removes the file (or symlink, fifo, ...) `name`: unlinkat never follows a symlink.
    package func removeFile(_ name: FileName) throws(FileSystemError) {
        let r = name.withCString { n in systemCall(.unlink) { system_unlinkat(descriptor, n, 0) } }
        if case .failure(let e) = r { throw FileSystemError(.unlinkat, path: path.appending(name), errno: e) }
    }

    /// Removes the file `path` names in this folder (its last component): `removeFile(_:)` without making the
    /// name (an unlink worker's delete).
    package func removeFile(lastComponentOf path: RelativePath) throws(FileSystemError) {
        let r = path.withLastComponentCString { n in systemCall(.unlink) { system_unlinkat(descriptor, n, 0) } }
        if case .failure(let e) = r { throw FileSystemError(.unlinkat, path: self.path.appending(path.lastComponent!), errno: e) }
    }

    /// Removes the empty directory `name`.
    package func removeDirectory(_ name: FileName) throws(FileSystemError) {
        let r = name.withCString { n in systemCall(.unlink) { system_unlinkat(descriptor, n, _AT_REMOVEDIR) } }
        if case .failure(let e) = r { throw FileSystemError(.unlinkat, path: path.appending(name), errno: e) }
    }

    /// Renames `name` to `newName` in `directory` (self when nil). With `noReplace` an existing target
    /// fails with EEXIST instead of being overwritten (RENAME_NOREPLACE).
    package func rename(_ name: FileName, to newName: FileName, in directory: DirectoryHandle? = nil,
                       noReplace: Bool = true) throws(FileSystemError) {
        let destination = directory ?? self
        let r = name.withCString { from in
            newName.withCString { to in
                systemCall(.rename) { cposix_renameat2(descriptor, from, destination.descriptor, to, noReplace ? 1 : 0) }
            }
        }
        if case .failure(let e) = r { throw FileSystemError(.renameat2, path: path.appending(name), errno: e) }
    }

    /// Creates the directory `name`.
    package func makeDirectory(_ name: FileName, permissions: UInt32 = 0o755) throws(FileSystemError) {
        let r = name.withCString { n in systemCall(.mkdir) { system_mkdirat(descriptor, n, CInterop.Mode(permissions)) } }
        if case .failure(let e) = r { throw FileSystemError(.mkdirat, path: path.appending(name), errno: e) }
    }

    /// Sets this directory's own mode on its descriptor (fchmod): what is changed is what was opened and
    /// checked, whatever the umask did to it at mkdir.
    package func setPermissions(_ permissions: UInt32) throws(FileSystemError) {
        if case .failure(let e) = systemCall(.mkdir, { system_fchmod(descriptor, CInterop.Mode(permissions)) }) {
            throw FileSystemError(.fchmod, path: path, errno: e)
        }
    }

    /// Creates the symlink `name` pointing at `target` (symlinkat): fails with EEXIST when anything is there.
    package func makeSymlink(_ name: FileName, to target: [UInt8]) throws(FileSystemError) {
        let text = target.map { CChar(bitPattern: $0) } + [0]
        let r = name.withCString { n in systemCall(.mkdir) { system_symlinkat(text, descriptor, n) } }
        if case .failure(let e) = r { throw FileSystemError(.symlinkat, path: path.appending(name), errno: e) }
    }

    /// What the symlink `name` points to, byte for byte (readlinkat; at most 4095 bytes).
    package func linkTarget(of name: FileName) throws(FileSystemError) -> [UInt8] {
        var buffer = [CChar](repeating: 0, count: 4097)
        let r = name.withCString { n in systemCall(.stat) { () -> Int32 in
            let got = system_readlinkat(descriptor, n, &buffer, buffer.count - 1)
            return got < 0 ? -1 : Int32(got)
        } }
        switch r {
        case .failure(let e): throw FileSystemError(.readlinkat, path: path.appending(name), errno: e)
        case .success(let n): return buffer[0..<Int(n)].map { UInt8(bitPattern: $0) }
        }
    }

    /// Sets this directory's own owner and group on its descriptor (fchown); nil leaves that one as it is.
    package func setOwner(_ owner: UInt32?, group: UInt32?) throws(FileSystemError) {
        if case .failure(let e) = systemCall(.mkdir, { system_fchown(descriptor, owner ?? UInt32.max, group ?? UInt32.max) }) {
            throw FileSystemError(.fchown, path: path, errno: e)
        }
    }

    /// Opens a file inside this directory; O_NOFOLLOW and O_CLOEXEC are always added.
    package func openFile(_ name: FileName, options: FileDescriptor.Options,
                         permissions: UInt32 = 0o644) throws(FileSystemError) -> FileDescriptor {
        let flags = options.rawValue | _O_NOFOLLOW | _O_CLOEXEC
        let r = name.withCString { n in systemCall(.open) { system_openat(descriptor, n, flags, CInterop.Mode(permissions)) } }
        switch r {
        case .success(let fd): return FileDescriptor(rawValue: fd, path: path.appending(name))
        case .failure(let e): throw FileSystemError(.openat, path: path.appending(name), errno: e)
        }
    }

    /// Reads a small file without following a symlink and without updating its atime where permitted.
    /// Fails with EFBIG past `limit` bytes, so a hostile file cannot exhaust memory.
    package func readFile(_ name: FileName, limit: Int = 1 << 20) throws(FileSystemError) -> [UInt8] {
        let file: FileDescriptor
        do {
            file = try openFile(name, options: [.readOnly, .noAccessTime, .nonBlocking])
        } catch where error.errno == .notPermitted {
            // O_NOATIME is refused on files we do not own: read them the ordinary way.
            file = try openFile(name, options: [.readOnly, .nonBlocking])
        }
        return try file.readAll(limit: limit)
    }

    /// Flushes this directory's entries to stable storage (after renames into or out of it).
    package func sync() throws(FileSystemError) {
        if case .failure(let e) = systemCall(.fsync, { system_fsync(descriptor) }) {
            throw FileSystemError(.fsync, path: path, errno: e)
        }
    }

    /// The value of extended attribute `attribute` on `name` (self when nil), or nil when it is not set.
    package func extendedAttribute(_ attribute: String, of name: FileName? = nil) throws(FileSystemError) -> [UInt8]? {
        let target = name.map(path.appending) ?? path
        var size = 256
        while true {
            var buffer = [UInt8](repeating: 0, count: size)
            let r = withEntryName(name) { n in
                systemCall(.getxattr) { buffer.withUnsafeMutableBytes { cposix_getxattrat(descriptor, n, attribute, $0.baseAddress, size) } }
            }
            switch r {
            case .success(let count): return Array(buffer[0..<Int(count)])
            case .failure(let e) where e == .noData: return nil
            case .failure(let e) where e == .range && size < 65536: size *= 16
            case .failure(let e): throw FileSystemError(.getxattr, path: target, errno: e)
            }
        }
    }

    /// Sets extended attribute `attribute` on `name` (self when nil).
    package func setExtendedAttribute(_ attribute: String, to value: [UInt8], of name: FileName? = nil) throws(FileSystemError) {
        // Darwin: an Apple backup exclusion goes through the documented call (Platform/ExclusionMarker.swift); the
        // raw bytes follow only when the entry this handle holds does not carry it then. Elsewhere: the bytes.
        if attribute == Markers.appleBackupAttribute, ExclusionMarker.isAppleExclusion(value),
           try ExclusionMarker.setThroughSystem(true, of: name, in: self),
           ExclusionMarker.isAppleExclusion(try extendedAttribute(attribute, of: name)) { return }
        let r = withEntryName(name) { n in
            systemCall(.setxattr) { value.withUnsafeBytes { cposix_setxattrat(descriptor, n, attribute, $0.baseAddress, value.count, 0) } }
        }
        if case .failure(let e) = r { throw FileSystemError(.setxattr, path: name.map(path.appending) ?? path, errno: e) }
    }

    /// Removes extended attribute `attribute` from `name` (self when nil); absent is not an error.
    package func removeExtendedAttribute(_ attribute: String, of name: FileName? = nil) throws(FileSystemError) {
        if attribute == Markers.appleBackupAttribute, try ExclusionMarker.setThroughSystem(false, of: name, in: self),
           try extendedAttribute(attribute, of: name) == nil { return }
        let r = withEntryName(name) { n in systemCall(.removexattr) { cposix_removexattrat(descriptor, n, attribute) } }
        if case .failure(let e) = r, e != .noData {
            throw FileSystemError(.removexattr, path: name.map(path.appending) ?? path, errno: e)
        }
    }

    /// Names of the extended attributes on `name` (self when nil).
    package func extendedAttributeNames(of name: FileName? = nil) throws(FileSystemError) -> [String] {
        var size = 1024
        while true {
            var buffer = [UInt8](repeating: 0, count: size)
            let r = withEntryName(name) { n in
                systemCall(.getxattr) { buffer.withUnsafeMutableBytes { cposix_listxattrat(descriptor, n, $0.baseAddress?.assumingMemoryBound(to: CChar.self), size) } }
            }
            switch r {
            case .success(let count):
                return buffer[0..<Int(count)].split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            case .failure(let e) where e == .range && size < 1 << 20: size *= 16
            case .failure(let e) where e == .notSupported: return []
            case .failure(let e): throw FileSystemError(.listxattr, path: name.map(path.appending) ?? path, errno: e)
            }
        }
    }

    /// Filesystem flags that matter to `lru` eviction: true when atime is not kept precisely.
    package var atimeIsRelaxed: Bool { AccessTimeTrust.isRelaxed(descriptor: descriptor) }
    /// How this directory's mount updates access times: 0 strictly, 1 relatime (at most once a day), 2 noatime,
    /// 3 lazily (Darwin without MNT_STRICTATIME): see AccessTimeTrust.
    package var atimeMode: Int { AccessTimeTrust.mode(descriptor: descriptor) }

    private func withEntryName<R>(_ name: FileName?, _ body: (UnsafePointer<CChar>) -> R) -> R {
        if let name { return name.withCString(body) }
        return ".".withCString(body)
    }
}
