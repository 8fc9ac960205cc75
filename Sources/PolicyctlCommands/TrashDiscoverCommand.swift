// `policyctl trash --discover`: the trash folders the FreeDesktop specification names, found as trash retention
// with `discover` would find them (TrashDiscovery in the library), and every place ignored with why. Read-only.
import StoragePolicy

extension TrashCommand {
    func runDiscover() throws -> ExitCode {
        let mounts = MountPoints.current()
        if mounts == nil { Terminal.err("note: the mount table (/proc/self/mountinfo) cannot be read: only the home trash is looked for") }
        let found = StorageEngine.discoverTrash(mountPoints: mounts ?? [], homeTrash: Self.homeTrash())
        if json {
            Terminal.out(bytes: try PrettyJSON.encode(found) + [0x0A])
        } else {
            for trash in found.found { Terminal.out("\(PrintableText.escapingControls(trash.path))\tuid \(trash.uid)\t\(trash.place.rawValue)") }
            if found.found.isEmpty { Terminal.out("No trash folder found.") }
        }
        // On stderr in both formats, so stdout stays the list (or clean JSON) for tools.
        for note in found.ignored { Terminal.err("note: \(PrintableText.escapingControls(note))") }
        return .success
    }

    /// The home trash: $XDG_DATA_HOME/Trash when XDG_DATA_HOME is an absolute path (the specification ignores a
    /// relative one), else ~/.local/share/Trash.
    static func homeTrash() -> String? {
        if let data = system_getenv("XDG_DATA_HOME"), data.hasPrefix("/") { return (data.hasSuffix("/") ? String(data.dropLast()) : data) + "/Trash" }
        guard let home = system_getenv("HOME"), home.hasPrefix("/") else { return nil }
        return (home.hasSuffix("/") ? String(home.dropLast()) : home) + "/.local/share/Trash"
    }
}
