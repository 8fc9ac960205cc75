// Loads a policy file: YAML bytes -> nodes -> a validated Policy, with every problem collected as a
// Diagnostic at file:line:col. Never returns a policy that has errors.

/// Reads policies from YAML (a file, a string or bytes) into a validated `Policy`, with every problem at `file:line:col`.
public enum PolicyLoader {
    /// Policy files larger than this are refused before parsing: no real policy is this big.
    public static let maximumFileSize = 16 << 20

    /// Loads and validates the policy at `path`. Warnings come back with the policy; errors are thrown.
    public static func load(contentsOf path: String) throws(PolicyLoadError) -> LoadedPolicy {
        let bytes: [UInt8]
        do {
            bytes = try readFile(path)
        } catch {
            throw PolicyLoadError(diagnostics: [Diagnostic(severity: .error, location: nil,
                                                           message: "cannot read policy '\(path)': \(error.errno)")], isIOError: true)
        }
        var loaded = try load(bytes: bytes, file: path)
        loaded.policy.source = PolicyLocation(file: absolute(path), line: 1, column: 1)
        return loaded
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
    static func load(bytes: [UInt8], file: String, chain: [String]) throws(PolicyLoadError) -> LoadedPolicy {
        let node: Node?
        do {
            node = try YAML.load(bytes)
        } catch {
            let message = YAMLHint.message(for: error, in: bytes)
            throw PolicyLoadError(diagnostics: [Diagnostic(
                severity: .error, location: PolicyLocation(file: file, line: error.mark.line, column: error.mark.column),
                message: "invalid YAML: \(message)")], source: bytes)
        }
        var decoder = PolicyDecoder(file: file)
        var decoded = decoder.decode(node)
        var diagnostics = decoder.diagnostics
        var errorSource = bytes
        if let policy = decoded, !decoder.extends.isEmpty || !decoder.disabled.isEmpty,
           !diagnostics.contains(where: { $0.severity == .error }) {
            let declarations = PolicyInheritance.Declarations(extends: decoder.extends, disabled: decoder.disabled,
                                                              written: decoder.written)
            let merged = PolicyInheritance.merge(policy, declarations, file: file, chain: chain)
            decoded = merged.policy
            diagnostics += merged.diagnostics
            // Errors inside an inherited file are shown against that file's lines.
            if let inherited = merged.errorSource,
               !merged.diagnostics.contains(where: { $0.severity == .error && $0.location?.file == file }) {
                errorSource = inherited
            }
        }
        if var policy = decoded {
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

    /// The character at a 1-based line and column, for hints about what the parser tripped on.
    static func character(in bytes: [UInt8], line: Int, column: Int) -> Character? {
        let lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false)
        guard line >= 1, line <= lines.count else { return nil }
        let text = String(decoding: lines[line - 1], as: UTF8.self)
        guard column >= 1, column <= text.count else { return nil }
        return text[text.index(text.startIndex, offsetBy: column - 1)]
    }

    static func readFile(_ path: String) throws(FileSystemError) -> [UInt8] {
        let fd = system_open(path, _O_RDONLY | _O_CLOEXEC | _O_NONBLOCK)
        guard fd >= 0 else { throw FileSystemError(.open, path: RelativePath(unchecked: Array(path.utf8)), errno: .current) }
        let file = FileDescriptor(rawValue: fd, path: RelativePath(unchecked: Array(path.utf8)))
        let status = try file.status()
        guard status.type == .regular else {
            throw FileSystemError(.open, path: file.path, errno: status.type == .directory ? .isDirectory : .invalidArgument)
        }
        return try file.readAll(limit: maximumFileSize)
    }

    /// One normalisation for every path: the fingerprint and the journal record the same string.
    static func absolute(_ path: String) -> String { PathNormalization.absolute(path) }
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
