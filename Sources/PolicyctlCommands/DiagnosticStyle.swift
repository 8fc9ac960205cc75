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

enum DiagnosticJSON {
    static func object(_ d: Diagnostic) -> [String: Any] {
        var o: [String: Any] = ["severity": d.severity.rawValue, "message": d.message]
        if let l = d.location { o["file"] = l.file; o["line"] = l.line; o["column"] = l.column }
        return o
    }

    static func encode(_ value: Any) -> String {
        guard let data = try? JSONSerialization.data(withJSONObject: value, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]) else { return "[]" }
        return String(decoding: data, as: UTF8.self)
    }
}
