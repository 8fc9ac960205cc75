// Parses argv against a CommandSpec: long and short options, `--opt=value`, `--` ending options,
// allowed-value checks. It never exits or prints: problems are thrown as UsageError (exit 64).
import StoragePolicy

struct UsageError: Error, Sendable, CustomStringConvertible {
    var message: String
    var command: String
    var description: String { message }
}

/// What the parser accepted, by option name: read only by ParsableOptions' fields, which fill a command's
/// Options struct from it (commands never look an option up by name).
struct ParsedArguments: Sendable {
    var values: [String: [String]] = [:]
    var flags: Set<String> = []
    var positionals: [String] = []
    var helpRequested = false
}

enum ArgumentParser {
    static func parse(_ args: [String], for spec: CommandSpec, commandPath: String) throws(UsageError) -> ParsedArguments {
        var result = ParsedArguments()
        var i = 0
        var optionsEnded = false
        func fail(_ message: String) -> UsageError { UsageError(message: message, command: commandPath) }
        while i < args.count {
            let arg = args[i]
            i += 1
            if optionsEnded || arg == "-" || !arg.hasPrefix("-") {
                result.positionals.append(arg)
                continue
            }
            if arg == "--" { optionsEnded = true; continue }
            if arg == "-h" || arg == "--help" { result.helpRequested = true; continue }
            var name: String
            var inlineValue: String? = nil
            let option: OptionSpec
            if arg.hasPrefix("--") {
                name = String(arg.dropFirst(2))
                if let eq = name.firstIndex(of: "=") {
                    inlineValue = String(name[name.index(after: eq)...])
                    name = String(name[..<eq])
                }
                guard let found = spec.options.first(where: { $0.long == name }) else {
                    let hint = Suggestion.closest(to: name, in: spec.options.map(\.long)).map { " (did you mean '--\($0)'?)" } ?? ""
                    throw fail("Unknown option '--\(name)'\(hint)")
                }
                option = found
            } else {
                let letters = Array(arg.dropFirst())
                guard let first = letters.first, let found = spec.options.first(where: { $0.short == first }) else {
                    throw fail("Unknown option '\(arg)'")
                }
                option = found
                if letters.count > 1 {
                    if option.isFlag { throw fail("Unknown option '\(arg)'") }
                    inlineValue = String(letters.dropFirst())
                }
            }
            if option.isFlag {
                if inlineValue != nil { throw fail("Option '--\(option.long)' takes no value") }
                result.flags.insert(option.long)
                continue
            }
            let value: String
            if let inlineValue {
                value = inlineValue
            } else {
                guard i < args.count else { throw fail("Missing value for '--\(option.long) <\(option.valueName!)>'") }
                value = args[i]
                i += 1
            }
            if let allowed = option.allowedValues, !allowed.contains(value) {
                throw fail("The value '\(value)' is invalid for '--\(option.long) <\(option.valueName!)>' (values: \(allowed.joined(separator: ", ")))")
            }
            if !option.isRepeating, result.values[option.long] != nil {
                throw fail("Option '--\(option.long)' given more than once")
            }
            result.values[option.long, default: []].append(value)
        }
        if result.helpRequested { return result }
        let required = spec.arguments.filter { !$0.isOptional }
        if result.positionals.count < required.count {
            throw fail("Missing expected argument '<\(required[result.positionals.count].name)>'")
        }
        if !spec.arguments.contains(where: \.isRepeating), result.positionals.count > spec.arguments.count {
            throw fail("Unexpected argument '\(result.positionals[spec.arguments.count])'")
        }
        return result
    }
}

