// `policyctl validate POLICY...`: loads each policy and prints every diagnostic, compiler style.
// Exit 0 when all are valid (warnings allowed), 65 when any has an error, 74 when one cannot be read.
import StoragePolicy

struct ValidateCommand: Command {
    static let summary = CommandSummary(
        name: "validate",
        abstract: "Check policies for errors, printing each at file:line:col.",
        discussion: "Every policy is read in full and all problems are reported, not just the first. Warnings (rules that overlap, settings that do nothing) do not fail validation unless --strict is given."
    )

    struct Options: ParsableOptions, ScriptPolicyOptions {
        var files: [String] = []
        var strict = false
        var quiet = false
        var effective = false
        var format = "text"
        var cacheDir: String?

        /// validate has no --policy: its policies are its arguments.
        var policy: String? { nil }
        var policyFiles: [String] { files }

        static var arguments: [ArgumentField<Self>] { [
            .argument(\.files, "policy", help: "Policy files to check."),
        ] }

        static var options: [OptionField<Self>] { [
            .flag(\.strict, "strict", help: "Treat warnings as errors."),
            .flag(\.quiet, "quiet", short: "q", help: "Print only problems, not the 'valid' lines."),
            .flag(\.effective, "effective", help: "Print each valid policy as YAML after extends is merged, each rule commented with the file it came from."),
            .option(\.format, "format", value: "format", help: "Output format.", default: "text", values: ["text", "json"]),
            .shared(\.cacheDir, ScriptLauncher.cacheDirOption),
        ] }
    }

    var files: [String]
    var strict: Bool
    var quiet: Bool
    var json: Bool
    var effective: Bool

    init(_ options: Options) {
        effective = options.effective
        files = options.files
        strict = options.strict
        quiet = options.quiet
        json = options.format == "json"
    }

    func run() -> ExitCode {
        var worst = ExitCode.success
        var report: [DiagnosticJSON.Entry] = []
        for file in files {
            var diagnostics: [Diagnostic] = []
            var source: [UInt8]? = nil
            var ok = true
            do {
                let loaded = try PolicySource.load(file)
                diagnostics = loaded.warnings
                source = loaded.source
                if effective && !json { Terminal.out(EffectivePolicyWriter.yaml(loaded.policy), terminator: "") }
                if strict && !diagnostics.isEmpty { ok = false; worst = max(worst, .invalidPolicy) }
            } catch {
                diagnostics = error.diagnostics
                source = error.source
                ok = false
                worst = max(worst, error.isIOError ? .ioError : .invalidPolicy)
            }
            if json {
                report.append(DiagnosticJSON.Entry(file: file, valid: ok, diagnostics: diagnostics.map(DiagnosticJSON.Item.init)))
                continue
            }
            for d in diagnostics {
                Terminal.err(DiagnosticStyle.render(d, source: source))
            }
            if ok && !quiet && !effective { Terminal.out("\(file): valid" + (diagnostics.isEmpty ? "" : " (\(diagnostics.count) warning\(diagnostics.count == 1 ? "" : "s"))")) }
        }
        if json { Terminal.out(DiagnosticJSON.encode(report)) }
        if !json, worst != .success, files.count > 1 {
            let failed = worst == .ioError ? "could not be read or are invalid" : "are invalid"
            Terminal.err("Some of the \(files.count) policies \(failed).")
        }
        return worst
    }
}

extension ExitCode: Comparable {
    static func < (a: ExitCode, b: ExitCode) -> Bool { a.rawValue < b.rawValue }
}
