// `policyctl completions SHELL` and `policyctl manpage`: generated from the command table.
// They print to stdout and never install anything themselves.
import Foundation
import StoragePolicy

struct CompletionsCommand: Command {
    static let summary = CommandSummary(
        name: "completions",
        abstract: "Print a shell completion script (bash, zsh or fish).",
        discussion: "bash: policyctl completions bash > /etc/bash_completion.d/policyctl. zsh: write it as _policyctl into a folder on $fpath. fish: policyctl completions fish > ~/.config/fish/completions/policyctl.fish."
    )

    struct Options: ParsableOptions {
        var shell = ""

        static var arguments: [ArgumentField<Self>] { [
            .argument(\.shell, "shell", help: "bash, zsh or fish.", completion: .values(["bash", "zsh", "fish"])),
        ] }
        static var options: [OptionField<Self>] { [] }
    }

    let shell: String

    init(_ options: Options) throws {
        shell = options.shell
        guard ["bash", "zsh", "fish"].contains(shell) else {
            throw UsageError(message: "Unknown shell '\(shell)' (values: bash, zsh, fish)", command: "policyctl completions")
        }
    }

    func run() -> ExitCode {
        Terminal.out(CompletionScripts.script(for: shell, commands: Policyctl.commands.map { $0.spec })!, terminator: "")
        return .success
    }
}

struct ManPageCommand: Command {
    static let summary = CommandSummary(name: "manpage", abstract: "Print the policyctl(1) manual page in roff.")

    struct Options: ParsableOptions {
        var section = "1"

        static var options: [OptionField<Self>] { [
            .option(\.section, "section", value: "n", help: "1 for the commands, 5 for the policy language.", default: "1", values: ["1", "5"]),
        ] }
    }

    let section: String
    init(_ options: Options) { section = options.section }

    func run() -> ExitCode {
        let date = ISO8601DateFormatter.string(from: Date(), timeZone: TimeZone(identifier: "UTC")!, formatOptions: [.withFullDate])
        if section == "5" {
            Terminal.out(PolicyManPage.text(version: StoragePolicyVersion.tool, date: date), terminator: "")
        } else {
            Terminal.out(ManPage.render(tool: Policyctl.spec, commands: Policyctl.commands.map { $0.spec },
                                        version: StoragePolicyVersion.tool, date: date), terminator: "")
        }
        return .success
    }
}
