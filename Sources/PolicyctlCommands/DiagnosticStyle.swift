// Prints policy diagnostics the way compilers do, with colour on a TTY: location, severity, message,
// then the source line and a caret. Shared by every command that loads a policy.
import Foundation
import StoragePolicy

enum DiagnosticStyle {
    static func render(_ d: Diagnostic, source: [UInt8]?) -> String {
        var text = d.rendered(source: source)
        guard Terminal.stderrIsTTY && Terminal.useColorOnStderr else { return text }
        let label = "\(d.severity.rawValue):"
        let style: Terminal.Style = d.severity == .error ? .red : d.severity == .warning ? .yellow : .cyan
        if let range = text.range(of: label) {
            text.replaceSubrange(range, with: Terminal.styled(label, style, enabled: true))
        }
        return text
    }

    /// Prints the diagnostics of a policy that failed to load and returns the exit code to use.
    static func report(_ error: PolicyLoadError) -> ExitCode {
        for d in error.diagnostics { Terminal.err(render(d, source: error.source)) }
        let count = error.diagnostics.filter { $0.severity == .error }.count
        if !error.isIOError { Terminal.err("\(count) error\(count == 1 ? "" : "s") in the policy; nothing was done.") }
        return error.isIOError ? .ioError : .invalidPolicy
    }

    /// Loads a command's `--policy` and prints its warnings; when it cannot be used, prints every diagnostic at
    /// file:line:col and throws the exit code (65, or 74 when the file cannot be read) with nothing more to say.
    /// `confinedTo`: a policy found by convention, which may extend nothing outside that folder.
    static func load(_ path: String, confinedTo folder: String? = nil) throws(CommandFailure) -> LoadedPolicy {
        do {
            let loaded = try PolicySource.load(path, confinedTo: folder)
            warn(loaded)
            return loaded
        } catch {
            throw CommandFailure(code: report(error), message: "")
        }
    }

    /// Prints a loaded policy's warnings (to stderr, so machine output on stdout stays clean).
    static func warn(_ loaded: LoadedPolicy) {
        for d in loaded.warnings { Terminal.err(render(d, source: loaded.source)) }
    }
}

/// `validate --format json`: one entry per policy file, pretty with sorted keys, through the library's one JSON
/// writer (PrettyJSON, the layout JSONEncoder and JSONSerialization both give); a diagnostic without a location
/// has no `file`, `line` or `column`.
enum DiagnosticJSON {
    struct Entry: Encodable {
        var file: String
        var valid: Bool
        var diagnostics: [Item]
    }

    struct Item: Encodable {
        var severity: String
        var message: String
        var file: String?
        var line: Int?
        var column: Int?

        init(_ d: Diagnostic) {
            severity = d.severity.rawValue
            message = d.message
            file = d.location?.file; line = d.location?.line; column = d.location?.column
        }
    }

    static func encode(_ entries: [Entry]) -> String {
        String(decoding: (try? PrettyJSON.encode(entries)) ?? Array("[]".utf8), as: UTF8.self)
    }
}
