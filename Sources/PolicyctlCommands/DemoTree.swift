// Builds the demo's app container: the DOMAIN.md layout with something for every rule of the bundled
// ios-app-sandbox policy to find. Writes only inside the folder it is given.
import Foundation
import StoragePolicy

struct DemoTree {
    let root: DirectoryHandle
    let now = system_time() * 1_000_000_000

    static let hour: Int64 = 3_600_000_000_000
    static let day: Int64 = 24 * hour

    /// Creates every file and returns how many entries it made.
    @discardableResult
    func build() throws -> Int {
        var count = 0
        func file(_ path: String, age: Int64, bytes: Int = 2048, allocate: Int64 = 0) throws {
            let p = RelativePath(path)!
            let dir = try directory(p.parent)
            let name = p.lastComponent!
            let fd = try dir.openFile(name, options: [.writeOnly, .create, .truncate])
            try fd.write([UInt8](repeating: 0x2E, count: bytes))
            if allocate > 0 { try fd.allocate(allocate) }
            try dir.setTimes(of: name, accessNs: now - age, modificationNs: now - age)
            count += 1
        }
        // tmp: scratch from yesterday and the day before (expired), and from this morning (kept).
        try file("tmp/upload-staging-1.dat", age: 2 * Self.day, bytes: 64 * 1024)
        try file("tmp/picker-copy-IMG_0042.heic", age: 30 * Self.hour, bytes: 256 * 1024)
        try file("tmp/session.lock", age: 2 * Self.hour)
        // Residue of dead downloads next to user files (old: swept; fresh: a transfer in flight, kept).
        try file("Documents/UserFiles/Download/lecture-07.pdf.tmp", age: 5 * Self.hour, bytes: 128 * 1024)
        try file("Documents/UserFiles/Download/podcast-12.mp3.download", age: 3 * Self.day, bytes: 512 * 1024)
        try file("Documents/UserFiles/Download/dataset.csv.tmp", age: Self.hour / 6, bytes: 32 * 1024)
        try file("Documents/UserFiles/Download/lecture-06.pdf", age: 8 * Self.day, bytes: 96 * 1024)
        // User files: two names with capitals (renamed), one already taken target, and a stray database.
        try file("Documents/UserFiles/Meeting Notes.TXT", age: 4 * Self.day)
        try file("Documents/UserFiles/Todo.txt", age: 1 * Self.day)
        try file("Documents/UserFiles/todo.txt", age: 1 * Self.day)
        try file("Documents/UserFiles/Import/readme.md", age: 10 * Self.day)
        try file("Documents/UserFiles/Notes.sqlite", age: 1 * Self.day, bytes: 8192)
        // Export staging from last month.
        try file("Documents/ExportTemp/export-2026-10.zip", age: 35 * Self.day, bytes: 64 * 1024)
        // Private state where it belongs.
        try file("Library/Application Support/AppData/library.sqlite", age: Self.hour, bytes: 16 * 1024)
        // Thumbnails: 34 x 16 MiB = 544 MiB allocated, over the 512 MiB quota; oldest go first.
        for i in 0..<34 {
            try file("Library/Caches/Thumbnails/thumb-\(String(format: "%03d", i)).jpg", age: Int64(34 - i) * Self.day, bytes: 0,
                     allocate: 16 << 20)
        }
        // A partial download abandoned three weeks ago.
        try file("Library/Caches/Downloading/video-88.part", age: 21 * Self.day, bytes: 256 * 1024)
        // The trash: one item trashed 40 days ago (emptied), one 3 days ago (kept).
        try file("Documents/UserFiles/.Trash/old-draft.txt", age: 60 * Self.day)
        try file("Documents/UserFiles/.Trash/recent-draft.txt", age: 60 * Self.day)
        let trash = try root.openDirectory(at: RelativePath("Documents/UserFiles/.Trash")!)
        try trash.setExtendedAttribute(Markers.trashStampAttribute, to: Array(String((now - 40 * Self.day) / 1_000_000_000).utf8),
                                       of: FileName("old-draft.txt")!)
        try trash.setExtendedAttribute(Markers.trashStampAttribute, to: Array(String((now - 3 * Self.day) / 1_000_000_000).utf8),
                                       of: FileName("recent-draft.txt")!)
        return count
    }

    /// Opens `path` under the root, creating missing directories on the way.
    private func directory(_ path: RelativePath) throws -> DirectoryHandle {
        var current = root
        for component in path.components {
            if try current.statusIfPresent(of: component) == nil {
                try current.makeDirectory(component)
            }
            current = try current.openDirectory(component)
        }
        return current
    }
}
