// `--policy` as the commands resolve it (Docs/policy-reference.md, "Drop-ins"): a path (anything with a `/` or a
// `.yaml`, `.yml` or `.swift` ending) is used as given, as before; a bare NAME is the drop-in NAME.yaml of
// /etc/policyctl.d, /run/policyctl.d or /usr/lib/policyctl.d (a file NAME in the working folder still works when
// no drop-in has the name); and plan, explain and apply without --policy use the merged drop-in set.
// Non-root runs (and `--user`) look in $XDG_CONFIG_HOME/policyctl first.
import StoragePolicy

enum PolicyArgument {
    /// What a command holds as its policy path for the merged drop-in set. PolicySource.load knows it; a value
    /// given on the command line never becomes it (a file of that name is reached as `./<policyctl.d>`).
    static let dropInSet = PolicyDropIns.setFile

    /// Prepended to /etc, /run and /usr/lib for the system folders. Only a debug build (the tests' binary) reads
    /// POLICYCTL_CONFIG_ROOT: a release binary run as root must not let its environment pick root's policy.
    static var configPrefix: String {
        #if DEBUG
        if let prefix = system_getenv("POLICYCTL_CONFIG_ROOT"), !prefix.isEmpty { return prefix }
        #endif
        return ""
    }

    /// `$XDG_CONFIG_HOME/policyctl` (an absolute XDG_CONFIG_HOME only, as the spec says), else
    /// `~/.config/policyctl`; nil without a home.
    static var userFolder: String? {
        if let config = system_getenv("XDG_CONFIG_HOME"), config.hasPrefix("/") { return config + "/policyctl" }
        guard let home = ScheduleCommand.homeDirectory, home.hasPrefix("/") else { return nil }
        return home + "/.config/policyctl"
    }

    /// The drop-in folders for this run: the user's folder first for `--user` and for any non-root run.
    static func folders(user: Bool = false) -> ConfigFolders {
        let withUser = user || system_geteuid() != 0
        return PolicyDropIns.folders(prefix: configPrefix, userFolder: withUser ? userFolder : nil)
    }

    /// The policy path a command uses for `given`: nil when --policy is not given and there is no drop-in
    /// (the caller then says what it said before). `useSet`: without --policy, the merged set stands in.
    static func resolve(_ given: String?, useSet: Bool = true, user: Bool = false) throws(CommandFailure) -> String? {
        let folders = folders(user: user)
        guard let given else {
            guard useSet, !(try listing(folders).files.isEmpty) else { return nil }
            return dropInSet
        }
        guard PolicyDropIns.isName(given) else { return given }
        if let file = try listing(folders).files.first(where: { $0.name == given + folders.suffix }) { return file.path }
        // No drop-in of that name: a file of it here is what --policy NAME always read.
        if system_lstat(given) != nil { return given == dropInSet ? "./" + given : given }
        let places = folders.folders.map { PathEscaping.escape(Array($0.utf8)) }.joined(separator: ", ")
        throw CommandFailure(code: .ioError, message: "cannot read policy '\(PathEscaping.escape(Array(given.utf8)))': no drop-in \(PathEscaping.escape(Array((given + folders.suffix).utf8))) in \(places) (or it is masked), and no file of that name here; name a file with a path (./\(PathEscaping.escape(Array(given.utf8)))) or add the drop-in")
    }

    /// The folders' effective set; a folder refused by the trust rule is exit 65 naming it and the fix.
    static func listing(_ folders: ConfigFolders) throws(CommandFailure) -> ConfigFolders.Listing {
        do { return try folders.list() } catch {
            throw CommandFailure(code: error.errno == nil ? .invalidPolicy : .ioError, message: error.description)
        }
    }

    /// The merged set, loaded (PolicySource.load for `dropInSet`).
    static func loadSet() throws(PolicyLoadError) -> LoadedPolicy {
        let folders = folders()
        guard let loaded = try PolicyDropIns.load(folders) else {
            throw PolicyLoadError(diagnostics: [Diagnostic(severity: .error, location: nil, message:
                "no policy drop-in in \(folders.folders.joined(separator: ", ")) (they were there when policyctl started); pass --policy FILE")],
                isIOError: true)
        }
        return loaded
    }
}
