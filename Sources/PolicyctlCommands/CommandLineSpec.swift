// The declarations a command is made of: its name, abstract, arguments and options. Help, completions
// and the parser are all generated from these, so they cannot drift apart. A command's arguments and options
// come from the fields of its Options struct (ParsableOptions.swift), never listed a second time.

/// What a command says about itself besides its options: its name and the texts help and the man page show.
struct CommandSummary: Sendable {
    var name: String
    var abstract: String
    var discussion: String? = nil
    /// Extra usage lines shown instead of the generated one (e.g. `apply PLANFILE`).
    var usage: [String]? = nil
}

struct CommandSpec: Sendable {
    var name: String
    var abstract: String
    var discussion: String? = nil
    /// Extra usage lines shown instead of the generated one (e.g. `apply PLANFILE`).
    var usage: [String]? = nil
    var arguments: [ArgumentSpec] = []
    var options: [OptionSpec] = []
}

extension CommandSpec {
    /// A command's spec: its summary, and the arguments and options its Options struct declares.
    init<Options: ParsableOptions>(_ summary: CommandSummary, _ options: Options.Type) {
        // A copied field (one option filling two properties, or two options one) is a programming error; the
        // first test that asks for the spec (any --help, the completions) stops on it in a debug build.
        assert(Set(Options.options.map(\.spec.long)).count == Options.options.count, "\(summary.name): an option is declared twice")
        assert(Set(Options.options.map(\.keyPath)).count == Options.options.count, "\(summary.name): a property is filled by two options")
        self.init(name: summary.name, abstract: summary.abstract, discussion: summary.discussion, usage: summary.usage,
                  arguments: Options.arguments.map(\.spec), options: Options.options.map(\.spec))
    }
}

struct ArgumentSpec: Sendable {
    var name: String
    var help: String
    var isOptional = false
    var isRepeating = false
    /// For completions: the argument names a file or directory.
    var completion: Completion = .file
}

enum Completion: Sendable, Equatable { case none, file, directory, values([String]) }

struct OptionSpec: Sendable {
    /// Long name without dashes (`policy`).
    var long: String
    /// Short letter without dash (`p`), if any.
    var short: Character? = nil
    /// nil for a flag; the value's name in help (`path`) for an option that takes one.
    var valueName: String? = nil
    var help: String
    var defaultValue: String? = nil
    var allowedValues: [String]? = nil
    var isRepeating = false
    var completion: Completion = .none

    static func flag(_ long: String, short: Character? = nil, help: String) -> OptionSpec {
        OptionSpec(long: long, short: short, valueName: nil, help: help)
    }

    static func option(_ long: String, short: Character? = nil, value: String, help: String,
                       default defaultValue: String? = nil, values: [String]? = nil,
                       repeating: Bool = false, completion: Completion = .none) -> OptionSpec {
        OptionSpec(long: long, short: short, valueName: value, help: help, defaultValue: defaultValue,
                   allowedValues: values, isRepeating: repeating,
                   completion: values.map { .values($0) } ?? completion)
    }

    var isFlag: Bool { valueName == nil }
}
