// `policyctl init`: writes a starter policy from the bundled templates. Never overwrites a file.
import StoragePolicy

struct InitCommand: Command {
    static let summary = CommandSummary(
        name: "init",
        abstract: "Write a starter policy from a bundled template.",
        discussion: "The templates are the reference policies, commented so the language can be learned from them. The file starts with a yaml-language-server modeline so editors validate it against the policy schema: the installed PREFIX/share/policyctl/policy.schema.json (or the source tree's Docs/policy.schema.json for a build from it), as an absolute path; `policyctl schema` prints the schema itself."
    )

    struct Options: ParsableOptions {
        var template = "ios-app-sandbox"
        var output = "policy.yaml"
        var list = false

        static var options: [OptionField<Self>] { [
            .option(\.template, "template", short: "t", value: "name", help: "The template to start from.", default: "ios-app-sandbox",
                    values: Templates.all.map(\.name)),
            .option(\.output, "output", short: "o", value: "file", help: "Where to write the policy ('-' for stdout).", default: "policy.yaml",
                    completion: .file),
            .flag(\.list, "list", help: "List the templates with a line about each."),
        ] }
    }

    var template: String
    var output: String
    var list: Bool

    init(_ options: Options) {
        template = options.template
        output = options.output
        list = options.list
    }

    func run() throws -> ExitCode {
        if list {
            let width = Templates.all.map(\.name.count).max() ?? 0
            for t in Templates.all {
                Terminal.out(t.name + String(repeating: " ", count: width - t.name.count + 2) + t.description)
            }
            return .success
        }
        guard let t = Templates.named(template) else { return .usage }
        // The templates' modeline is right in Policies/ only; point it at the schema on this machine.
        let text = SchemaLocation.retargeted(t.fileContents, schema: SchemaLocation.onDisk())
        if output == "-" {
            Terminal.out(text, terminator: "")
            return .success
        }
        let fd = system_open(output, [.writeOnly, .create, .exclusive, .closeOnExec], 0o644)
        guard fd >= 0 else {
            let e = system_errno
            if e == .fileExists {
                throw CommandFailure(code: .usage, message: "\(output) already exists; choose another --output or remove it first")
            }
            throw CommandFailure(code: .ioError, message: "cannot create \(output): \(e)")
        }
        defer { system_close(fd) }
        let bytes = Array(text.utf8)
        guard system_write(fd, bytes, bytes.count) == bytes.count else {
            throw CommandFailure(code: .ioError, message: "cannot write \(output): \(system_errno)")
        }
        Terminal.out("Wrote \(output) from the '\(t.name)' template. Next: policyctl plan --policy \(output) --root <dir>")
        return .success
    }
}
