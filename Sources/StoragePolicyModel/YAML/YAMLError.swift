// YAMLError: why a YAML source could not be read, always with a 1-based line and column.
// Never carries a 0-based or missing location: every error from the reader points into the file.

/// A YAML syntax or structure error. `description` reads `LINE:COL: message`, ready for a caller to
/// prefix with the file name.
package struct YAMLError: Error, Sendable, Equatable, CustomStringConvertible {
    package var mark: Mark
    package var message: String
    /// What libyaml was doing when it failed, with where that began ("while parsing a block mapping
    /// that starts at 1:1"); nil when there is nothing useful to add.
    package var context: String?

    package init(mark: Mark, message: String, context: String? = nil) {
        self.mark = mark
        self.message = message
        self.context = context
    }

    package var description: String {
        let location = "\(mark.line):\(mark.column): \(message)"
        guard let context else { return location }
        return "\(location) (\(context))"
    }
}
