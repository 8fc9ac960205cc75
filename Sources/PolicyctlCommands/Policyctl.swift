// The command table and entry point: dispatches argv to a subcommand, prints help, errors and exit codes.
// New subcommands are added to `commands`; everything else (help, completions) follows from their specs.
import StoragePolicy
// The malloc setting apply runs with (system_limitMallocArenas) is SPI of the bottom layer.
@_spi(Layers) import StoragePolicyFileSystem

public enum Policyctl {
    static let spec = CommandSpec(
        name: "policyctl",
        abstract: "Plan, apply and audit declarative storage policies.",
        discussion: "Policies are YAML files stating the directories that must exist and the rules that keep a tree tidy: expiry, trash retention, quotas, naming, backup exclusion and forbidden files.",
        usage: ["<subcommand>"],
        options: [.flag("version", help: "Show the version.")]
    )

    /// Every subcommand, in the order help lists them. Never mutated (a `let` of metatypes), so shared safely.
    nonisolated(unsafe) static let commands: [any Command.Type] = [
        DemoCommand.self,
        InitCommand.self,
        ValidateCommand.self,
        TestCommand.self,
        PlanCommand.self,
        ExplainCommand.self,
        SchemaCommand.self,
        CompletionsCommand.self,
        ManPageCommand.self,
        VersionCommand.self,
        AuditCommand.self,
        ApplyCommand.self,
        ReclaimCommand.self,
        RecoverCommand.self,
        JournalCommand.self,
        StatusCommand.self,
        TrashCommand.self,
        UndoCommand.self,
        QuarantineCommand.self,
        ScheduleCommand.self,
        CatConfigCommand.self,
    ]

    /// Runs this process's own command line, as main received it (not the runtime's copy from
    /// /proc/self/cmdline, empty without /proc). When it cannot be had at all, says so and returns 70
    /// (EX_SOFTWARE) rather than run as if no argument was given (top-level help, exit 0).
    public static func main() -> Int32 {
        guard let argv = ProcessArguments.current else {
            Terminal.err("Error: policyctl cannot read its command line: the C library passed none to its initializer and /proc/self/cmdline is unreadable (is /proc mounted?). Mount /proc (or run with a glibc build) and try again.")
            return ExitCode.software.rawValue
        }
        return main(argv)
    }

    /// The program's name or path as invoked (`argv[0]`), from main's own arguments.
    static var invokedAs: String { ProcessArguments.current?.first ?? "policyctl" }

    /// Runs the command line `argv` (`argv[0]` is the program) and returns its exit code; prints as
    /// `policyctl` does. What `policyctl`'s main.swift calls, and what a compiled policy can call.
    public static func main(_ argv: [String]) -> Int32 {
        // No argv[0] at all is never a real command line: it is the runtime's CommandLine.arguments without
        // /proc (a compiled Swift policy's entry point passes that). Take main's own, or fail (70).
        if argv.isEmpty { return main() }
        var args = Array(argv.dropFirst())
        if args.first == "help" {
            args.removeFirst()
            args.append("--help")
        }
        guard let first = args.first else {
            Terminal.out(HelpRenderer.render(spec, path: "policyctl", subcommands: commands.map { $0.spec }))
            return ExitCode.success.rawValue
        }
        if first == "--version" { return run(VersionCommand.self, []) }
        if first == "-h" || first == "--help" {
            Terminal.out(HelpRenderer.render(spec, path: "policyctl", subcommands: commands.map { $0.spec }))
            return ExitCode.success.rawValue
        }
        guard let command = commands.first(where: { $0.spec.name == first }) else {
            let hint = Suggestion.closest(to: first, in: commands.map { $0.spec.name }).map { " (did you mean '\($0)'?)" } ?? ""
            Terminal.err("Error: Unknown subcommand '\(first)'\(hint)")
            Terminal.err("Usage: policyctl <subcommand>")
            Terminal.err("See 'policyctl --help' for more information.")
            return ExitCode.usage.rawValue
        }
        return run(command, Array(args.dropFirst()))
    }

    static func run(_ command: any Command.Type, _ args: [String]) -> Int32 {
        let path = "policyctl \(command.spec.name)"
        if command == ApplyCommand.self {
            // One malloc arena for every thread: apply --policy plans on a pool of walker threads first, whose
            // arenas would keep their freed pages resident while the run allocates its steps (at a million
            // entries 105 MB peak against 91 MB; Docs/performance.md, "The arenas"). The cost is a shared malloc
            // lock in the walk, about 1,300 more futex calls at that size and no task-clock measurable.
            system_limitMallocArenas(to: 1)
            // Blocks up to 32 MiB from that arena, reused when freed: glibc maps each block of 128 KiB or more on
            // its own and unmaps it when freed, and the next one came back as fresh pages (the container's apply:
            // 5,340 page faults against 4,620, 12 munmap calls against 2; Docs/performance.md).
            system_keepLargeBlocksInArena(under: 32 << 20)
            // A descriptor table for 1,024 from the start, grown while this process has one thread: grown later,
            // when the walk, the unlink workers' folders or the times restore open their 65th, 129th or 257th
            // descriptor, each growth waited for an RCU grace period (15 ms measured in a container's times
            // restore; Docs/performance.md).
            system_reserveDescriptorTable(1024)
        }
        do {
            let parsed = try ArgumentParser.parse(args, for: command.spec, commandPath: path)
            if parsed.helpRequested {
                Terminal.out(HelpRenderer.render(command.spec, path: path), terminator: "")
                return ExitCode.success.rawValue
            }
            return try execute(command, parsed, argv: [invokedAs, command.spec.name] + args)
        } catch let error as UsageError {
            // Every message escaped as diagnostics are (PrintableText): a path in it may hold any control byte.
            Terminal.err("Error: \(PrintableText.escapingControls(error.message))")
            Terminal.err("Usage: \(HelpRenderer.usageLine(command.spec, path: path))")
            Terminal.err("  See '\(path) --help' for more information.")
            return ExitCode.usage.rawValue
        } catch let error as CommandFailure {
            if !error.message.isEmpty { Terminal.err("Error: \(PrintableText.escapingControls(error.message))") }
            return error.code.rawValue
        } catch let error as FileSystemError {
            Terminal.err("Error: \(PrintableText.escapingControls("\(error)"))")
            return ExitCode.ioError.rawValue
        } catch {
            Terminal.err("Error: \(PrintableText.escapingControls("\(error)"))")
            return ExitCode.ioError.rawValue
        }
    }

    /// Fills the command's Options from what was parsed and runs it (generic, so `C.Options` is a type here).
    private static func execute<C: Command>(_ command: C.Type, _ parsed: ParsedArguments, argv: [String]) throws -> Int32 {
        let options = C.Options(parsed)
        // A .swift policy: compiled, then run in this process's place (ScriptingLauncher).
        if let scripted = options as? any ScriptPolicyOptions,
           let code = ScriptLauncher.intercept(scripted, argv: argv) {
            return code
        }
        return try C(options).run().rawValue
    }
}

struct VersionCommand: Command {
    static let summary = CommandSummary(name: "version", abstract: "Show the version, and the git revision of builds made with 'make build' or scripts/build-deb.sh.")
    init(_ options: NoOptions) {}
    func run() -> ExitCode {
        Terminal.out("policyctl \(StoragePolicyVersion.tool) (\(Revision.described))")
        return .success
    }
}
