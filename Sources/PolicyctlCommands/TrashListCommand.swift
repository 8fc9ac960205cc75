// `policyctl trash --list`: what a trash folder holds, as TrashListing reads it (origins only from trusted
// records, sizes from a trusted directorysizes cache while current, else measured). Text: one tab-separated line
// per item; `--format json`: one object, the exact bytes of a name or path that is not UTF-8 also in base64.
import StoragePolicy

extension TrashCommand {
    func runList(_ folder: RelativePath, layout: TrashRetention.Layout, session: StorageEngine.Session,
                 printer: ApplyEventPrinter) throws -> ExitCode {
        let entries: [TrashedItem]
        do { entries = try StorageEngine.trashItems(in: folder, layout: layout, session: session, events: printer.render) }
        catch { throw try failure(error, printer) }
        if json {
            Terminal.out(bytes: try PrettyJSON.encode(TrashListJSON(folder: folder, entries)) + [0x0A])
            return .success
        }
        if entries.isEmpty { Terminal.out("The trash folder \(folder.escaped) is empty.") }
        for e in entries {
            Terminal.out("\(e.name.escaped)\t\(e.trashedAt ?? "-")\t\(e.size.map(String.init) ?? "-")\t\(e.original?.escaped ?? "(origin unknown)")")
        }
        return .success
    }
}

/// `trash --list --format json`, documented in Docs/policy-reference.md ("Listing the trash").
struct TrashListJSON: Encodable {
    struct Item: Encodable {
        /// The name in the trash, what `--restore` takes (lossless text; `nameBase64` holds the bytes when not UTF-8).
        var name: String
        var nameBase64: String?
        /// RFC 3339 in UTC, or nil when no readable record dates it.
        var trashedAt: String?
        /// Root-relative, from a trusted record only; nil when unknown.
        var originalPath: String?
        var originalPathBase64: String?
        /// `regular`, `directory`, `symlink`...
        var type: String
        /// Bytes; nil when a folder could not be measured.
        var size: Int64?
    }
    var folder: String
    var items: [Item]

    init(folder: RelativePath, _ entries: [TrashedItem]) {
        self.folder = folder.isRoot ? "." : folder.string
        items = entries.map { e in
            Item(name: String(decoding: e.name.bytes, as: UTF8.self),
                 nameBase64: e.name.isValidUTF8 ? nil : RelativePath(unchecked: e.name.bytes).base64,
                 trashedAt: e.trashedAtNs.map { WallClock.rfc3339(ns: $0) },
                 originalPath: e.original?.string,
                 originalPathBase64: e.original.flatMap { $0.isValidUTF8 ? nil : $0.base64 },
                 type: e.type.rawValue, size: e.size)
        }
    }
}

extension TrashListJSON.Item {
    // nil fields are written as null (not left out), so every item has every key but the base64 ones.
    func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(name, forKey: .name)
        try c.encodeIfPresent(nameBase64, forKey: .nameBase64)
        try c.encode(trashedAt, forKey: .trashedAt)
        try c.encode(originalPath, forKey: .originalPath)
        try c.encodeIfPresent(originalPathBase64, forKey: .originalPathBase64)
        try c.encode(type, forKey: .type)
        try c.encode(size, forKey: .size)
    }
    enum Keys: String, CodingKey { case name, nameBase64, trashedAt, originalPath, originalPathBase64, type, size }
}
