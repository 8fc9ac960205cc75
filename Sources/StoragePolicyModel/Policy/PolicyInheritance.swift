// `extends:` — a policy built on bundled policies and other files. Inherited rules and layout come first, in
// order; a rule of the same name replaces the inherited one in its place; `enabled: false` drops one; top-level
// keys the file writes override inherited ones. Cycles, unknown names, unreadable files and chains deeper than
// `maximumDepth` are errors at the `extends` entry; errors inside an inherited file are located in that file.

@_spi(Layers) import StoragePolicyFileSystem

package enum PolicyInheritance {
    /// How many files deep a chain may go (a policy, what it extends, what that extends...).
    static let maximumDepth = 8
    /// How bundled policies are named in diagnostics and `validate --effective`.
    static let bundledPrefix = "bundled:"

    /// What decoding one file found that inheritance acts on.
    package struct Declarations {
        var extends: [(reference: String, location: PolicyLocation)]
        var disabled: [(name: String, location: PolicyLocation, nameOnly: Bool)]
        package var written: Set<String>
    }

    /// The merged policy for `policy` (decoded from `file`), its parents' warnings, or every error found.
    /// `chain` holds the identities of the files already being loaded, outermost first.
    /// `folder`: the chain of a discovered policy may reach only bundled policies and files inside it.
    static func merge(_ policy: Policy, _ declarations: Declarations, file: String,
                      chain: [String], confinedTo folder: String? = nil) -> (policy: Policy, diagnostics: [Diagnostic], errorSource: [UInt8]?) {
        var diagnostics: [Diagnostic] = []
        var errorSource: [UInt8]? = nil
        var parents: [Policy] = []
        var sources: [InheritedSource] = []
        for (reference, location) in declarations.extends {
            func fail(_ message: String) {
                diagnostics.append(Diagnostic(severity: .error, location: location, message: "extends '\(reference)': \(message)"))
            }
            guard let target = resolve(reference, from: file) else {
                if isPath(reference) {
                    fail(file.hasPrefix(bundledPrefix)
                         ? "a bundled policy can only extend other bundled policies"
                         : "a relative path needs a policy loaded from a file")
                } else {
                    let names = BundledPolicies.all.map(\.name)
                    let hint = Suggestion.closest(to: reference, in: names).map { "did you mean '\($0)'? " } ?? ""
                    fail("no bundled policy has this name (\(hint)bundled: \(names.joined(separator: ", ")); write a path with '/' or '.yaml' for a file)")
                }
                continue
            }
            if folder != nil, target.bundledText == nil, let problem = confinementProblem(reference) {
                fail(problem)
                continue
            }
            if chain.contains(target.identity) {
                let names = (chain + [target.identity]).map(display)
                fail("extends cycle: \(names.joined(separator: " -> "))")
                continue
            }
            if chain.count >= maximumDepth {
                fail("the extends chain is more than \(maximumDepth) policies deep")
                continue
            }
            let bytes: [UInt8]
            if let text = target.bundledText {
                bytes = Array(text.utf8)
            } else {
                do {
                    bytes = try PolicyLoader.readPolicy(target.file, location: location, prefix: "extends '\(reference)': ")
                } catch {
                    diagnostics += error.diagnostics
                    continue
                }
            }
            do {
                let loaded = try PolicyLoader.load(bytes: bytes, file: target.file, chain: chain + [target.identity],
                                                   confinedTo: folder)
                parents.append(loaded.policy)
                sources.append(InheritedSource(name: target.file, bytes: bytes))
                sources += loaded.policy.inherited
                diagnostics += loaded.warnings
            } catch {
                diagnostics += error.diagnostics
                if errorSource == nil { errorSource = error.source }
                diagnostics.append(Diagnostic(severity: .note, location: location,
                                              message: "'\(reference)' is inherited here"))
            }
        }

        var merged = policy
        merged.rules = []
        merged.layout = []
        merged.inherited = sources
        for parent in parents {
            for rule in parent.rules + parent.discoveringTrash { place(rule, in: &merged.rules) }
            for entry in parent.layout {
                if let i = merged.layout.firstIndex(where: { $0.path == entry.path }) { merged.layout[i] = entry }
                else { merged.layout.append(entry) }
            }
            if !declarations.written.contains("max-delete"), let limit = parent.maxDelete { merged.maxDelete = limit }
            if !declarations.written.contains("pressure"), !parent.pressure.isEmpty { merged.pressure = parent.pressure }
            if !declarations.written.contains("roots"), !parent.roots.isEmpty { merged.roots = parent.roots }
            if !declarations.written.contains("quarantine"), let window = parent.quarantine { merged.quarantine = window }
            if !declarations.written.contains("journal") { merged.journal = parent.journal }
            if !declarations.written.contains("description"), let text = parent.description { merged.description = text }
        }
        let inheritedNames = Set(merged.rules.map(\.name))
        for rule in policy.rules { place(rule, in: &merged.rules) }
        for entry in policy.layout {
            if let i = merged.layout.firstIndex(where: { $0.path == entry.path }) { merged.layout[i] = entry }
            else { merged.layout.append(entry) }
        }
        for (name, location, nameOnly) in declarations.disabled {
            if nameOnly && !inheritedNames.contains(name) && diagnostics.allSatisfy({ $0.severity != .error }) {
                diagnostics.append(Diagnostic(severity: .error, location: location, message:
                    "rule '\(name)': 'enabled: false' drops an inherited rule, but no policy this one extends has a rule named '\(name)'"))
            }
            merged.rules.removeAll { $0.name == name }
        }
        return (merged, diagnostics, errorSource)
    }

    /// Why a discovered policy may not extend `reference`: it is found in the folder it governs (often one other
    /// users write), so it may not make root read anything outside that folder.
    static func confinementProblem(_ reference: String) -> String? {
        if reference.hasPrefix("/") {
            return "a policy found by convention (not named with --policy) may not extend an absolute path; name it with --policy, or copy the file into the folder"
        }
        if reference.split(separator: "/").contains("..") {
            return "a policy found by convention (not named with --policy) may not extend a file outside its folder ('..'); name it with --policy"
        }
        return nil
    }

    /// Appends `rule`, or puts it in the place of the rule with its name.
    package static func place(_ rule: Rule, in rules: inout [Rule]) {
        if let i = rules.firstIndex(where: { $0.name == rule.name }) { rules[i] = rule } else { rules.append(rule) }
    }

    /// A bundled name is a plain word; anything with '/' or a `.yaml`/`.yml` ending is a file path.
    static func isPath(_ reference: String) -> Bool {
        reference.contains("/") || reference.hasSuffix(".yaml") || reference.hasSuffix(".yml")
    }

    package struct Target {
        /// The name diagnostics use: `bundled:NAME`, or the path relative to the working directory.
        package var file: String
        /// What a cycle is detected on: `bundled:NAME` or the file's real path.
        package var identity: String
        var bundledText: String?
    }

    /// Where `reference` leads from a policy loaded as `file`; nil when it cannot lead anywhere.
    package static func resolve(_ reference: String, from file: String) -> Target? {
        guard isPath(reference) else {
            guard let template = BundledPolicies.named(reference) else { return nil }
            let name = bundledPrefix + template.name
            return Target(file: name, identity: name, bundledText: template.text)
        }
        let path: String
        if reference.hasPrefix("/") {
            path = reference
        } else {
            // Relative to the extending file; policies without a file (yaml strings, bundled ones) have no folder.
            if file.hasPrefix(bundledPrefix) || file.hasPrefix("<") { return nil }
            let folder = file.contains("/") ? String(file[..<file.lastIndex(of: "/")!]) : "."
            path = (folder.isEmpty ? "/" : folder + "/") + reference
        }
        return Target(file: path, identity: realPath(path) ?? path, bundledText: nil)
    }

    static func realPath(_ path: String) -> String? {
        guard let resolved = system_realpath(path, nil) else { return nil }
        defer { system_free(resolved) }
        return String(cString: resolved)
    }

    package static func display(_ identity: String) -> String { identity }
}
