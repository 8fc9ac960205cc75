// `policyctl cat-config`: the drop-ins that make the policy used without --policy, each file under a `# PATH`
// comment in the order they are merged, as `systemd-tmpfiles --cat-config` prints its set. Each file is read
// under the trust rule, as loading it would: what is printed is exactly what a run would obey.
import StoragePolicy

struct CatConfigCommand: Command {
    static let summary = CommandSummary(
        name: "cat-config",
        abstract: "Print the policy drop-ins in the order they are merged, each under a '# PATH' comment.",
        discussion: "The policy plan, explain and apply use without --policy: every *.yaml of /etc/policyctl.d, /run/policyctl.d and /usr/lib/policyctl.d, a name in an earlier folder overriding the same name in a later one, a symlink to /dev/null masking it, merged in the lexical order of the names (as tmpfiles.d). Runs that are not root (and --user) look in $XDG_CONFIG_HOME/policyctl (~/.config/policyctl) first. Masked names are listed as comments at the end. Exit 0 (also when there is no drop-in: nothing is printed), 65 when a folder or file fails the trust rule or a file is no policy (no 'version:' at its top: refused as --policy refuses it, nothing of it printed), 74 when one cannot be read."
    )

    struct Options: ParsableOptions {
        var user = false
        static var options: [OptionField<Self>] { [
            .flag(\.user, "user", help: "Look in $XDG_CONFIG_HOME/policyctl (~/.config/policyctl) first, as runs that are not root do."),
        ] }
    }

    let user: Bool

    init(_ options: Options) { user = options.user }

    func run() throws -> ExitCode {
        let listing = try PolicyArgument.listing(PolicyArgument.folders(user: user))
        var first = true
        // Every file read and judged before anything is printed: a set holding a file that is no policy is
        // refused whole, as loading it would be.
        var contents: [(path: String, bytes: [UInt8])] = []
        for file in listing.files {
            let bytes: [UInt8]
            do { bytes = try TrustedFile.read(file.path, limit: PolicyLoader.maximumFileSize, what: "policy drop-in") } catch {
                throw CommandFailure(code: error.errno == nil ? .invalidPolicy : .ioError, message: error.description)
            }
            // A file that is no policy is refused as `--policy` refuses it: one located error, none of its bytes.
            if let notPolicy = PolicyLoader.notPolicyError(bytes, file: file.path) {
                for diagnostic in notPolicy.diagnostics.dropLast() { Terminal.err("Error: \(PrintableText.escapingControls(diagnostic.description))") }
                throw CommandFailure(code: .invalidPolicy, message: notPolicy.diagnostics.last?.description ?? "not a policy")
            }
            contents.append((file.path, bytes))
        }
        for (path, bytes) in contents {
            if !first { Terminal.out("") }
            first = false
            Terminal.out("# \(PathEscaping.escape(Array(path.utf8)))")
            Terminal.out(bytes: bytes)
            if let last = bytes.last, last != 0x0A { Terminal.out("") }
        }
        for mask in listing.masked {
            if !first { Terminal.out("") }
            first = false
            Terminal.out("# \(PathEscaping.escape(Array(mask.path.utf8))) -> /dev/null (masks \(mask.name))")
        }
        return .success
    }
}
