// An open regular file: read, write, fsync, close. Owned: closed when it goes away.
// Used for journals, trashinfo files and cache tags; never for walking.
internal import CPosix

package final class FileDescriptor: Sendable {
    package let rawValue: Int32
    package let path: RelativePath

    package init(rawValue: Int32, path: RelativePath) {
        self.rawValue = rawValue
        self.path = path
    }

    deinit { _ = system_close(rawValue) }

    package struct Options: OptionSet, Sendable {
        package let rawValue: Int32
        package init(rawValue: Int32) { self.rawValue = rawValue }
        /// O_RDONLY
        package static let readOnly = Options([])
        /// O_WRONLY
        package static let writeOnly = Options(rawValue: _O_WRONLY)
        /// O_RDWR
        package static let readWrite = Options(rawValue: _O_RDWR)
        /// O_CREAT
        package static let create = Options(rawValue: _O_CREAT)
        /// O_EXCL
        package static let exclusive = Options(rawValue: _O_EXCL)
        /// O_APPEND
        package static let append = Options(rawValue: _O_APPEND)
        /// O_TRUNC
        package static let truncate = Options(rawValue: _O_TRUNC)
        /// O_NONBLOCK: a FIFO opened by mistake cannot hang the run.
        package static let nonBlocking = Options(rawValue: _O_NONBLOCK)
        /// O_NOCTTY: a terminal swapped in for a file never becomes the run's controlling terminal.
        package static let noControllingTerminal = Options(rawValue: _O_NOCTTY)
        /// O_NOATIME where the platform has it: reading leaves atime as it was.
        package static let noAccessTime = Options(rawValue: cposix_o_noatime())
    }

    /// Reads to the end; fails with EFBIG past `limit` bytes.
    package func readAll(limit: Int) throws(FileSystemError) -> [UInt8] {
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let r = systemCall(.read) { chunk.withUnsafeMutableBytes { system_read(rawValue, $0.baseAddress, $0.count) } }
            switch r {
            case .success(0): return out
            case .success(let n):
                out.append(contentsOf: chunk[0..<n])
                if out.count > limit { throw FileSystemError(.read, path: path, errno: Errno(rawValue: _EFBIG)) }
            case .failure(let e): throw FileSystemError(.read, path: path, errno: e)
            }
        }
    }

    /// Reads up to `buffer.count` bytes at `offset` (pread): how many were read, 0 at the end.
    package func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(FileSystemError) -> Int {
        let r = systemCall(.read) { system_pread(rawValue, buffer.baseAddress, buffer.count, CInterop.Offset(offset)) }
        switch r {
        case .success(let n): return n
        case .failure(let e): throw FileSystemError(.pread, path: path, errno: e)
        }
    }

    /// Writes all of `bytes`, continuing after short writes.
    package func write(_ bytes: [UInt8]) throws(FileSystemError) {
        try bytes.withUnsafeBytes { raw in Result { () throws(FileSystemError) in try write(raw) } }.get()
    }

    /// Writes all of `bytes` (the journal's pending group, from its writer's buffer).
    package func write(_ bytes: UnsafeRawBufferPointer) throws(FileSystemError) {
        var offset = 0
        while offset < bytes.count {
            let r = systemCall(.write) {
                system_write(rawValue, bytes.baseAddress! + offset, bytes.count - offset)
            }
            switch r {
            case .success(let n): offset += n
            case .failure(let e): throw FileSystemError(.write, path: path, errno: e)
            }
        }
    }

    package func sync() throws(FileSystemError) {
        if case .failure(let e) = systemCall(.fsync, { system_fsync(rawValue) }) {
            throw FileSystemError(.fsync, path: path, errno: e)
        }
    }

    package func status() throws(FileSystemError) -> FileStatus {
        var s = CInterop.Stat()
        if case .failure(let e) = systemCall(.stat, { system_fstat(rawValue, &s) }) {
            throw FileSystemError(.fstat, path: path, errno: e)
        }
        return FileStatus(s)
    }

    /// Sets the file's owner and group on this descriptor (fchown); nil leaves that one as it is.
    package func setOwner(_ owner: UInt32?, group: UInt32?) throws(FileSystemError) {
        if case .failure(let e) = systemCall(.mkdir, { system_fchown(rawValue, owner ?? UInt32.max, group ?? UInt32.max) }) {
            throw FileSystemError(.fchown, path: path, errno: e)
        }
    }

    /// Sets the file's permission bits on this descriptor (fchmod).
    package func setPermissions(_ permissions: UInt32) throws(FileSystemError) {
        if case .failure(let e) = systemCall(.mkdir, { system_fchmod(rawValue, CInterop.Mode(permissions)) }) {
            throw FileSystemError(.fchmod, path: path, errno: e)
        }
    }

    /// Takes an exclusive advisory lock (flock); `wait: false` fails at once with EWOULDBLOCK when held.
    package func lockExclusively(wait: Bool) throws(FileSystemError) {
        let r = systemCall(.open) { system_flock(rawValue, _LOCK_EX | (wait ? 0 : _LOCK_NB)) }
        if case .failure(let e) = r { throw FileSystemError(.flock, path: path, errno: e) }
    }

    /// Shrinks or grows the file to `length` bytes.
    package func truncate(to length: Int64) throws(FileSystemError) {
        let r = systemCall(.write) { system_ftruncate(rawValue, CInterop.Offset(length)) }
        if case .failure(let e) = r { throw FileSystemError(.ftruncate, path: path, errno: e) }
    }
}
