// The fix for the YAML mistakes people make first, in place of the parser's words. `match: *.tmp` reads to
// libyaml as an alias and fails with "did not find expected alphabetic or numeric character (while scanning an
// alias)"; what the writer needs is `quote the glob: match: "*.tmp"`. The parser's text stays in brackets.

import Foundation

package enum YAMLHint {
    /// Characters a plain YAML value cannot start with that people write at the start of globs and values:
    /// `*` (alias), `&` (anchor), `!` (tag), `@` and `` ` `` (reserved), `%` (a directive at the start of a line).
    static let indicators: Set<Character> = ["*", "&", "!", "@", "`", "%"]

    /// The message for a YAML syntax error in `source`: the fix first when the error's line shows a known
    /// mistake, else libyaml's message with its context (and a note when a tab is where it tripped).
    package static func message(for error: YAMLError, in source: [UInt8]) -> String {
        let parser = error.context.map { "\(error.message) (\($0))" } ?? error.message
        let lines = source.split(separator: 0x0A, omittingEmptySubsequences: false)
        guard error.mark.line >= 1, error.mark.line <= lines.count else { return parser }
        var line = String(decoding: lines[error.mark.line - 1], as: UTF8.self)
        if line.hasSuffix("\r") { line.removeLast() }
        if let fix = quoteFix(line) { return "\(fix) (the parser said: \(parser))" }
        if error.mark.character(in: source) == "\t" {
            return parser + "; YAML indents with spaces, never tabs"
        }
        return parser
    }

    /// `quote the glob: match: "*.tmp"` when `line` is `KEY: VALUE` or `- VALUE` (or `- KEY: VALUE`) and VALUE
    /// starts with one of `indicators`; nil otherwise. The suggestion is the line's own key and value, quoted.
    static func quoteFix(_ line: String) -> String? {
        var rest = Substring(line.drop { $0 == " " })
        var lead = ""
        while rest.hasPrefix("- ") {
            lead += "- "
            rest = rest.dropFirst(2).drop { $0 == " " }
        }
        var key = ""
        if let colon = rest.range(of: ": "), let first = rest.first, !indicators.contains(first), first != "\"", first != "'" {
            key = String(rest[..<colon.lowerBound]) + ": "
            rest = rest[colon.upperBound...].drop { $0 == " " }
        }
        // A comment ends a plain value; the suggestion leaves it out.
        if let comment = rest.range(of: " #") { rest = rest[..<comment.lowerBound] }
        let value = String(rest).trimmingSuffixSpaces
        guard let first = value.first, indicators.contains(first), lead != "" || key != "" else { return nil }
        let quoted = "\"" + value.replacingBackslashesAndQuotes + "\""
        let what = value.contains(where: { "*?[".contains($0) }) ? "the glob" : "the value"
        return "quote \(what): \(lead)\(key)\(quoted)"
    }
}

private extension String {
    var trimmingSuffixSpaces: String {
        var s = self
        while s.last == " " || s.last == "\t" { s.removeLast() }
        return s
    }

    /// The value as a double-quoted YAML scalar's contents: `\` and `"` escaped.
    var replacingBackslashesAndQuotes: String {
        var out = ""
        for c in self {
            if c == "\\" || c == "\"" { out.append("\\") }
            out.append(c)
        }
        return out
    }
}
