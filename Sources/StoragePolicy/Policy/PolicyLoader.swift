// Loads a policy file: YAML bytes -> nodes -> a validated Policy, with every problem collected as a
// Diagnostic at file:line:col. Never returns a policy that has errors.
// (Stub until the decoder lands: the signature is the contract other parts build on.)

public enum PolicyLoader {
    /// Loads and validates the policy at `path`. Warnings come back with the policy; errors are thrown.
    public static func load(contentsOf path: String) throws(PolicyLoadError) -> LoadedPolicy {
        throw PolicyLoadError(diagnostics: [Diagnostic(severity: .error, location: nil, message: "policy loading is not implemented yet")])
    }
}

/// A policy with the warnings found while loading it.
public struct LoadedPolicy: Sendable {
    public var policy: Policy
    public var warnings: [Diagnostic]
    public init(policy: Policy, warnings: [Diagnostic]) { self.policy = policy; self.warnings = warnings }
}

/// Every error found in a policy (all of them, not just the first), plus its warnings.
public struct PolicyLoadError: Error, Sendable {
    public var diagnostics: [Diagnostic]
    public init(diagnostics: [Diagnostic]) { self.diagnostics = diagnostics }
}

/// One finding about a policy file, located where it can be: `policy.yaml:14:7: error: ...`.
public struct Diagnostic: Sendable, Hashable, CustomStringConvertible {
    public enum Severity: String, Sendable, Hashable { case error, warning, note }
    public var severity: Severity
    public var location: SourceLocation?
    public var message: String

    public init(severity: Severity, location: SourceLocation?, message: String) {
        self.severity = severity; self.location = location; self.message = message
    }

    public var description: String {
        (location.map { "\($0): " } ?? "") + "\(severity.rawValue): \(message)"
    }
}
