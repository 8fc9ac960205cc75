// Drop-ins: `/etc/policyctl.d/*.yaml` over `/run/policyctl.d` over `/usr/lib/policyctl.d` (ConfigFolders: the
// tmpfiles.d rules of override, masking and order), the policy every command uses when --policy is not given,
// and where `--policy NAME` is looked for. The set is one policy: a policy that extends every file of it in the
// order of their names, so the rules of `extends:` hold (a later rule of the same name replaces an earlier one in
// its place, `enabled: false` drops one) and each file gets the trust rule `extends:` files get.

@_spi(Layers) import StoragePolicyFileSystem

package enum PolicyDropIns {
    /// What diagnostics name the merged set by (it is no file of its own).
    package static let setFile = "<policyctl.d>"
    /// The merged set's policy name (journal entries and plans carry it).
    package static let setName = "policyctl.d"
    /// What a refused folder is called.
    static let what = "policy drop-in folder"

    /// The system folders under `prefix` (empty on a real system; a scratch folder in debug-build tests), and
    /// with `userFolder` (`$XDG_CONFIG_HOME/policyctl`, for --user runs) that folder above them.
    package static func folders(prefix: String = "", userFolder: String? = nil) -> ConfigFolders {
        let system = ["/etc/policyctl.d", "/run/policyctl.d", "/usr/lib/policyctl.d"].map { prefix + $0 }
        return ConfigFolders(folders: (userFolder.map { [$0] } ?? []) + system, suffix: ".yaml", what: what)
    }

    /// The merged set, or nil when no folder holds a drop-in. Errors are the policy's diagnostics: a refused
    /// folder (65, naming it and the fix) or file, or an invalid drop-in located in its own file.
    package static func load(_ folders: ConfigFolders) throws(PolicyLoadError) -> LoadedPolicy? {
        let listing: ConfigFolders.Listing
        do { listing = try folders.list() } catch {
            let io = error.errno != nil
            throw PolicyLoadError(diagnostics: [Diagnostic(severity: .error, location: nil, message: error.description)], isIOError: io)
        }
        guard !listing.files.isEmpty else { return nil }
        let bytes = Array(mergedText(listing.files).utf8)
        var loaded: LoadedPolicy
        do { loaded = try PolicyLoader.load(bytes: bytes, file: setFile, chain: [setFile]) } catch {
            throw located(error, merged: bytes)
        }
        // No file of its own: a plan made from the set names no policy path, so a saved one is applied with
        // --policy (or by planning again), never by reloading a path that is not there.
        loaded.policy.source = nil
        // Warnings are located in the drop-ins; the merged text's lines would be the wrong ones under them.
        loaded.source = nil
        return loaded
    }

    /// The merged text is no file anyone can open: what is located in it is said of the drop-in instead, and
    /// its lines are never shown under a diagnostic of another file.
    static func located(_ error: PolicyLoadError, merged: [UInt8]) -> PolicyLoadError {
        var error = error
        if error.source == merged { error.source = nil }
        let inherited = " is inherited here"
        error.diagnostics = error.diagnostics.map { diagnostic in
            guard diagnostic.location?.file == setFile else { return diagnostic }
            var d = diagnostic
            d.location = nil
            if d.message.hasSuffix(inherited) {
                d.message = String(d.message.dropLast(inherited.count)) + " is a drop-in (policyctl cat-config lists the set)"
            }
            return d
        }
        return error
    }

    /// The policy that extends each file, by absolute path, in order. Paths are written double-quoted with
    /// YAML's escapes, so no name can change the document's structure.
    package static func mergedText(_ files: [ConfigFolders.File]) -> String {
        var text = "version: 1\nname: \(setName)\nextends:\n"
        for file in files { text += "  - \(quoted(PathNormalization.absolute(file.path)))\n" }
        return text
    }

    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// True for a `--policy` value meant as a drop-in's name: no `/` and no file ending (`tmp`, not
    /// `tmp.yaml` or `./tmp`).
    package static func isName(_ value: String) -> Bool {
        // The slash looked for among the bytes: `contains("/")` went through Foundation's `range(of:)`, whose
        // first use initialised its regular-expression options, 1.2 ms of every command's start.
        !value.isEmpty && !value.utf8.contains(UInt8(ascii: "/")) && !value.hasSuffix(".yaml") && !value.hasSuffix(".yml")
            && !value.hasSuffix(".swift") && value != "." && value != ".."
    }
}
