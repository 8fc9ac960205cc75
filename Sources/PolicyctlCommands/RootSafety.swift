// Refuses roots no storage policy should run over by accident: `/`, the home directory itself, system
// directories. Used by every command that takes --root; --force-root is the only way past it.

enum RootSafety {
    /// Top-level system directories (Linux and macOS). Only these exact directories are refused: a
    /// folder inside one of them (/var/tmp, /var/cache/app) is a fine root.
    static let systemRoots: Set<String> = [
        "/", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/libx32", "/media", "/mnt",
        "/opt", "/proc", "/root", "/run", "/sbin", "/snap", "/srv", "/sys", "/usr", "/usr/bin", "/usr/lib",
        "/usr/local", "/usr/sbin", "/usr/share", "/var", "/var/lib", "/var/log",
        "/Applications", "/Library", "/System", "/Users", "/Volumes", "/private", "/private/etc", "/private/var",
    ]

    /// Why `root` is refused, or nil when it may be used. Symlinks are resolved first, so `/tmp/x -> /`
    /// is refused as `/`. A root that does not resolve is left for the command to report (exit 74).
    static func refusal(for root: String, environment home: String? = currentHome()) -> String? {
        guard let resolved = realPath(root) else { return nil }
        if resolved == "/" {
            return "refusing to use '/' as the root: a policy over the whole system is almost certainly a mistake"
        }
        if let home, let resolvedHome = realPath(home), resolved == resolvedHome {
            return "refusing to use the home directory '\(resolved)' itself as the root: point --root at a folder inside it"
        }
        if systemRoots.contains(resolved) {
            return "refusing to use the system directory '\(resolved)' as the root"
        }
        return nil
    }

    /// Throws a usage error (exit 64) unless `root` is acceptable or `force` is set.
    static func check(_ root: String, force: Bool, command: String) throws(UsageError) {
        guard !force, let why = refusal(for: root) else { return }
        throw UsageError(message: "\(why) (pass --force-root if you really mean it)", command: command)
    }

    static func currentHome() -> String? {
        system_getenv("HOME")
    }

    static func realPath(_ path: String) -> String? {
        system_realpath(path)
    }
}
