// The one trust rule for files policyctl reads from places other users may write (Docs/safety.md, "Inputs"):
// a policy, each `extends:` file, a discovered .policyctl.yaml, a saved plan, a plan record. Run as root from a
// timer, whatever such a file says is an order, so it is read only when it and every folder above it could
// have been written by no one but root and the euid. Checked on descriptors: each folder is opened from its
// parent with O_NOFOLLOW and fstat'ed, so a swap between the check and the read changes nothing that is read.
internal import CPosix

/// The rule: the file and each folder above it, up to `/`, is owned by root or the euid and not writable by
/// group or others. A folder writable by others passes only when it is sticky and owned by root or the euid
/// (`/tmp`): there no one else can rename or replace what root or the euid made, and what anyone else made
/// fails on its owner. A symlink on the way is followed only inside a folder that passed (only root or the
/// euid can have made it), at most 40 times.
package struct TrustRule: Sendable {
    /// The owner, besides root, whose files are trusted.
    package var euid: UInt32

    /// The rule for this process.
    package static var current: TrustRule { TrustRule(euid: system_geteuid()) }

    package init(euid: UInt32) { self.euid = euid }

    /// Why an entry with this owner and mode fails the rule (nil when it passes). `isFolder`: a sticky folder
    /// writable by others is allowed.
    package func problem(owner: UInt32, mode: UInt32, isFolder: Bool) -> String? {
        if owner != 0 && owner != euid {
            return "is owned by uid \(owner), not by root or uid \(euid) that runs policyctl"
        }
        let writable = mode & 0o022
        if writable == 0 { return nil }
        if isFolder && mode & 0o1000 != 0 { return nil }
        return "is writable by \(mode & 0o002 != 0 ? "others" : "its group") (mode \(TrustRule.octal(mode)))"
    }

    package static func octal(_ mode: UInt32) -> String {
        let digits = String(mode & 0o7777, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}

/// A file refused by the trust rule: which file, which entry on its way failed, why, and what to do.
package struct UntrustedFile: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file that was to be read, as given.
    package var file: String
    /// The entry that failed: the file itself, or a folder above it.
    package var entry: String
    /// What is wrong with `entry` (its owner or its mode).
    package var problem: String
    /// What `what` names in the message: "policy", "plan file"...
    package var what: String

    package init(file: String, entry: String, problem: String, what: String) {
        self.file = file; self.entry = entry; self.problem = problem; self.what = what
    }

    /// `plan.json: refused: its folder /tmp/x is writable by others (mode 0777); ...`.
    package var description: String {
        let subject = entry == file ? "it" : "its folder \(PathEscaping.escape(Array(entry.utf8)))"
        return "\(PathEscaping.escape(Array(file.utf8))): refused: \(subject) \(problem); a \(what) is read only when "
            + "it and every folder above it are owned by root or the user running policyctl and writable by no one else "
            + "(Docs/safety.md, \"Inputs\"): chown it and chmod go-w, or keep it in a folder only you can write"
    }
}

/// Reads small files under the trust rule.
package enum TrustedFile {
    /// Why a file was not read.
    package enum ReadError: Error, Sendable, CustomStringConvertible {
        /// It, or a folder on its way, could not be opened, stat'ed or read (exit 74).
        case io(FileSystemError)
        /// It is not a regular file (exit 65).
        case notRegular(path: String, type: FileType)
        /// It is larger than the cap (exit 65).
        case tooLarge(path: String, size: Int64, limit: Int)
        /// It fails the trust rule (exit 65; nothing of it was read).
        case untrusted(UntrustedFile)

        package var description: String {
            switch self {
            case .io(let e): return "\(e.path.escaped): cannot read: \(e.errno)"
            case .notRegular(let path, let type):
                return "\(PathEscaping.escape(Array(path.utf8))): not a regular file (\(type.rawValue))"
            case .tooLarge(let path, let size, let limit):
                return "\(PathEscaping.escape(Array(path.utf8))): \(size) bytes, more than the \(limit) bytes (\(ByteSize.human(Int64(limit)))) allowed"
            case .untrusted(let u): return u.description
            }
        }

        /// The errno of an I/O failure, for messages that only name that.
        package var errno: Errno? { if case .io(let e) = self { e.errno } else { nil } }
    }

    /// The bytes of the regular file at `path` (absolute, or relative to the working directory), at most
    /// `limit` of them, when it passes `rule`. A FIFO or device is refused after one fstat, never read.
    package static func read(_ path: String, limit: Int, what: String,
                             rule: TrustRule = .current) throws(ReadError) -> [UInt8] {
        let file = try openRegular(path, limit: limit, what: what, rule: rule).file
        do { return try file.readAll(limit: limit) } catch {
            if error.errno.rawValue == _EFBIG { throw .tooLarge(path: path, size: Int64(limit) + 1, limit: limit) }
            throw .io(error)
        }
    }

    /// The regular file at `path` opened for reading with `read`'s checks (trust rule, type, size at most
    /// `limit`), for a caller that reads it in pieces (``Pieces``) instead of whole.
    package static func openRegular(_ path: String, limit: Int, what: String,
                                    rule: TrustRule = .current) throws(ReadError) -> (file: FileDescriptor, size: Int64) {
        let file = try open(path, what: what, rule: rule)
        let status: FileStatus
        do { status = try file.status() } catch { throw .io(error) }
        guard status.type == .regular else { throw .notRegular(path: path, type: status.type) }
        guard status.size <= Int64(limit) else { throw .tooLarge(path: path, size: status.size, limit: limit) }
        if let problem = rule.problem(owner: status.userID, mode: status.permissions, isFolder: false) {
            throw .untrusted(UntrustedFile(file: path, entry: path, problem: problem, what: what))
        }
        // Back to blocking reads: a regular file never blocks, and O_NONBLOCK must not turn into EAGAIN.
        let flags = system_fcntl(file.rawValue, _F_GETFL)
        if flags >= 0 { _ = system_fcntl(file.rawValue, _F_SETFL, flags & ~_O_NONBLOCK) }
        return (file, status.size)
    }

    /// A file opened by ``openRegular`` read piece by piece: the same errors as `read` (EFBIG past the limit as
    /// `tooLarge`), never more than one piece in memory.
    package struct Pieces {
        private let file: FileDescriptor
        private let path: String
        private let limit: Int
        private var total = 0
        private var piece: [UInt8]

        package init(_ file: FileDescriptor, path: String, limit: Int, pieceSize: Int = 1 << 20) {
            self.file = file; self.path = path; self.limit = limit
            piece = [UInt8](repeating: 0, count: pieceSize)
        }

        /// The next piece of the file, or nil at its end.
        package mutating func next() throws(ReadError) -> ArraySlice<UInt8>? {
            let fd = file.rawValue
            let r = systemCall(.read) { piece.withUnsafeMutableBytes { system_read(fd, $0.baseAddress, $0.count) } }
            switch r {
            case .success(0): return nil
            case .success(let n):
                total += n
                if total > limit { throw .tooLarge(path: path, size: Int64(limit) + 1, limit: limit) }
                return piece[0..<n]
            case .failure(let e): throw .io(FileSystemError(.read, path: file.path, errno: e))
            }
        }
    }

    /// Opens the folder `path` (not O_PATH: it can be written in and synced) when it and every folder above it
    /// pass `rule`; with `create`, missing folders are made 0700 on the way (and checked like the others).
    package static func openDirectory(_ path: String, create: Bool, what: String,
                                      rule: TrustRule = .current) throws(ReadError) -> DirectoryHandle {
        let fd = try resolve(path, what: what, rule: rule, final: .directory(create: create))
        return DirectoryHandle(descriptor: fd, path: RelativePath(unchecked: Array(path.utf8)))
    }

    /// Opens the final component of `path` (O_NOFOLLOW, non-blocking) after checking every folder above it.
    package static func open(_ path: String, what: String, rule: TrustRule) throws(ReadError) -> FileDescriptor {
        let fd = try resolve(path, what: what, rule: rule, final: .file)
        return FileDescriptor(rawValue: fd, path: RelativePath(unchecked: Array(path.utf8)))
    }

    package enum Final { case file, directory(create: Bool) }

    /// The descriptor of `path`'s last component, every folder on the way checked (and, for a folder, the
    /// last one too). The caller judges a file on its own descriptor.
    private static func resolve(_ path: String, what: String, rule: TrustRule, final: Final) throws(ReadError) -> Int32 {
        let display = RelativePath(unchecked: Array(path.utf8))
        // Lexically absolute (`.` and empty parts would be skipped below anyway); `..` is resolved on descriptors.
        var pending = components(of: PathNormalization.absolute(path))
        var hops = 0
        // The folders from `/` down to the current one, each already checked: `..` pops one.
        var stack: [(fd: Int32, path: String)] = []
        defer { for entry in stack { _ = system_close(entry.fd) } }

        func fail(_ errno: Errno) -> ReadError { .io(FileSystemError(.open, path: display, errno: errno)) }
        func descriptor(_ opened: Result<Int32, Errno>) throws(ReadError) -> Int32 {
            switch opened {
            case .success(let fd): return fd
            case .failure(let e): throw fail(e)
            }
        }
        func check(_ fd: Int32, _ entryPath: String, folder: Bool) throws(ReadError) -> cposix_stat {
            var s = cposix_stat()
            if case .failure(let e) = systemCall(.stat, { cposix_stat_at(fd, nil, &s) }) { throw fail(e) }
            let status = FileStatus(s)
            if folder, let problem = rule.problem(owner: status.userID, mode: status.permissions, isFolder: true) {
                throw .untrusted(UntrustedFile(file: path, entry: entryPath, problem: problem, what: what))
            }
            return s
        }
        func openRoot() throws(ReadError) {
            for entry in stack { _ = system_close(entry.fd) }
            stack.removeAll()
            let opened = systemCall(.open) { system_open("/", cposix_o_directory_flags() | cposix_o_path()) }
            let fd = try descriptor(opened)
            stack.append((fd, "/"))
            _ = try check(fd, "/", folder: true)
        }
        try openRoot()

        while !pending.isEmpty {
            let name = pending.removeFirst()
            if name == "." { continue }
            if name == ".." {
                if stack.count > 1 { _ = system_close(stack.removeLast().fd) }
                continue
            }
            let parent = stack[stack.count - 1]
            let entryPath = parent.path == "/" ? "/" + name : parent.path + "/" + name
            var s = cposix_stat()
            if case .failure(let e) = name.withCString({ n in systemCall(.stat) { cposix_stat_at(parent.fd, n, &s) } }) {
                // A missing folder of our own state is made private; someone racing us to it fails the checks.
                guard e == .noSuchFile, case .directory(create: true) = final else { throw fail(e) }
                let made = name.withCString { system_mkdirat(parent.fd, $0, 0o700) }
                guard made == 0 || Errno.current == .fileExists else { throw fail(.current) }
                if case .failure(let e) = name.withCString({ n in systemCall(.stat) { cposix_stat_at(parent.fd, n, &s) } }) { throw fail(e) }
            }
            let found = FileStatus(s)
            if found.type == .symlink {
                // Inside a folder that passed: only root or the euid can have put it there.
                hops += 1
                guard hops <= 40 else { throw fail(.tooManySymbolicLinks) }
                guard let target = readLink(parent.fd, name) else { throw fail(.current) }
                if target.first == "/" { try openRoot() }
                pending = components(of: target) + pending
                continue
            }
            if pending.isEmpty, case .file = final {
                // The file itself: opened without following, then judged on what was opened.
                let fd = try descriptor(name.withCString { n in
                    systemCall(.open) { system_openat(parent.fd, n, _O_RDONLY | _O_NOFOLLOW | _O_NONBLOCK | _O_NOCTTY | _O_CLOEXEC) }
                })
                let opened: cposix_stat
                do throws(ReadError) { opened = try check(fd, entryPath, folder: false) } catch { _ = system_close(fd); throw error }
                guard opened.dev == s.dev, opened.ino == s.ino else { _ = system_close(fd); throw fail(.busy) }
                return fd
            }
            guard found.type == .directory else { throw fail(.notDirectory) }
            // The last folder is opened for use (readable, syncable); the ones above it only to be passed through.
            let flags = pending.isEmpty ? cposix_o_directory_flags() : cposix_o_directory_flags() | cposix_o_path()
            let fd = try descriptor(name.withCString { n in systemCall(.open) { system_openat(parent.fd, n, flags) } })
            stack.append((fd, entryPath))
            let opened = try check(fd, entryPath, folder: true)
            // Swapped between the look and the open: what was checked is not what would be read.
            guard opened.dev == s.dev, opened.ino == s.ino else { throw fail(.busy) }
        }
        if case .directory = final, stack.count >= 1 {
            // Handed over to the caller: no longer closed here.
            let last = stack.removeLast()
            if last.path == "/" { _ = system_close(last.fd); return system_open("/", cposix_o_directory_flags()) }
            return last.fd
        }
        throw fail(.isDirectory)
    }

    package static func components(of path: String) -> [String] {
        path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
    }

    private static func readLink(_ fd: Int32, _ name: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(_PATH_MAX) + 1)
        let n = name.withCString { system_readlinkat(fd, $0, &buffer, buffer.count - 1) }
        guard n > 0 else { return nil }
        return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
