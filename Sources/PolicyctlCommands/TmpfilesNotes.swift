// plan's notes about systemd-tmpfiles (Tmpfiles): an age line that covers the root or a rule's scope deletes by
// its own age whatever the policy keeps. Notes are not part of a plan's fingerprint or of what apply checks a
// saved plan against (PlanFile reads no notes), so they change nothing a plan is judged by.
import StoragePolicy

enum TmpfilesNotes {
    /// The largest tmpfiles.d file read; real ones are a few hundred bytes.
    static let sizeLimit = 1 << 20

    /// Adds the notes for `policy` over `root` to `plan`. Each folder and file is read under the trust rule; one
    /// that fails it is not read, and a note says so (the notes are advice: a refusal stops nothing).
    static func mark(_ plan: inout Plan, policy: Policy, root: String) {
        let folders = Tmpfiles.folders(prefix: PolicyArgument.configPrefix)
        let listing: ConfigFolders.Listing
        do { listing = try folders.list() } catch {
            plan.notes.append("tmpfiles.d not read: \(error.description)")
            return
        }
        var lines: [Tmpfiles.Line] = []
        for file in listing.files {
            do {
                lines += Tmpfiles.parse(try TrustedFile.read(file.path, limit: sizeLimit, what: "tmpfiles.d file"), file: file.path)
            } catch {
                plan.notes.append("tmpfiles.d file not read: \(error.description)")
            }
        }
        guard !lines.isEmpty else { return }
        let absolute = system_realpath(root) ?? PathNormalization.absolute(root)
        let scopes = policy.rules.map { rule in
            (rule: rule.name, path: rule.path.bytes.isEmpty ? absolute : absolute + "/" + String(decoding: rule.path.bytes, as: UTF8.self))
        }
        plan.notes += Tmpfiles.notes(lines, root: absolute, scopes: scopes)
    }
}
