// What `policyctl plan --out FILE` notes in the user's own state: this plan (by the SHA-256 of its bytes) was
// made by this user with this policy for this root. A plan file carries no authority of its own (anyone who
// could write it could have made it with their own policy, Docs/safety.md "Inputs"); a record lets
// `policyctl apply FILE` take the policy and root from a place only this user can write, so the usual
// `plan --out` / `apply FILE` pair keeps working without naming them again.
import Foundation
@_spi(Layers) import StoragePolicyFileSystem

/// One plan's record: the policy and the root it was made with.
package struct PlanRecord: Codable, Sendable, Equatable {
    /// The policy file, absolute, as the plan's fingerprint names it.
    package var policyPath: String
    /// The root, canonical, as the plan names it.
    package var root: String

    package init(policyPath: String, root: String) { self.policyPath = policyPath; self.root = root }

    /// The record as it is saved: compact, `/` escaped, as JSONEncoder's default output wrote it; the keys always
    /// in sorted (declaration) order, where JSONEncoder put them in either order. Read back with JSONDecoder.
    package var json: [UInt8] {
        var w = JSONWriter()
        w.string("policyPath", policyPath, escaping: .encoderEscapingSlashes)
        w.string("root", root, escaping: .encoderEscapingSlashes)
        return w.finished
    }
}

/// The folder of plan records: `$XDG_STATE_HOME/policyctl/plans`, else `/var/lib/policyctl/plans` for root
/// and `~/.local/state/policyctl/plans` for anyone else. Made 0700 on first use; read and written only under
/// the trust rule, so a record another user could have written is never believed.
package enum PlanRecords {
    package static var folder: String? {
        if let state = system_getenv("XDG_STATE_HOME").map({ String(cString: $0) }), state.hasPrefix("/") {
            return state + "/policyctl/plans"
        }
        if system_geteuid() == 0 { return "/var/lib/policyctl/plans" }
        guard let home = system_getenv("HOME").map({ String(cString: $0) }), home.hasPrefix("/") else { return nil }
        return home + "/.local/state/policyctl/plans"
    }

    package static func name(_ planBytes: [UInt8]) -> FileName? { FileName(SHA256.hex(planBytes) + ".json") }

    /// Notes that the plan with these bytes was made with `record`'s policy and root. Failing to note it only
    /// means `apply FILE` will ask for `--policy` and `--root`: the error says why, the plan is still saved.
    package static func note(_ planBytes: [UInt8], _ record: PlanRecord) throws(TrustedFile.ReadError) {
        guard let folder, let name = name(planBytes) else { return }
        let directory = try TrustedFile.openDirectory(folder, create: true, what: "folder of plan records")
        let data = record.json
        let temporary = FileName(unchecked: Array(".\(name).\(system_getpid()).tmp".utf8))
        do {
            let file = try directory.openFile(temporary, options: [.writeOnly, .create, .truncate], permissions: 0o600)
            try file.write(data)
            try file.sync()
            try directory.rename(temporary, to: name, noReplace: false)
            try directory.sync()
        } catch {
            try? directory.removeFile(temporary)
            throw .io(error)
        }
    }

    /// The record of the plan with these bytes, when this user (or root) noted one; nil when there is none
    /// (or it fails the trust rule, or does not decode: then it is no record of ours).
    /// - Throws: an I/O error other than a missing record or folder, so that a failing disk is not taken for
    ///   "no record".
    package static func lookup(_ planBytes: [UInt8]) throws(FileSystemError) -> PlanRecord? {
        try lookup(sha256: SHA256.hex(planBytes))
    }

    /// The record of the plan whose bytes have this SHA-256 (hex), as `lookup(_:)`.
    package static func lookup(sha256: String) throws(FileSystemError) -> PlanRecord? {
        guard let folder else { return nil }
        let bytes: [UInt8]
        do {
            bytes = try TrustedFile.read(folder + "/" + sha256 + ".json", limit: 64 * 1024, what: "plan record")
        } catch {
            // Missing (the record, or a folder on its way): no record. Any other I/O error is said.
            if case .io(let e) = error, !(e.errno == .noSuchFile && e.operation == .open) { throw e }
            return nil
        }
        return try? JSONDecoder().decode(PlanRecord.self, from: Data(bytes))
    }
}
