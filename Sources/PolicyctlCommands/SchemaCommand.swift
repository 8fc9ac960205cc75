// `policyctl schema`: prints the policy language's JSON Schema (Docs/policy.schema.json, embedded), so an editor
// can be pointed at it from any machine; and where `init` finds the schema on disk for the modeline it writes.
import StoragePolicy

struct SchemaCommand: Command {
    static let summary = CommandSummary(
        name: "schema",
        abstract: "Print the JSON Schema of the policy language, for editors.",
        discussion: "The schema (JSON Schema draft-07) that yaml-language-server and other editors validate policies with; the same file make install puts in PREFIX/share/policyctl/policy.schema.json. Save it beside a policy (policyctl schema > policy.schema.json) and start the policy with '# yaml-language-server: $schema=policy.schema.json'. The loader stays the authority: policyctl validate checks what a schema cannot."
    )

    init(_ options: NoOptions) {}

    func run() throws -> ExitCode {
        Terminal.out(PolicySchema.fileContents, terminator: "")
        return .success
    }
}

enum SchemaLocation {
    /// The modeline the bundled templates carry: right in Policies/, nowhere in a folder `init` writes to.
    static let templateModeline = "# yaml-language-server: $schema=../Docs/policy.schema.json"

    /// The schema file on this machine, absolute: PREFIX/share/policyctl/policy.schema.json beside an installed
    /// policyctl (PREFIX/bin/policyctl), else Docs/policy.schema.json of the source tree this binary was built
    /// from, when it is still there; nil when neither exists.
    static func onDisk(executable: String = Subprocess.selfPath) -> String? {
        let bin = executable.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        let prefix = bin.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        // #filePath is this file in the source tree: Sources/PolicyctlCommands/SchemaCommand.swift.
        let sourceRoot = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false).dropLast(3).joined(separator: "/")
        for candidate in [prefix + "/share/policyctl/policy.schema.json", sourceRoot + "/Docs/policy.schema.json"]
        where candidate.hasPrefix("/") && isRegularFile(candidate) {
            return PathNormalization.absolute(candidate)
        }
        return nil
    }

    /// A template's text with its modeline pointing at `schema` (an absolute path); without one, a comment
    /// saying how to get the schema instead of a line that points nowhere.
    static func retargeted(_ text: String, schema: String?) -> String {
        guard text.hasPrefix(templateModeline + "\n") else { return text }
        let line = schema.map { "# yaml-language-server: $schema=\($0)" }
            ?? "# Editors: run `policyctl schema > policy.schema.json`, then start this file with: # yaml-language-server: $schema=policy.schema.json"
        return line + text.dropFirst(templateModeline.count)
    }

    private static func isRegularFile(_ path: String) -> Bool {
        system_stat(path)?.kind == .regular
    }
}
