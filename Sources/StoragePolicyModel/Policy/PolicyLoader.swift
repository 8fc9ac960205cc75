// Loads a policy file: YAML bytes -> nodes -> a validated Policy, with every problem collected as a
// Diagnostic at file:line:col. Never returns a policy that has errors.

@_spi(Layers) import StoragePolicyFileSystem

/// Reads policies from YAML (a file, a string or bytes) into a validated `Policy`, with every problem at `file:line:col`.
public enum PolicyLoader {
    /// Policy files larger than this are refused before parsing: no real policy is this big.
    public static let maximumFileSize = 16 << 20

    /// Loads and validates the policy at `path`. Warnings come back with the policy; errors are thrown.
    /// The file and every `extends:` file are read only when they pass the trust rule (``TrustRule``).
    /// `confinedTo`: a policy found by convention (not named by the caller) may extend only bundled
    /// policies and files inside this folder, by relative paths without `..`.
    public static func load(contentsOf path: String, confinedTo folder: String? = nil) throws(PolicyLoadError) -> LoadedPolicy {
        let bytes = try readPolicy(path)
        var loaded = try load(bytes: bytes, file: path, chain: [PolicyInheritance.realPath(path) ?? path], confinedTo: folder)
        loaded.policy.source = PolicyLocation(file: absolute(path), line: 1, column: 1)
        return loaded
    }

    /// The bytes of a policy file under the trust rule, or the one diagnostic saying why not (74 for I/O).
    static func readPolicy(_ path: String, location: PolicyLocation? = nil, prefix: String = "") throws(PolicyLoadError) -> [UInt8] {
        do {
            return try TrustedFile.read(path, limit: maximumFileSize, what: "policy")
        } catch {
            let message: String
            var io = false
            // An inherited file is named as the `extends:` entry names it; the policy itself as a policy.
            let noun = prefix.isEmpty ? "policy " : ""
            switch error {
            case .io(let e): message = "cannot read \(noun)'\(path)': \(e.errno)"; io = true
            case .notRegular(_, let type):
                message = "cannot read \(noun)'\(path)': \(type == .directory ? Errno.isDirectory : Errno.invalidArgument)"; io = true
            case .tooLarge(_, let size, _): message = "\(path): \(size) bytes; a policy may have at most \(maximumFileSize)"
            case .untrusted(let u): message = u.description
            }
            throw PolicyLoadError(diagnostics: [Diagnostic(severity: .error, location: location, message: prefix + message)],
                                  isIOError: io)
        }
    }

    /// Loads and validates a policy from YAML text; `file` names it in diagnostics.
    public static func load(yaml: String, file: String = "<policy>") throws(PolicyLoadError) -> LoadedPolicy {
        try load(bytes: Array(yaml.utf8), file: file)
    }

    /// Loads and validates a policy from YAML bytes; `file` names it in diagnostics.
    public static func load(bytes: [UInt8], file: String = "<policy>") throws(PolicyLoadError) -> LoadedPolicy {
        try load(bytes: bytes, file: file, chain: [PolicyInheritance.realPath(file) ?? file])
    }

