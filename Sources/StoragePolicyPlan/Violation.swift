// A finding no action fixes (or an audit-mode rule's finding): which rule, which path, what is wrong.
// Violations are reported, never acted on.

@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyModel

/// A finding no action fixes, or an audit-mode rule's finding: which rule, which path, what is wrong.
public struct Violation: Sendable, Hashable, Codable {
    /// The rule that found it.
    public var rule: String
    /// The entry, relative to the root.
    public var path: RelativePath
    /// What is wrong.
    public var message: String
    /// How serious it is in `audit`.
    public var severity: Rule.Severity

    /// A violation.
    package init(rule: String, path: RelativePath, message: String, severity: Rule.Severity = .warning) {
        self.rule = rule; self.path = path; self.message = message; self.severity = severity
    }

    package enum CodingKeys: String, CodingKey { case rule, path, pathBase64, message, severity }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(rule, forKey: .rule)
        try c.encode(path.string, forKey: .path)
        if !path.isValidUTF8 { try c.encode(path.base64, forKey: .pathBase64) }
        try c.encode(message, forKey: .message)
        try c.encode(severity, forKey: .severity)
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        rule = try c.decode(String.self, forKey: .rule)
        path = try RelativePath.decode(from: c, key: .path, base64Key: .pathBase64)
        message = try c.decode(String.self, forKey: .message)
        severity = try c.decodeIfPresent(Rule.Severity.self, forKey: .severity) ?? .warning
    }
}

/// An entry the walk could not judge (unreadable, vanished, a FIFO where a file was expected...).
public struct SkippedEntry: Sendable, Hashable, Codable {
    /// The entry, relative to the root.
    public var path: RelativePath
    /// Why it was skipped.
    public var reason: String

    /// A skipped entry.
    package init(path: RelativePath, reason: String) { self.path = path; self.reason = reason }

    package enum CodingKeys: String, CodingKey { case path, pathBase64, reason }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(path.string, forKey: .path)
        if !path.isValidUTF8 { try c.encode(path.base64, forKey: .pathBase64) }
        try c.encode(reason, forKey: .reason)
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        path = try RelativePath.decode(from: c, key: .path, base64Key: .pathBase64)
        reason = try c.decode(String.self, forKey: .reason)
    }
}

extension RelativePath {
    /// Reads a path written as `path` (+ `pathBase64` when not UTF-8), refusing one that escapes the root.
    package static func decode<K: CodingKey>(from c: KeyedDecodingContainer<K>, key: K, base64Key: K) throws -> RelativePath {
        let bytes: [UInt8]
        if let b64 = try c.decodeIfPresent(String.self, forKey: base64Key) {
            guard let decoded = Base64.decode(b64) else {
                throw DecodingError.dataCorruptedError(forKey: base64Key, in: c, debugDescription: "invalid base64")
            }
            bytes = decoded
        } else {
            bytes = Array(try c.decode(String.self, forKey: key).utf8)
        }
        guard let p = RelativePath(bytes) else {
            throw DecodingError.dataCorruptedError(forKey: key, in: c, debugDescription: "path escapes the root")
        }
        return p
    }
}

/// What a plan says about the quarantine (`quarantine:` in the policy): which rules' deletes apply holds back,
/// for how long, and which deletes it does not (a pressure rule's evictions: they must free space now). Apply
/// decides each delete from the policy itself; this is what the plan shows and the saved plan carries.
public struct PlanQuarantine: Sendable, Hashable, Codable {
    /// Rule name to window (`7d`): the rules whose deletes are held.
    public var windows: [String: String]
    /// Deletes of those rules that are plain deletes all the same; nil when there are none.
    public var exempt: [QuarantineExemption]?

    package init(windows: [String: String], exempt: [QuarantineExemption]?) { self.windows = windows; self.exempt = exempt }
}

/// A delete a plan does not hold back, and why.
public struct QuarantineExemption: Sendable, Hashable, Codable {
    public var path: RelativePath
    public var reason: String

    package init(path: RelativePath, reason: String) { self.path = path; self.reason = reason }

    package enum CodingKeys: String, CodingKey { case path, pathBase64, reason }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(path.string, forKey: .path)
        if !path.isValidUTF8 { try c.encode(path.base64, forKey: .pathBase64) }
        try c.encode(reason, forKey: .reason)
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        path = try RelativePath.decode(from: c, key: .path, base64Key: .pathBase64)
        reason = try c.decode(String.self, forKey: .reason)
    }
}
