// Expiry rules over real temporary trees: boundaries, timestamps, directories that empty out, precedence.
// Every expected plan is written out by hand here, never computed by the engine.
import Testing
@testable import StoragePolicy

@Suite("Expire") struct ExpireTests {
    @Test("deletes files older than the limit and keeps the rest, at the exact boundary")
    func boundary() throws {
        let tree = try Tree {
            Dir("tmp") {
                File("old.dat", age: .hours(25))
                File("just-over.dat", age: .seconds(86401))
                File("exactly.dat", age: .seconds(86400))
                File("just-under.dat", age: .seconds(86399))
                File("new.dat", age: .hours(1))
            }
            File("outside.dat", age: .days(30))
        }
        defer { tree.remove() }
        let p = try plan(tree, [rule("tmp-expiry", "tmp", expire(.hours(24)))])
        #expect(p.lines == ["delete tmp/just-over.dat", "delete tmp/old.dat"])
        #expect(p.violations.isEmpty)
        #expect(p.summary.entriesScanned == 7)
        let old = try #require(p.actions.first { $0.path == path("tmp/old.dat") })
        #expect(old.reason == "mtime 1d1h ago > 1d")
        #expect(old.bytes == 4096)
        #expect(old.identity?.size == 100)
    }
}
