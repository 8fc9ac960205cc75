// backup in the policy language: `backup: exclude` or `backup: { exclude: true, cacheTag: true }`.

/// `backup: { exclude: true, cacheTag: true }` (or `backup: exclude`): the exclusion marker on the scope.
public struct BackupExclusion: Sendable, Hashable {
    /// Also write a CACHEDIR.TAG.
    public var cacheDirectoryTag: Bool

    /// Exclusion marker, and a CACHEDIR.TAG when `cacheDirectoryTag`.
    public init(cacheDirectoryTag: Bool = false) { self.cacheDirectoryTag = cacheDirectoryTag }
}

/// The backup kind's language side.
package struct BackupSyntax: RuleKindSyntax {
    package static let keyword = "backup"
    package static let defaultSeverity = Rule.Severity.error
    package let exclusion: BackupExclusion

    package init(_ exclusion: BackupExclusion) { self.exclusion = exclusion }

    /// Docs/policy.schema.json: the kind's key among a rule's properties, as its description (JSON text).
    package static let schemaSummary = #"Set the backup-exclusion marker (and optionally a CACHEDIR.TAG); audit reports it missing. `backup: exclude` or `backup: { cacheTag: true }`."#

    /// Docs/policy.schema.json: the kind's entry in `definitions`, as written there.
    package static let schemaDefinition = #"""
        "backup": {
          "description": "`exclude`, or a mapping with exclude and cacheTag.",
          "anyOf": [
            { "const": "exclude" },
            {
              "type": "object",
              "additionalProperties": false,
              "properties": {
                "exclude": {
                  "$ref": "#/definitions/trueFlag",
                  "description": "Set the backup-exclusion marker. Always true; omit it or write `backup: exclude`.",
                  "default": true
                },
                "cacheTag": {
                  "$ref": "#/definitions/flag",
                  "description": "Also write a CACHEDIR.TAG with the standard signature, honoured by tar, borg and restic.",
                  "default": false
                }
              }
            }
          ]
        }
    """#

    package static func decode(_ node: Node, context: String, _ decoder: inout PolicyDecoder) -> Rule.Kind? {
        if let v = node.scalar, !node.isNull {
            guard v == "exclude" else {
                decoder.error(node, "\(context): invalid value '\(v)' (expected 'exclude', or a mapping with exclude: true and cacheTag)")
                return nil
            }
            return .backup(BackupExclusion())
        }
        guard let pairs = decoder.mapping(node, context) else { return nil }
        var exclusion = BackupExclusion()
        var excluded = true
        for (k, v) in pairs {
            guard let name = decoder.keyName(k, allowed: ["exclude", "cacheTag"], context: context) else { continue }
            if name == "exclude", let b = decoder.bool(v, "\(context): 'exclude'") { excluded = b }
            if name == "cacheTag", let b = decoder.bool(v, "\(context): 'cacheTag'") { exclusion.cacheDirectoryTag = b }
        }
        if !excluded { decoder.error(node, "\(context): 'exclude: false' makes the rule do nothing; remove the rule instead") ; return nil }
        return .backup(exclusion)
    }

    package var effectiveYAML: String { "backup: { exclude: true, cacheTag: \(exclusion.cacheDirectoryTag) }" }
}

extension Rule {
    /// `backup: exclude` — the scope carries the backup-exclusion marker (and optionally a CACHEDIR.TAG).
    public static func excludeFromBackup(_ name: String, in path: String, cacheTag: Bool = false) -> RuleDraft {
        RuleDraft(name: name, path: path, kind: .ready(.backup(BackupExclusion(cacheDirectoryTag: cacheTag))))
    }
}
