// A media library's policy in Swift: `policyctl plan --policy media-library.swift --root /srv/media`.
// policyctl compiles this file once against its library (cached; see Docs/scripting.md) and runs it with
// the same commands, output, exit codes, journal and lock as a YAML policy. Everything the YAML language
// has is here as the DSL (Layout, Rule.expire, Rule.trash, ...); a custom rule adds what YAML cannot say.
import StoragePolicy

/// Sidecar files (.xmp edits, .thm previews, .aae adjustments) whose photo or video is gone: they describe
/// nothing any more. YAML matches names, but cannot ask "does the file next to this one exist?".
struct OrphanedSidecars: CustomRule {
    /// The extensions of the files a sidecar belongs to, lowercase and upper.
    var media = ["jpg", "jpeg", "heic", "png", "dng", "cr3", "nef", "mov", "mp4"]
    /// A sidecar younger than this is kept: the import that brings its photo may still be running.
    var grace: PolicyDuration = .days(1)

    var summary: String { "A .xmp, .thm or .aae file without its photo or video (older than \(grace)) is deleted." }

    func evaluate(_ entry: CustomRuleEntry) -> [CustomRuleVerdict] {
        guard entry.type == .regular, entry.isOlder(than: grace) else { return [] }
        let name = entry.name.escaped
        guard let dot = name.lastIndex(of: ".") else { return [] }
        let stem = String(name[..<dot])
        // Both IMG_0001.xmp and IMG_0001.jpg.xmp name their photo.
        let hasOwner = media.contains { ext in
            entry.hasSibling(named: "\(stem).\(ext)") || entry.hasSibling(named: "\(stem).\(ext.uppercased())")
        } || (stem.contains(".") && entry.hasSibling(named: stem))
        return hasOwner ? [] : [.delete(reason: "sidecar without its photo or video")]
    }
}

// The policy: `policy` is what policyctl runs. A `let` stops the program if the policy fails its checks
// (a bad glob, a path with '..'); write `func policy() throws -> Policy { try Policy(...) }` instead to get
// every problem listed and exit 65, as for a YAML policy.
let policy = try Policy("media-library", maxDelete: .percent(10)) {
    LayoutDirectory("Photos")
    LayoutDirectory("Imports")
    LayoutDirectory("Cache/Thumbnails", excludeFromBackup: true, cacheTag: true)
    Rule.custom("orphaned-sidecars", in: "Photos", OrphanedSidecars()).matching("**/*.xmp", "**/*.XMP", "**/*.thm", "**/*.THM", "**/*.aae", "**/*.AAE")
    Rule.expire("import-residue", in: "Imports", after: .days(7)).matching("**/*.part", "**/.DS_Store")
    Rule.quota("thumbnail-quota", in: "Cache/Thumbnails", max: .gibibytes(2), target: .percent(80))
}