    /// Loads one file of an `extends` chain; `chain` names the files already being loaded (cycle detection).
    package static func load(bytes: [UInt8], file: String, chain: [String], confinedTo folder: String? = nil) throws(PolicyLoadError) -> LoadedPolicy {
        let node: Node?
        do {
            node = try YAML.load(bytes)
        } catch {
            // A file that is no policy (/etc/shadow named by an `extends:`) is located, never quoted: not its
            // lines, and not a hint built from them, only the parser's own words.
            let quotable = hasVersionLine(bytes)
            let message = quotable ? YAMLHint.message(for: error, in: bytes)
                : error.context.map { "\(error.message) (\($0))" } ?? error.message
            throw PolicyLoadError(diagnostics: [Diagnostic(
                severity: .error, location: PolicyLocation(file: file, line: error.mark.line, column: error.mark.column),
                message: "invalid YAML: \(message)" + (quotable ? "" : Self.notQuoted))], source: quotable ? bytes : nil)
        }
        // Not a policy: one error, and nothing of the file in it (not its keys, not its lines). An empty file
        // or one that is no mapping gets the decoder's own words, which quote nothing, and no source line.
        if node?.mapping == nil {
            var decoder = PolicyDecoder(file: file)
            _ = decoder.decode(node)
            throw PolicyLoadError(diagnostics: decoder.diagnostics)
        }
        if !hasVersionKey(node) {
            throw PolicyLoadError(diagnostics: [Diagnostic(
                severity: .error, location: PolicyLocation(file: file, line: 1, column: 1),
                message: "missing 'version' (add 'version: 1')" + Self.notQuoted)])
        }
        var decoder = PolicyDecoder(file: file)
        var decoded = decoder.decode(node)
        var diagnostics = decoder.diagnostics
        var errorSource = bytes
        if let policy = decoded, !decoder.extends.isEmpty || !decoder.disabled.isEmpty,
           !diagnostics.contains(where: { $0.severity == .error }) {
            let declarations = PolicyInheritance.Declarations(extends: decoder.extends, disabled: decoder.disabled,
                                                              written: decoder.written)
            let merged = PolicyInheritance.merge(policy, declarations, file: file, chain: chain, confinedTo: folder)
            decoded = merged.policy
            diagnostics += merged.diagnostics
            // Errors inside an inherited file are shown against that file's lines.
            if let inherited = merged.errorSource,
               !merged.diagnostics.contains(where: { $0.severity == .error && $0.location?.file == file }) {
                errorSource = inherited
            }
        }
        if var policy = decoded {
            policy.separateDiscoveringTrash()
            var validator = PolicyValidator(file: file)
            validator.validate(policy)
            diagnostics += validator.diagnostics
            diagnostics.sort { ($0.location?.line ?? 0, $0.location?.column ?? 0) < ($1.location?.line ?? 0, $1.location?.column ?? 0) }
            if !diagnostics.contains(where: { $0.severity == .error }) {
                policy.sourceBytes = bytes
                return LoadedPolicy(policy: policy, warnings: diagnostics, source: bytes)
            }
        }
        diagnostics.sort { ($0.location?.line ?? 0, $0.location?.column ?? 0) < ($1.location?.line ?? 0, $1.location?.column ?? 0) }
        throw PolicyLoadError(diagnostics: diagnostics, source: errorSource)
    }

    /// What a plan made from the policy file `file` (with these bytes) fingerprints: the bytes, and with
    /// `extends` every inherited file's too. A policy that does not load is fingerprinted by its own bytes.
    package static func fingerprintBytes(_ bytes: [UInt8], file: String) -> [UInt8] {
        (try? load(bytes: bytes, file: file))?.policy.fingerprintBytes ?? bytes
    }

    /// The one error `load` gives a file that is no policy (no `version:` at its top; text that does not even
    /// parse and has no `version:` line), quoting nothing of it; nil for a file meant as a policy. For readers
    /// that show a file whole (`cat-config`): such a file is refused as `--policy` refuses it, never printed.
    package static func notPolicyError(_ bytes: [UInt8], file: String) -> PolicyLoadError? {
        let node: Node?
        do { node = try YAML.load(bytes) } catch {
            guard !hasVersionLine(bytes) else { return nil }
            return PolicyLoadError(diagnostics: [Diagnostic(
                severity: .error, location: PolicyLocation(file: file, line: error.mark.line, column: error.mark.column),
                message: "invalid YAML: \(error.context.map { "\(error.message) (\($0))" } ?? error.message)" + notQuoted)])
        }
        guard !hasVersionKey(node) else { return nil }
        return PolicyLoadError(diagnostics: [Diagnostic(
            severity: .error, location: PolicyLocation(file: file, line: 1, column: 1),
            message: "missing 'version' (add 'version: 1')" + notQuoted)])
    }

