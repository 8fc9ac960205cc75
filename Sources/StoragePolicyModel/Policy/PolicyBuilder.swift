// A result-builder DSL that mirrors the YAML kinds, so Swift code states a policy the way a file does:
// `try Policy("app") { LayoutDirectory("tmp"); Rule.expire("tmp-expiry", in: "tmp", after: .hours(24)) }`.
// It runs the same validation as the YAML loader; an invalid policy throws, it is never half-built.

@_spi(Layers) import StoragePolicyFileSystem

/// One piece of a policy built in Swift: a layout entry or a rule.
public protocol PolicyComponent: Sendable {
    /// The parts this component contributes, in order.
    var policyParts: [PolicyPart] { get }
}

/// What a component contributes: a layout entry, or a rule whose globs are compiled when the policy is built.
public enum PolicyPart: Sendable {
    case layout(path: String, excludeFromBackup: Bool, cacheTag: Bool)
    case rule(RuleDraft)
}

/// A rule as written in Swift, before its path and globs are checked.
public struct RuleDraft: Sendable {
    /// The rule's name, unique in the policy.
    public var name: String
    /// The scope, relative to the root, as text.
    public var path: String
    /// `match:` globs, as text.
    public var match: [String] = []
    /// `exclude:` globs, as text.
    public var exclude: [String] = []
    /// `type:`; nil means the kind's default.
    public var type: EntryTypeFilter? = nil
    /// `mode:` enforce or audit.
    public var mode: Rule.Mode = .enforce
    /// `severity:`; nil means the kind's default.
    public var severity: Rule.Severity? = nil
    /// What the rule does.
    package var kind: Kind

    /// A draft with no globs, in enforce mode.
    package init(name: String, path: String, kind: Kind) {
        self.name = name; self.path = path; self.kind = kind
    }

    /// The kind: ready, or made when the policy is built, when its settings need checking (globs as text).
    package enum Kind: Sendable {
        case ready(Rule.Kind)
        case checked(@Sendable (inout DraftChecks) -> Rule.Kind)
    }
}

/// What a draft's kind reports while the policy is built: problems with its settings, named by the rule.
package struct DraftChecks {
    /// `rule 'name'`.
    package let owner: String
    package private(set) var problems: [String] = []

    package init(owner: String) { self.owner = owner }

    /// Records a problem; the policy is not built.
    package mutating func fail(_ message: String) { problems.append(message) }

    /// The patterns compiled as globs; each invalid one is a problem naming the rule and the pattern.
    package mutating func globs(_ patterns: [String]) -> [Glob] {
        patterns.compactMap { pattern in
            do { return try Glob(pattern) } catch let error as Glob.SyntaxError {
                fail("\(owner): invalid pattern '\(pattern)': \(error.message)")
                return nil
            } catch {
                return nil
            }
        }
    }
}

/// The result builder behind `Policy(_:content:)`: components, `if`, `if/else` and `for` loops.
@resultBuilder
public enum PolicyBuilder {
    /// One component.
    public static func buildExpression(_ component: some PolicyComponent) -> [PolicyPart] { component.policyParts }
    /// Components in order.
    public static func buildBlock(_ parts: [PolicyPart]...) -> [PolicyPart] { parts.flatMap { $0 } }
    /// An `if` without `else`.
    public static func buildOptional(_ parts: [PolicyPart]?) -> [PolicyPart] { parts ?? [] }
    /// The `if` branch of an `if/else`.
    public static func buildEither(first parts: [PolicyPart]) -> [PolicyPart] { parts }
    /// The `else` branch of an `if/else`.
    public static func buildEither(second parts: [PolicyPart]) -> [PolicyPart] { parts }
    /// A `for` loop.
    public static func buildArray(_ parts: [[PolicyPart]]) -> [PolicyPart] { parts.flatMap { $0 } }
}

extension Policy {
    /// Builds and validates a policy in Swift. Throws `PolicyLoadError` with every problem, like the loader.
    public init(_ name: String, description: String? = nil, maxDelete: DeleteLimit? = nil,
                @PolicyBuilder _ content: () -> [PolicyPart]) throws(PolicyLoadError) {
        var diagnostics: [Diagnostic] = []
        func fail(_ message: String) { diagnostics.append(Diagnostic(severity: .error, location: nil, message: message)) }
        func scope(_ text: String, _ owner: String) -> RelativePath? {
            guard !text.hasPrefix("/"), let p = RelativePath(text) else {
                fail("\(owner): path '\(text)' could reach outside the root (absolute paths and '..' are not allowed)")
                return nil
            }
            if p.components.first == Markers.stateDirectory {
                fail("\(owner): path '\(text)' is inside policyctl's own state folder '.policyctl'")
                return nil
            }
            return p
        }
        if !PolicyDecoder.isIdentifier(name) {
            fail("policy name '\(name)' must be letters, digits, '-', '_' or '.'")
        }
        var policy = Policy(name: name, description: description, maxDelete: maxDelete)
        for part in content() {
            switch part {
            case .layout(let path, let exclude, let tag):
                if let p = scope(path, "layout entry") {
                    policy.layout.append(LayoutEntry(path: p, excludeFromBackup: exclude, cacheDirectoryTag: tag))
                }
            case .rule(let draft):
                let owner = "rule '\(draft.name)'"
                guard let p = scope(draft.path, owner) else { continue }
                var checks = DraftChecks(owner: owner)
                let kind: Rule.Kind
                switch draft.kind {
                case .ready(let k): kind = k
                case .checked(let make): kind = make(&checks)
                }
                let match = checks.globs(draft.match), exclude = checks.globs(draft.exclude)
                for problem in checks.problems { fail(problem) }
                policy.rules.append(Rule(name: draft.name, path: p, match: match, exclude: exclude, type: draft.type,
                                         mode: draft.mode, severity: draft.severity, kind: kind))
            }
        }
        var validator = PolicyValidator(file: "<swift>")
        validator.validate(policy)
        diagnostics += validator.diagnostics.filter { $0.severity == .error }
        if !diagnostics.isEmpty { throw PolicyLoadError(diagnostics: diagnostics) }
        self = policy
    }
}
