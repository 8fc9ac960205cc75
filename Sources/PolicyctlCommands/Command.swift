// A subcommand: a summary and an Options struct (together the single source of its help, parsing and
// completions) and a run step. Commands print through Terminal and return an exit code; they never call
// exit() themselves.

protocol Command {
    /// The command's options: a struct whose fields are what it may be given.
    associatedtype Options: ParsableOptions = NoOptions
    static var summary: CommandSummary { get }
    /// Validates and stores its options; throws UsageError for bad combinations (exit 64).
    init(_ options: Options) throws
    func run() throws -> ExitCode
}

extension Command {
    /// Help, the man page, completions and the parser read this; it is made from `summary` and `Options`, so
    /// what is parsed is what fills the struct.
    static var spec: CommandSpec { CommandSpec(summary, Options.self) }
}

/// An error a command reports with its own exit code (invalid policy 65, I/O 74, ...).
struct CommandFailure: Error, CustomStringConvertible {
    var code: ExitCode
    var message: String
    var description: String { message }
}