    /// Said of a file without `version:` at its top: it is no policy, so its content stays out of every message.
    static let notQuoted = "; a file without it is not a policy, and nothing of it is shown or read further"

    /// True when the top of the document is a mapping with a `version` key.
    static func hasVersionKey(_ node: Node?) -> Bool {
        guard let pairs = node?.mapping else { return false }
        return pairs.contains { $0.key.scalar == "version" }
    }

    /// For text that does not parse: a line `version:` at column 1 says it is meant as a policy.
    static func hasVersionLine(_ bytes: [UInt8]) -> Bool {
        bytes.split(separator: 0x0A, omittingEmptySubsequences: false).contains { line in
            guard line.starts(with: Array("version".utf8)) else { return false }
            return line.dropFirst(7).drop { $0 == 0x20 || $0 == 0x09 }.first == 0x3A
        }
    }

    /// One normalisation for every path: the fingerprint and the journal record the same string.
    package static func absolute(_ path: String) -> String { PathNormalization.absolute(path) }
}

/// A policy with the warnings found while loading it.
public struct LoadedPolicy: Sendable {
    /// The validated policy.
    public var policy: Policy
    /// Problems that do not stop the policy from loading (overlapping rules, `after: 0s`...).
    public var warnings: [Diagnostic]
    /// The policy's bytes, to show source lines under diagnostics.
    public var source: [UInt8]?
    /// A loaded policy.
    package init(policy: Policy, warnings: [Diagnostic], source: [UInt8]? = nil) {
        self.policy = policy; self.warnings = warnings; self.source = source
    }
}

/// Every error found in a policy (all of them, not just the first), plus its warnings.
public struct PolicyLoadError: Error, Sendable, CustomStringConvertible {
    /// Every problem found, in order, each with its location when it has one.
    public var diagnostics: [Diagnostic]
    /// The policy's bytes, to show source lines under diagnostics.
    public var source: [UInt8]?
    /// True when the file could not be read at all (exit 74, not 65).
    public var isIOError: Bool
    /// An error with these diagnostics.
    package init(diagnostics: [Diagnostic], source: [UInt8]? = nil, isIOError: Bool = false) {
        self.diagnostics = diagnostics; self.source = source; self.isIOError = isIOError
    }

    /// One diagnostic per line, `file:line:col: message`.
    public var description: String { diagnostics.map(\.description).joined(separator: "\n") }
}

/// One finding about a policy file, located where it can be: `policy.yaml:14:7: error: ...`.
public struct Diagnostic: Sendable, Hashable, CustomStringConvertible {
    /// How serious a diagnostic is.
    public enum Severity: String, Sendable, Hashable { case error, warning, note }
    /// Error (the policy is refused), warning or note.
    public var severity: Severity
    /// Where in the policy, when known.
    public var location: PolicyLocation?
    /// What is wrong and what would be valid.
    public var message: String

    /// A diagnostic.
    package init(severity: Severity, location: PolicyLocation?, message: String) {
        self.severity = severity; self.location = location; self.message = message
    }

    /// `file:line:col: message` (or just the message without a location).
    public var description: String {
        (location.map { "\($0): " } ?? "") + "\(severity.rawValue): \(message)"
    }

    /// Compiler style: the message, then the source line and a caret under the column. Control characters in
    /// either are escaped (PrintableText): the policy's bytes never reach the terminal raw.
    public func rendered(source: [UInt8]?) -> String {
        let safe = PrintableText.escapingControls(description)
        guard let location, let source, location.line >= 1 else { return safe }
        let lines = source.split(separator: 0x0A, omittingEmptySubsequences: false)
        guard location.line <= lines.count else { return safe }
        var text = String(decoding: lines[location.line - 1], as: UTF8.self)
        if text.hasSuffix("\r") { text.removeLast() }
        let (line, pad) = PrintableText.sourceLine(text, caretColumn: location.column)
        return "\(safe)\n  \(line)\n  \(pad)^"
    }
}
