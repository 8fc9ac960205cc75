// Reading a saved plan and deciding whether it may still be applied: a plan whose policy file or root
// changed since it was made is stale (as Terraform refuses a stale saved plan). Reads only; never applies.

package enum PlanFile {
    /// The largest plan file read: 1 GiB. A plan action takes about 300 to 500 bytes of pretty JSON, so a
    /// million-entry plan fits with room to spare; anything larger is refused before a byte is read.
    package static let sizeLimit = 1 << 30

    /// Why a plan (or policy) file was not read.
    package enum ReadError: Error, Sendable, CustomStringConvertible {
        /// It could not be opened, stat'ed or read (exit 74).
        case io(FileSystemError)
        /// It is not a regular file: a device, a FIFO, a socket or a directory (exit 65).
        case notRegular(path: String, type: FileType)
        /// It is larger than the cap (exit 65).
        case tooLarge(path: String, size: Int64, limit: Int)

        package var description: String {
            switch self {
            case .io(let e): return "\(e.path.escaped): cannot read: \(e.errno)"
            case .notRegular(let path, let type):
                return "\(PathEscaping.escape(Array(path.utf8))): not a regular file (\(type.rawValue)); only regular files are read as plans"
            case .tooLarge(let path, let size, let limit):
                return "\(PathEscaping.escape(Array(path.utf8))): \(size) bytes, more than the \(limit) bytes (\(ByteSize.human(Int64(limit)))) a plan file may have"
            }
        }
    }

    /// Reads a whole file given as a path string (a plan or policy file, not a tree entry), up to `limit` bytes.
    package static func read(path: String, limit: Int = sizeLimit) throws(FileSystemError) -> [UInt8] {
        do { return try readRegular(path: path, limit: limit) } catch {
            switch error {
            case .io(let e): throw e
            case .notRegular(let p, let type):
                throw FileSystemError(.open, path: RelativePath(unchecked: Array(p.utf8)), errno: type == .directory ? .isDirectory : .invalidArgument)
            case .tooLarge(let p, _, _):
                throw FileSystemError(.read, path: RelativePath(unchecked: Array(p.utf8)), errno: Errno(rawValue: _EFBIG))
            }
        }
    }

    /// Reads a regular file of at most `limit` bytes. A symlink given by the caller is followed (an admin may
    /// keep plans behind one), but what it leads to must be a regular file: devices (`/dev/zero`), FIFOs,
    /// sockets and directories are refused after one fstat, and so is a file larger than `limit`, whatever
    /// its content. Opened non-blocking, so a FIFO with no writer never blocks the open; at most `limit`
    /// bytes (plus one read) are ever read, even from a file that grows meanwhile.
    package static func readRegular(path: String, limit: Int = sizeLimit) throws(ReadError) -> [UInt8] {
        let display = RelativePath(unchecked: Array(path.utf8))
        let r = systemCall(.open) { system_open(path, _O_RDONLY | _O_CLOEXEC | _O_NONBLOCK | _O_NOCTTY) }
        let fd: Int32
        switch r {
        case .success(let d): fd = d
        case .failure(let e): throw .io(FileSystemError(.open, path: display, errno: e))
        }
        let file = FileDescriptor(rawValue: fd, path: display)
        let status: FileStatus
        do { status = try file.status() } catch { throw .io(error) }
        guard status.type == .regular else { throw .notRegular(path: path, type: status.type) }
        guard status.size <= Int64(limit) else { throw .tooLarge(path: path, size: status.size, limit: limit) }
        // Back to blocking reads: a regular file never blocks, and O_NONBLOCK must not turn into EAGAIN.
        let flags = system_fcntl(fd, _F_GETFL)
        if flags >= 0 { _ = system_fcntl(fd, _F_SETFL, flags & ~_O_NONBLOCK) }
        do { return try file.readAll(limit: limit) } catch {
            if error.errno.rawValue == _EFBIG { throw .tooLarge(path: path, size: Int64(limit) + 1, limit: limit) }
            throw .io(error)
        }
    }

    /// Why `plan` must not be applied to the root with `rootStatus`, or nil when it is fresh. `policyBytes` is
    /// the current content of the plan's policy file (nil when it cannot be read).
    package static func staleness(of plan: Plan, rootStatus: FileStatus, policyBytes: [UInt8]?) -> String? {
        let current = policyBytes.map {
            SHA256.hex(PolicyLoader.fingerprintBytes($0, file: plan.fingerprint?.policyPath ?? "<policy>"))
        }
        return staleness(of: plan, rootStatus: rootStatus, policyName: nil, policySHA256: current)
    }

    /// The one staleness check (a saved plan file, or a plan handed to ``StorageEngine/apply(_:maxDelete:)``):
    /// the plan is stale when it has no fingerprint, was made for another directory (device and inode), or
    /// by another policy than the one now at hand, whose fingerprint is `policySHA256` (nil: it cannot be
    /// read) and, when known, whose name is `policyName`.
    static func staleness(of plan: Plan, rootStatus: FileStatus, policyName: String?, policySHA256: String?) -> String? {
        guard let fingerprint = plan.fingerprint else {
            return "plan has no fingerprint; make it with 'policyctl plan --out FILE' (or StorageEngine.plan())"
        }
        if rootStatus.device != fingerprint.rootDevice || rootStatus.inode != fingerprint.rootInode {
            return "plan is stale: root changed (it was made for another directory at \(plan.root))"
        }
        guard let policySHA256 else {
            return "plan is stale: policy file \(fingerprint.policyPath ?? "(unknown)") cannot be read"
        }
        if policySHA256 != fingerprint.policySHA256 || (policyName.map { $0 != plan.policy } ?? false) {
            return "plan is stale: policy changed since the plan was made; plan again"
        }
        return nil
    }

    /// The first action of `plan` that the policy in `policyBytes` (the bytes the fingerprint was checked
    /// against, not a second read) could not have produced; nil when the plan is the policy's.
    /// Throws the policy's load error when those bytes are no valid policy.
    package static func validate(_ plan: Plan, policyBytes: [UInt8], policyPath: String) throws(PolicyLoadError) -> InvalidPlanAction? {
        let policy = try PolicyLoader.load(bytes: policyBytes, file: policyPath).policy
        return PlanValidation(policy: policy).firstInvalid(in: plan)
    }
}
