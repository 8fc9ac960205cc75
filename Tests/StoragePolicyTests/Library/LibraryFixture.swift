// Shared pieces of the library tests: the app-sandbox policy written in the DSL, a container tree to run
// it on, and custom rules. Builds trees only under /tmp through the Tree fixture; asserts nothing itself.
import StoragePolicy
import TreeFixture

enum LibraryFixture {
    static let packageRoot = String(#filePath).components(separatedBy: "/Tests/")[0]

    /// Policies/ios-app-sandbox.yaml, loaded as the CLI loads it.
    static func loadedSandboxPolicy() throws -> Policy {
        try PolicyLoader.load(contentsOf: packageRoot + "/Policies/ios-app-sandbox.yaml").policy
    }

    /// The same policy, stated in Swift.
    static func sandboxPolicyInSwift() throws -> Policy {
        try Policy("ios-app-sandbox", description: "Container layout, tmp expiry, download residue, trash retention, cache quota and naming.",
                   maxDelete: .percent(25, atLeast: 10)) {
            LayoutDirectory("Documents/UserFiles")
            LayoutDirectory("Documents/UserFiles/Download")
            LayoutDirectory("Documents/UserFiles/Import")
            LayoutDirectory("Documents/ExportTemp")
            LayoutDirectory("Library/Application Support/AppData")
            LayoutDirectory("Library/Caches/Thumbnails", excludeFromBackup: true, cacheTag: true)
            LayoutDirectory("Library/Caches/Downloading", excludeFromBackup: true)
            LayoutDirectory("tmp")
            Rule.expire("tmp-expiry", in: "tmp", after: .hours(24))
            Rule.expire("download-residue", in: "Documents", after: .hours(1)).matching("**/*.tmp", "**/*.download")
            Rule.expire("export-staging", in: "Documents/ExportTemp", after: .days(7))
            Rule.trash("trash-retention", in: "Documents/UserFiles/.Trash", retain: .days(30))
            Rule.quota("thumbnail-quota", in: "Library/Caches/Thumbnails", max: .mebibytes(512), target: .percent(90), evict: .oldest)
            Rule.expire("stale-partial-downloads", in: "Library/Caches/Downloading", after: .days(14))
            Rule.naming("lowercase-names", in: "Documents/UserFiles", case: .lower)
                .matching("**/*.[tT][xX][tT]", "**/*.[mM][dD]").excluding(".Trash/**")
            Rule.forbid("no-private-data-in-user-files", in: "Documents/UserFiles", "**/*.sqlite", "**/*.sqlite-wal", "**/*.sqlite-shm")
                .audit()
        }
    }

    /// An app container with something for every rule: expired scratch, download residue, a case problem,
    /// a private database in the user's folder, a missing layout directory and cache markers to set.
    static func sandboxTree() throws -> Tree {
        try Tree {
            Dir("tmp") {
                File("old.dat", age: .hours(30))
                File("fresh.dat", age: .hours(2))
                Dir("session", age: .days(3)) { File("s.bin", age: .days(3)) }
            }
            Dir("Documents") {
                Dir("UserFiles") {
                    File("Notes.TXT", age: .days(2))
                    File("readme.md", age: .days(2))
                    File("photo.jpg.download", age: .hours(3))
                    File("inflight.tmp", age: .minutes(10))
                    File("db.sqlite", age: .days(1))
                    Dir("Download") { File("Movie.MD", age: .days(1)) }
                }
                Dir("ExportTemp") { File("export-1.zip", age: .days(8)) }
            }
            Dir("Library") {
                Dir("Caches") {
                    Dir("Thumbnails") { File("t1.png", age: .days(1)) }
                }
            }
        }
    }
}

/// Deletes empty regular files older than `olderThan`: the custom rule the tests and the example share.
struct ZeroByteFiles: CustomRule {
    var olderThan: PolicyDuration
    var summary: String { "Empty files older than \(olderThan) are deleted." }

    func evaluate(_ entry: CustomRuleEntry) -> [CustomRuleVerdict] {
        guard entry.type == .regular, entry.size == 0, entry.isOlder(than: olderThan) else { return [] }
        return [.delete(reason: "zero bytes")]
    }
}
