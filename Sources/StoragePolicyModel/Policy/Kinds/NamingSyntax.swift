// naming in the policy language: `naming: { case: lower, pattern: '^[a-z0-9_]+$' }`, either or both. Its settings
// (Naming), how they decode and are written back, and the DSL's `Rule.naming`. The walk's side is
// Evaluation/Kinds/NamingKind.swift.

/// `naming: { case: lower }` and/or `naming: { pattern: '^[a-z0-9_]+\.txt$' }`
public struct Naming: Sendable, Hashable {
    /// `case: lower` renames names with uppercase letters; nil leaves case alone.
    public var letterCase: LetterCase?
    /// A regular expression every selected name must match in full; violations are reported, never fixed.
    public var pattern: String?
    /// `spaces: dash | underscore`: spaces in names become this.
    public var spaces: SpaceStyle? = nil
    /// `unicode: nfc | nfd`: names are renamed to this normalization form (APFS and HFS+ disagree).
    public var unicode: UnicodeForm? = nil
    /// `onCollision: report`: a name whose new form is taken is reported, not given a numbered form.
    public var onCollision: CollisionHandling = .number

    /// A naming rule: a case to enforce, a pattern to report, or both.
    public init(letterCase: LetterCase? = nil, pattern: String? = nil) {
        self.letterCase = letterCase; self.pattern = pattern
    }

    /// The letter case names must have: `kebab` and `snake` are lowercase with spaces and `_` (or `-`) made
    /// one `-` (or `_`), the extension lowercased and kept (`My File.TXT` -> `my-file.txt`, `my_file.txt`).
    public enum LetterCase: String, Sendable, Hashable, CaseIterable {
        case lower, upper, kebab, snake
    }

    /// What `spaces:` turns a space into.
    public enum SpaceStyle: String, Sendable, Hashable, CaseIterable {
        case dash, underscore
    }

    /// `unicode:`: the normalization form names must be in.
    public enum UnicodeForm: String, Sendable, Hashable, CaseIterable {
        case nfc, nfd
    }

    /// What a rename whose new name is taken does.
    public enum CollisionHandling: String, Sendable, Hashable, CaseIterable {
        /// The Finder's numbered form, `name (2).ext` (the default).
        case number
        /// Report the name and leave it.
        case report
    }

    /// Whether the rule renames (a case, spaces or a normalization form), not only reports a pattern.
    public var renames: Bool { letterCase != nil || spaces != nil || unicode != nil }
}

/// The naming kind's language side.
package struct NamingSyntax: RuleKindSyntax {
    package static let keyword = "naming"
    package let naming: Naming

    package init(_ naming: Naming) { self.naming = naming }

    /// Docs/policy.schema.json: the kind's key among a rule's properties, as its description (JSON text).
    package static let schemaSummary = #"File-name rules: case: lower renames to lowercase; pattern reports names that do not match."#

    /// Docs/policy.schema.json: the kind's entry in `definitions`, as written there.
    package static let schemaDefinition = #"""
        "naming": {
          "description": "case, pattern, or both.",
          "type": "object",
          "additionalProperties": false,
          "minProperties": 1,
          "properties": {
            "case": {
              "description": "lower or upper: rename selected entries to that case; kebab or snake: lowercase with spaces and '_' (or '-') made one '-' (or '_'), the extension lowercased and kept ('My File.TXT' becomes 'my-file.txt' or 'my_file.txt'). A taken name gets a Finder-style counter, 'name (2).ext', unless onCollision: report.",
              "enum": ["lower", "upper", "kebab", "snake"]
            },
            "spaces": {
              "description": "dash or underscore: rename selected entries with spaces, each space made a '-' or a '_'.",
              "enum": ["dash", "underscore"]
            },
            "unicode": {
              "description": "nfc or nfd: rename selected entries whose names are not in that Unicode normalization form (APFS keeps names as written, HFS+ in NFD).",
              "enum": ["nfc", "nfd"]
            },
            "onCollision": {
              "description": "number (the default): a taken new name gets a Finder-style counter. report: the entry is reported and not renamed.",
              "enum": ["number", "report"],
              "default": "number"
            },
            "pattern": {
              "$ref": "#/definitions/text",
              "description": "A regular expression every selected entry's name must match in full, such as '^[a-z0-9_]+\\.txt$' (single-quote it in YAML). Violations are reported, never fixed."
            }
          }
        }
    """#

    package static func decode(_ node: Node, context: String, _ decoder: inout PolicyDecoder) -> Rule.Kind? {
        guard let pairs = decoder.mapping(node, context) else { return nil }
        var naming = Naming()
        for (k, v) in pairs {
            guard let name = decoder.keyName(k, allowed: ["case", "pattern", "spaces", "unicode", "onCollision"], context: context) else { continue }
            if name == "case", let c = decoder.enumValue(v, Naming.LetterCase.self, context: "\(context): 'case'") { naming.letterCase = c }
            if name == "spaces", let s = decoder.enumValue(v, Naming.SpaceStyle.self, context: "\(context): 'spaces'") { naming.spaces = s }
            if name == "unicode", let u = decoder.enumValue(v, Naming.UnicodeForm.self, context: "\(context): 'unicode'") { naming.unicode = u }
            if name == "onCollision", let o = decoder.enumValue(v, Naming.CollisionHandling.self, context: "\(context): 'onCollision'") { naming.onCollision = o }
            if name == "pattern", let p = decoder.scalar(v, "\(context): 'pattern'") {
                do { _ = try Regex(p) } catch {
                    decoder.error(v, "\(context): invalid pattern '\(p)': \(error)")
                }
                naming.pattern = p
            }
        }
        if !naming.renames && naming.pattern == nil {
            if !pairs.contains(where: { ["case", "pattern", "spaces", "unicode"].contains($0.key.scalar ?? "") }) {
                decoder.error(node, "\(context): give 'case: lower', a 'pattern', or both")
            }
            return nil
        }
        return .naming(naming)
    }

    package var effectiveYAML: String {
        var parts: [String] = []
        if let c = naming.letterCase { parts.append("case: \(c.rawValue)") }
        if let p = naming.pattern { parts.append("pattern: \(EffectivePolicyWriter.quote(p))") }
        if let s = naming.spaces { parts.append("spaces: \(s.rawValue)") }
        if let u = naming.unicode { parts.append("unicode: \(u.rawValue)") }
        if naming.onCollision != .number { parts.append("onCollision: \(naming.onCollision.rawValue)") }
        return "naming: { \(parts.joined(separator: ", ")) }"
    }

    package var renames: Bool { naming.renames }

    package func validate(_ rule: Rule, in policy: Policy, label: String, _ report: (Diagnostic.Severity, String) -> Void) {
        if naming.pattern != nil, rule.type == .symlink {
            report(.warning, "\(label): naming patterns on symlinks only check the link's own name")
        }
        if naming.onCollision == .report && !naming.renames {
            report(.warning, "\(label): onCollision applies to renames; this rule only checks a pattern")
        }
    }
}

extension Rule {
    /// `naming: { case:, pattern: }` — lowercase names, or report names that do not match `pattern`.
    public static func naming(_ name: String, in path: String, case letterCase: Naming.LetterCase? = nil,
                              pattern: String? = nil) -> RuleDraft {
        RuleDraft(name: name, path: path, kind: .ready(.naming(Naming(letterCase: letterCase, pattern: pattern))))
    }
}
