// Where something was written in a policy file, 1-based, so every error can say `policy.yaml:14:7:`.
// Policies built in Swift have no file; their locations are nil, never made up.

public struct PolicyLocation: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var file: String
    public var line: Int
    public var column: Int

    public init(file: String, line: Int, column: Int) {
        self.file = file; self.line = line; self.column = column
    }

    public var description: String { "\(file):\(line):\(column)" }

    public static func < (a: PolicyLocation, b: PolicyLocation) -> Bool {
        (a.file, a.line, a.column) < (b.file, b.line, b.column)
    }
}
