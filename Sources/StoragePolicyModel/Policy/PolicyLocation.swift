// Where something was written in a policy file, 1-based, so every error can say `policy.yaml:14:7:`.
// Policies built in Swift have no file; their locations are nil, never made up.

/// A place in a policy file, 1-based: `policy.yaml:14:7`.
public struct PolicyLocation: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The file as it was named when loaded.
    public var file: String
    /// The line, from 1.
    public var line: Int
    /// The column, from 1.
    public var column: Int

    /// A location.
    public init(file: String, line: Int, column: Int) {
        self.file = file; self.line = line; self.column = column
    }

    /// `file:line:col`.
    public var description: String { "\(file):\(line):\(column)" }

    /// Orders by file, then line, then column.
    public static func < (a: PolicyLocation, b: PolicyLocation) -> Bool {
        (a.file, a.line, a.column) < (b.file, b.line, b.column)
    }
}
