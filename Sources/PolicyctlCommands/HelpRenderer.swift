// Renders --help in swift-argument-parser's layout: OVERVIEW, USAGE, ARGUMENTS, OPTIONS, SUBCOMMANDS;
// labels at column 2, help at column 26, wrapped at 80, `-h, --help` last.
import Foundation

enum HelpRenderer {
    static let helpColumn = 26
    static let width = 80

    static func usageLine(_ spec: CommandSpec, path: String) -> String {
        if let usage = spec.usage { return usage.map { "\(path) \($0)" }.joined(separator: "\n       ") }
        var parts = [path]
        for o in spec.options {
            let text = o.isFlag ? "--\(o.long)" : "--\(o.long) <\(o.valueName!)>"
            parts.append(o.defaultValue != nil || o.isFlag || !isRequired(o, spec) ? "[\(text)]" : text)
        }
        for a in spec.arguments {
            let text = "<\(a.name)>" + (a.isRepeating ? " ..." : "")
            parts.append(a.isOptional ? "[\(text)]" : text)
        }
        return parts.joined(separator: " ")
    }

    /// Options whose help starts with "(required)" are shown without brackets.
    private static func isRequired(_ o: OptionSpec, _ spec: CommandSpec) -> Bool { o.help.hasPrefix("(required)") }

    static func render(_ spec: CommandSpec, path: String, subcommands: [CommandSpec] = []) -> String {
        var out = "OVERVIEW: \(spec.abstract)\n"
        if let d = spec.discussion { out += "\n" + wrap(d, indent: 0, first: 0) + "\n" }
        out += "\nUSAGE: \(usageLine(spec, path: path))\n"
        if !spec.arguments.isEmpty {
            out += "\nARGUMENTS:\n"
            for a in spec.arguments { out += row("<\(a.name)>", a.help) }
        }
        out += "\nOPTIONS:\n"
        for o in spec.options {
            var label = o.short.map { "-\($0), " } ?? ""
            label += "--\(o.long)"
            if let v = o.valueName { label += " <\(v)>" }
            var help = o.help.replacingOccurrences(of: "(required) ", with: "")
            if let values = o.allowedValues { help += " (values: \(values.joined(separator: ", ")))" }
            if let d = o.defaultValue { help += " (default: \(d))" }
            out += row(label, help)
        }
        out += row("-h, --help", "Show help information.")
        if !subcommands.isEmpty {
            out += "\nSUBCOMMANDS:\n"
            for s in subcommands { out += row(s.name, s.abstract) }
            out += "\n  See '\(path) help <subcommand>' for detailed help.\n"
        }
        return out
    }

    private static func row(_ label: String, _ help: String) -> String {
        let start = "  " + label
        if start.count + 2 <= helpColumn {
            return start + String(repeating: " ", count: helpColumn - start.count) + wrap(help, indent: helpColumn, first: helpColumn) + "\n"
        }
        return start + "\n" + String(repeating: " ", count: helpColumn) + wrap(help, indent: helpColumn, first: helpColumn) + "\n"
    }

    /// Wraps words so no line passes `width`; continuation lines are indented by `indent`.
    static func wrap(_ text: String, indent: Int, first: Int) -> String {
        var lines: [String] = []
        var line = ""
        var column = first
        for word in text.split(separator: " ", omittingEmptySubsequences: true) {
            if !line.isEmpty && column + 1 + word.count > width {
                lines.append(line)
                line = String(word)
                column = indent + word.count
            } else {
                if !line.isEmpty { line += " "; column += 1 }
                line += word
                column += word.count
            }
        }
        lines.append(line)
        return lines.joined(separator: "\n" + String(repeating: " ", count: indent))
    }
}

