// A subcommand: a spec (the single source of its help, parsing and completions) and a run step.
// Commands print through Terminal and return an exit code; they never call exit() themselves.

protocol Command {
    static var spec: CommandSpec { get }
    /// Validates and stores parsed arguments; throws UsageError for bad combinations (exit 64).
    init(_ arguments: ParsedArguments) throws
    func run() throws -> ExitCode
}

/// An error a command reports with its own exit code (invalid policy 65, I/O 74, ...).
struct CommandFailure: Error, CustomStringConvertible {
    var code: ExitCode
    var message: String
    var description: String { message }
}
