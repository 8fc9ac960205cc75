// Rules whose scope is not in the tree. A typo in `path:` (Documnets) turns a rule off without a word: the walk
// never meets the scope, so the plan says "No changes" and the audit passes. `plan` and `audit` name such a
// scope, with the closest name that is there; `--strict` makes it an error. Looked up one component at a time
// from the root's descriptor (fstatat, openat without following a symlink), as the walk would reach it.

@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyModel

package enum ScopeCheck {
    /// Characters that would make a component a pattern rather than a name: a scope is checked only up to
    /// its first such component, since whatever comes after may be meant to match several names.
    static let wildcards: Set<UInt8> = [0x2A, 0x3F, 0x5B, 0x7B]  // * ? [ {

    /// One diagnostic (of `severity`, at the rule's location) per rule whose scope does not exist under `root`.
    /// A scope the layout creates is not reported (apply makes it); nor is anything when the root cannot be
    /// opened (the plan says so itself).
    package static func missingScopes(_ policy: Policy, root: String, severity: Diagnostic.Severity = .warning) -> [Diagnostic] {
        guard let handle = try? DirectoryHandle.open(root: root) else { return [] }
        var diagnostics: [Diagnostic] = []
        for rule in policy.rules where !rule.path.isRoot {
            if policy.layout.contains(where: { $0.path.hasPrefix(rule.path) }) { continue }
            guard let missing = firstMissing(rule.path, under: handle) else { continue }
            var message = "rule '\(rule.name)': scope '\(rule.path.escaped)' does not exist"
            if let suggestion = missing.suggestion { message += " (did you mean '\(suggestion.escaped)'?)" }
            diagnostics.append(Diagnostic(severity: severity, location: rule.location, message: message))
        }
        return diagnostics
    }

    /// Where `scope` stops existing: nil when it exists (or cannot be judged: a wildcard, a symlink, a
    /// non-directory on the way, an unreadable directory), else the scope with its missing component replaced
    /// by the closest sibling's name when one is close enough.
    static func firstMissing(_ scope: RelativePath, under root: DirectoryHandle) -> (component: Int, suggestion: RelativePath?)? {
        let components = scope.components
        var directory = root
        for (index, name) in components.enumerated() {
            if name.bytes.contains(where: wildcards.contains) { return nil }
            let status: FileStatus?
            do { status = try directory.statusIfPresent(of: name) } catch { return nil }
            guard let status else {
                return (index, suggestion(for: name, in: directory).map { replacement in
                    var parts = components
                    parts[index] = replacement
                    return RelativePath(parts)
                })
            }
            guard index + 1 < components.count else { return nil }
            guard status.type == .directory, let next = try? directory.openDirectory(name) else { return nil }
            directory = next
        }
        return nil
    }

    /// The entry of `directory` whose name is closest to `name` (Suggestion's edit distance), if any is close.
    /// Only the first 10,000 entries are read: a hint is not worth listing a huge (or co-tenant-stuffed) folder.
    static func suggestion(for name: FileName, in directory: DirectoryHandle) -> FileName? {
        guard let entries = try? directory.entries(limit: 10_000) else { return nil }
        let names = entries.compactMap { $0.name.isValidUTF8 ? String(decoding: $0.name.bytes, as: UTF8.self) : nil }
        guard let word = String(validating: name.bytes, as: UTF8.self),
              let best = Suggestion.closest(to: word, in: names) else { return nil }
        return FileName(best)
    }
}
