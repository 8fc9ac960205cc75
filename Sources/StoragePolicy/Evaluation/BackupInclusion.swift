// Layout `backup: include`: the markers `backup: exclude` writes must not be on the directory. This build
// reports them (plan and audit, severity error); apply does not remove them yet (see Docs/policy-reference.md).

enum BackupInclusion {
    /// Findings for the exclusion xattr and a CACHEDIR.TAG with the signature on a directory the layout includes.
    static func markers(_ handle: DirectoryHandle, path: RelativePath, attribute: String) -> [Violation] {
        var found: [Violation] = []
        if let value = try? handle.extendedAttribute(attribute), value != nil {
            found.append(Violation(rule: "layout", path: path,
                                   message: "backup-exclusion marker \(attribute) is set, but the layout says 'backup: include'; remove it (setfattr -x \(attribute))",
                                   severity: .error))
        }
        let signature = Array(Markers.cacheTagSignature.utf8)
        if let status = try? handle.statusIfPresent(of: Markers.cacheTagName), status.type == .regular,
           let file = try? handle.openFile(Markers.cacheTagName, options: [.readOnly, .nonBlocking]),
           Preflight.readPrefix(file, count: signature.count) == signature {
            found.append(Violation(rule: "layout", path: path,
                                   message: "\(Markers.cacheTagName.escaped) with the cache signature is present, but the layout says 'backup: include'",
                                   severity: .error))
        }
        return found
    }
}
