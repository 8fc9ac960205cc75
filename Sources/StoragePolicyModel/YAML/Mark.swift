// Mark: a 1-based line and column in a YAML source, carried by every node and every YAMLError.
// Never 0-based: libyaml's 0-based marks are converted in exactly one place, `Mark.init(_: yaml_mark_t)`.
internal import CYAML

/// A position in a YAML source, as an editor shows it: line and column both start at 1.
///
/// Columns count Unicode scalars, not bytes (libyaml's counting), so `é: x` puts `x` at column 4.
package struct Mark: Sendable, Hashable, Comparable, CustomStringConvertible {
    package var line: Int
    package var column: Int

    package init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }

    /// The only conversion from libyaml's 0-based marks.
    init(_ mark: yaml_mark_t) {
        self.init(line: Int(mark.line) + 1, column: Int(mark.column) + 1)
    }

    package static func < (lhs: Mark, rhs: Mark) -> Bool {
        (lhs.line, lhs.column) < (rhs.line, rhs.column)
    }

    /// `LINE:COL`, the form error messages use after the file name.
    package var description: String { "\(line):\(column)" }
}

extension Mark {
    /// The character at this line and column (counted as marks count them) of `bytes`; nil past the text.
    package func character(in bytes: [UInt8]) -> Character? {
        let lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false)
        guard line >= 1, line <= lines.count else { return nil }
        let text = String(decoding: lines[line - 1], as: UTF8.self)
        guard column >= 1, column <= text.count else { return nil }
        return text[text.index(text.startIndex, offsetBy: column - 1)]
    }
}
