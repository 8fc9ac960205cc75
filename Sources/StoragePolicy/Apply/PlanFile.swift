// Reading a saved plan and deciding whether it may still be applied: a plan whose policy file or root
// changed since it was made is stale (as Terraform refuses a stale saved plan). Reads only; never applies.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

public enum PlanFile {
    /// Reads a whole file given as a path string (a plan or policy file, not a tree entry), up to `limit` bytes.
    public static func read(path: String, limit: Int = 1 << 30) throws(FileSystemError) -> [UInt8] {
        let display = RelativePath(unchecked: Array(path.utf8))
        let r = systemCall(.open) { open(path, O_RDONLY | O_CLOEXEC) }
        switch r {
        case .success(let fd): return try FileDescriptor(rawValue: fd, path: display).readAll(limit: limit)
        case .failure(let e): throw FileSystemError("open", path: display, errno: e)
        }
    }

    /// Why `plan` must not be applied to the root with `rootStatus`, or nil when it is fresh. `policyBytes` is
    /// the current content of the plan's policy file (nil when it cannot be read).
    public static func staleness(of plan: Plan, rootStatus: FileStatus, policyBytes: [UInt8]?) -> String? {
        guard let fingerprint = plan.fingerprint else {
            return "plan has no fingerprint; make it with 'policyctl plan --out FILE'"
        }
        if rootStatus.device != fingerprint.rootDevice || rootStatus.inode != fingerprint.rootInode {
            return "plan is stale: root changed (it was made for another directory at \(plan.root))"
        }
        guard let policyBytes else {
            return "plan is stale: policy file \(fingerprint.policyPath ?? "(unknown)") cannot be read"
        }
        if SHA256.hex(policyBytes) != fingerprint.policySHA256 {
            return "plan is stale: policy changed since the plan was made; plan again"
        }
        return nil
    }
}
