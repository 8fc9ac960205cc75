// Reading a saved plan and deciding whether it may still be applied: a plan whose policy file or root
// changed since it was made is stale (as Terraform refuses a stale saved plan). Reads only; never applies.

@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyModel
@_spi(Layers) import StoragePolicyPlan
@_spi(Layers) import StoragePolicyEvaluation

package enum PlanFile {
    /// The largest plan file read: 1 GiB. A plan action takes about 300 to 500 bytes of pretty JSON, so a
    /// million-entry plan fits with room to spare; anything larger is refused before a byte is read.
    package static let sizeLimit = 1 << 30

    /// Reads a whole file given as a path string (a plan, policy or script, not a tree entry), up to `limit`
    /// bytes, under the trust rule (``TrustedFile``); every refusal as a FileSystemError naming the path.
    package static func read(path: String, limit: Int = sizeLimit) throws(FileSystemError) -> [UInt8] {
        let display = RelativePath(unchecked: Array(path.utf8))
        do { return try TrustedFile.read(path, limit: limit, what: "file") } catch {
            switch error {
            case .io(let e): throw e
            case .notRegular(_, let type):
                throw FileSystemError(.open, path: display, errno: type == .directory ? .isDirectory : .invalidArgument)
            case .tooLarge: throw FileSystemError(.read, path: display, errno: Errno(rawValue: _EFBIG))
            case .untrusted(let u): throw FileSystemError(.refused(u.problem), path: display, errno: .notPermitted)
            }
        }
    }

    /// Why a plan file could not be loaded: read (the trust rule, its type and size, I/O) or decoded.
    package enum LoadError: Error {
        case read(TrustedFile.ReadError)
        case decode(any Error)
    }

    /// The plan in the file at `path` (read under the trust rule, at most `limit` bytes) and the SHA-256 of
    /// every byte of it (what this user's plan records are keyed by). Read in pieces of 1 MiB, hashed and parsed
    /// as they come (PlanJSONReader), so a large plan's bytes are never in memory whole; a plan the reader
    /// leaves to JSONDecoder is read again whole and decoded as before, to the same plan or the same error.
    package static func load(_ path: String, limit: Int = sizeLimit) throws(LoadError) -> (plan: Plan, sha256: String) {
        let opened: (file: FileDescriptor, size: Int64)
        do { opened = try TrustedFile.openRegular(path, limit: limit, what: "plan file") } catch { throw .read(error) }
        var pieces = TrustedFile.Pieces(opened.file, path: path, limit: limit)
        var hasher = SHA256.Hasher()
        var readError: TrustedFile.ReadError? = nil
        do {
            // The reader reads to the end of the file (only white space may follow the plan): every byte is hashed.
            let plan = try PlanJSONReader.read(sizeHint: Int(opened.size)) {
                do {
                    guard let piece = try pieces.next() else { return nil }
                    piece.withUnsafeBytes { hasher.update($0) }
                    return piece
                } catch {
                    readError = error as? TrustedFile.ReadError
                    throw error
                }
            }
            return (plan, hasher.hex())
        } catch {
            if let readError { throw .read(readError) }
        }
        let bytes: [UInt8]
        do { bytes = try TrustedFile.read(path, limit: limit, what: "plan file") } catch { throw .read(error) }
        do { return (try Plan.decode(json: bytes), SHA256.hex(bytes)) } catch { throw .decode(error) }
    }

    /// Why `plan` must not be applied to the root with `rootStatus`, or nil when it is fresh. `policyBytes` is
    /// the current content of the plan's policy file (nil when it cannot be read).
    package static func staleness(of plan: Plan, rootStatus: FileStatus, policyBytes: [UInt8]?) -> StalePlan? {
        let current = policyBytes.map {
            SHA256.hex(PolicyLoader.fingerprintBytes($0, file: plan.fingerprint?.policyPath ?? "<policy>"))
        }
        return staleness(of: plan, rootStatus: rootStatus, policyName: nil, policySHA256: current)
    }

    /// The one staleness check (a saved plan file, or a plan handed to ``StorageEngine/apply(_:maxDelete:)``):
    /// the plan is stale when it has no fingerprint, was made for another directory (device and inode), or
    /// by another policy than the one now at hand, whose fingerprint is `policySHA256` (nil: it cannot be
    /// read) and, when known, whose name is `policyName`.
    package static func staleness(of plan: Plan, rootStatus: FileStatus, policyName: String?, policySHA256: String?) -> StalePlan? {
        // Ages measured against another instant say nothing of what is due now.
        if let asOf = plan.asOf { return StalePlan(.evaluatedAsOf(asOf)) }
        guard let fingerprint = plan.fingerprint else { return StalePlan(.noFingerprint) }
        if rootStatus.device != fingerprint.rootDevice || rootStatus.inode != fingerprint.rootInode {
            return StalePlan(.rootChanged(plannedRoot: plan.root))
        }
        guard let policySHA256 else { return StalePlan(.policyUnreadable(path: fingerprint.policyPath)) }
        if policySHA256 != fingerprint.policySHA256 || (policyName.map { $0 != plan.policy } ?? false) {
            return StalePlan(.policyChanged)
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
