// A result-builder DSL that mirrors the YAML kinds, so Swift code states a policy the way a file does:
// `try Policy("app") { LayoutDirectory("tmp"); Rule.expire("tmp-expiry", in: "tmp", after: .hours(24)) }`.
// It runs the same validation as the YAML loader; an invalid policy throws, it is never half-built. Layout entries
// take YAML's keys as modifiers: `LayoutDirectory("spool").mode("0750").owner("ci").fix()`, `LayoutFile`, `LayoutSymlink`.

@_spi(Layers) import StoragePolicyFileSystem

/// One piece of a policy built in Swift: a layout entry or a rule.
public protocol PolicyComponent: Sendable {
    /// The parts this component contributes, in order.
    var policyParts: [PolicyPart] { get }
}

/// What a component contributes: a layout entry, or a rule whose globs are compiled when the policy is built.
public enum PolicyPart: Sendable {
    case layout(path: String, excludeFromBackup: Bool, cacheTag: Bool)
    /// A layout entry with the keys beyond the path (`mode`, `owner`, `group`, `fix`, `type`, `target`, `content`).
    case layoutEntry(LayoutDraft)
    case rule(RuleDraft)
}

/// A layout entry as written in Swift, before its path, mode and names are checked: what YAML's long form says.
/// `LayoutDirectory("spool").mode("0750").owner("ci").fix()`, `LayoutFile("etc/motd", content: "hi\n").mode("0644")`,
/// `LayoutSymlink("current", target: "releases/3")`.
public struct LayoutDraft: Sendable {
    /// A user or group as the policy names it: a name (resolved when the policy is built) or an id.
    public enum Principal: Sendable, Hashable {
        case name(String)
        case id(UInt32)
    }
    package var path: String
    package var type: LayoutType
    package var excludeFromBackup = false
    package var cacheTag = false
    /// `mode:` as YAML writes it, 3 or 4 octal digits ("0750"): a Swift integer literal 0750 would be decimal.
    package var mode: String?
    package var owner: Principal?
    package var group: Principal?
    package var fix = false
    package var target: String?
    package var content = ""

    package init(path: String, type: LayoutType) { self.path = path; self.type = type }
}

/// The modifiers of a layout directory or file (a symlink has no mode or owner of its own, as in YAML).
public protocol LayoutAttributes: PolicyComponent {
    /// The entry the modifiers change.
    var layoutDraft: LayoutDraft { get }
}

extension LayoutAttributes {
    public var policyParts: [PolicyPart] { [.layoutEntry(layoutDraft)] }
    /// `mode: "0750"`: 3 or 4 octal digits, as a string (an integer literal would be read as decimal).
    public func mode(_ octal: String) -> LayoutDraft { with { $0.mode = octal } }
    /// `owner:` by name, resolved when the policy is built (an unknown name is an error).
    public func owner(_ name: String) -> LayoutDraft { with { $0.owner = .name(name) } }
    /// `owner:` by uid.
    public func owner(_ id: UInt32) -> LayoutDraft { with { $0.owner = .id(id) } }
    /// `group:` by name, resolved when the policy is built.
    public func group(_ name: String) -> LayoutDraft { with { $0.group = .name(name) } }
    /// `group:` by gid.
    public func group(_ id: UInt32) -> LayoutDraft { with { $0.group = .id(id) } }
    /// `fix: true`: also repair the mode and owner of an entry that exists.
    public func fix(_ repair: Bool = true) -> LayoutDraft { with { $0.fix = repair } }

    private func with(_ change: (inout LayoutDraft) -> Void) -> LayoutDraft {
        var draft = layoutDraft
        change(&draft)
        return draft
    }
}

extension LayoutDraft: LayoutAttributes {
    public var layoutDraft: LayoutDraft { self }
}

extension LayoutDirectory: LayoutAttributes {
    public var layoutDraft: LayoutDraft {
        var draft = LayoutDraft(path: path, type: .directory)
        draft.excludeFromBackup = excludeFromBackup
        draft.cacheTag = cacheTag
        return draft
    }
}

/// `type: file`: a file that must exist, made holding `content` (at most 64 KiB) when missing.
public struct LayoutFile: LayoutAttributes {
    public let layoutDraft: LayoutDraft
    public init(_ path: String, content: String = "") {
        var draft = LayoutDraft(path: path, type: .file)
        draft.content = content
        layoutDraft = draft
    }
}

/// `type: symlink`: a symlink that must exist, made pointing at `target` when missing.
public struct LayoutSymlink: PolicyComponent {
    let draft: LayoutDraft
    public init(_ path: String, target: String) {
        var draft = LayoutDraft(path: path, type: .symlink)
        draft.target = target
        self.draft = draft
    }
    public var policyParts: [PolicyPart] { [.layoutEntry(draft)] }
}

extension LayoutDraft {
    /// The entry, or nil with each problem handed to `fail`: the checks YAML's loader makes of the same keys.
    func entry(at path: RelativePath, _ fail: (String) -> Void) -> LayoutEntry? {
        let label = "layout entry '\(path.escaped)'"
        var entry = LayoutEntry(path: path, excludeFromBackup: excludeFromBackup, cacheDirectoryTag: cacheTag)
        entry.type = type
        entry.fix = fix
        var ok = true
        if let mode {
            if let bits = LayoutEntry.modeBits(mode) { entry.mode = bits } else { fail("\(label): " + LayoutEntry.invalidMode(mode)); ok = false }
        }
        func resolve(_ principal: Principal?, group: Bool) -> PrincipalFilter? {
            switch principal {
            case nil: return nil
            case .id(let id):
                if id == UInt32.max { fail("\(label): \(group ? "group" : "user") id \(id) is out of range"); ok = false; return nil }
                return PrincipalFilter(id: id)
            case .name(let name):
                let what = group ? "group" : "user"
                switch group ? UserDatabase.groupID(named: name) : UserDatabase.userID(named: name) {
                case .id(let id): return PrincipalFilter(id: id, name: name)
                case .unknown: fail("\(label): no \(what) named '\(name)' on this system")
                case .failed(let why): fail("\(label): the \(what) database could not be read for '\(name)': \(why)")
                }
                ok = false
                return nil
            }
        }
        entry.owner = resolve(owner, group: false)
        entry.group = resolve(group, group: true)
        if let target {
            if let problem = LayoutEntry.targetProblem(target) { fail("\(label): " + problem); ok = false }
            entry.target = Array(target.utf8)
        }
        if let problem = LayoutEntry.contentProblem(content) { fail("\(label): " + problem); ok = false }
        entry.content = Array(content.utf8)
        return ok ? entry : nil
    }
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
            case .layoutEntry(let draft):
                if let p = scope(draft.path, "layout entry") {
                    if p.isRoot { fail("layout entry: path must name a directory below the root") }
                    else if let entry = draft.entry(at: p, fail) { policy.layout.append(entry) }
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
