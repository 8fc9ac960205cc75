// The one way a path given on a command line or in an API call becomes absolute: against the working
// directory, `.` parts and repeated slashes dropped, `..` kept. Plan fingerprints, the journal and the
// CLI all use it, so `./p.yaml` and `p.yaml` name the same policy everywhere.

/// Makes user-given paths absolute, lexically (``absolute(_:)``) or resolved (``canonical(_:)``).
package enum PathNormalization {
    /// `path` made absolute against the working directory, with `.` parts, repeated slashes and a trailing
    /// slash removed. `..` is kept: resolving it lexically could name a different directory through a symlink.
    /// When the working directory cannot be read, a relative path is only cleaned.
    package static func absolute(_ path: String) -> String {
        var full = path
        if !path.hasPrefix("/") {
            guard let cwd = workingDirectory else {
                let parts = path.split(separator: "/", omittingEmptySubsequences: true).filter { $0 != "." }
                return parts.isEmpty ? "." : parts.joined(separator: "/")
            }
            full = cwd + "/" + path
        }
        let parts = full.split(separator: "/", omittingEmptySubsequences: true).filter { $0 != "." }
        return "/" + parts.joined(separator: "/")
    }

    /// The canonical absolute path (realpath: symlinks and `..` resolved), as the journal and `.trashinfo`
    /// files record a root; the lexical ``absolute(_:)`` when it cannot be resolved (it does not exist).
    package static func canonical(_ path: String) -> String {
        guard let resolved = system_realpath(path, nil) else { return absolute(path) }
        defer { system_free(resolved) }
        return String(cString: resolved)
    }

    /// The current directory, or nil when it cannot be read (removed, or too long).
    package static var workingDirectory: String? {
        var buffer = [CChar](repeating: 0, count: Int(_PATH_MAX) + 1)
        guard system_getcwd(&buffer, buffer.count) != nil else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
