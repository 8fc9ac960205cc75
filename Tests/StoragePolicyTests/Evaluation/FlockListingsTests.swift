// A run's /proc/locks listings: a reading takes the newest listing begun within the bound, begins the next, and
// waits only when none such is made. Read from a fake proc folder whose `locks` the test rewrites, so what each
// reading saw is known exactly (an untrusted table, but its inodes are the ones listed).
import Foundation
@_spi(Layers) @testable import StoragePolicyFileSystem
import Testing
import TreeFixture

@Suite("in-use check: a run's /proc/locks listings")
struct FlockListingsTests {
    /// A fake proc folder listing a FLOCK on each of `inodes`.
    private final class FakeProc {
        let path = TestScratch.path("fake-proc-listings")
        init() { mkdir(path, 0o755) }
        deinit { unlink(path + "/locks"); rmdir(path) }
        func list(_ inodes: [UInt64]) throws {
            let text = inodes.enumerated().map { "\($0.offset + 1): FLOCK  ADVISORY  WRITE 1 08:01:\($0.element) 0 EOF\n" }.joined()
            try text.write(toFile: path + "/locks", atomically: true, encoding: .utf8)
        }
    }

    private static func inodes(_ table: FlockTable) -> Set<UInt64> {
        var out = Set<UInt64>()
        table.forEachInode { out.insert($0) }
        return out
    }

    @Test("a listing begun within the bound is taken again without a read; the one that reading began is taken once made")
    func reusedWithinTheBound() throws {
        let proc = FakeProc()
        try proc.list([7])
        let listings = FlockListings(proc: proc.path, freshness: .seconds(3600))
        // Nothing listed yet: the first reading waits for a listing begun for it.
        #expect(Self.inodes(listings.recent()) == [7])
        try proc.list([8])
        // The first listing (made before the rewrite: the first reading waited for it) is recent: taken as it is,
        // the file's new line unread for this reading ...
        #expect(Self.inodes(listings.recent()) == [7])
        // ... and the listing this reading began (after the rewrite) is taken once it is made.
        let deadline = ContinuousClock.now + .seconds(10)
        var seen: Set<UInt64> = []
        while ContinuousClock.now < deadline {
            seen = Self.inodes(listings.recent())
            if seen == [8] { break }
            usleep(1_000)
        }
        #expect(seen == [8])
    }

    @Test("with no listing begun within the bound, a reading waits for one begun for it: it sees the file as it is now")
    func staleListingNotTaken() throws {
        let proc = FakeProc()
        let listings = FlockListings(proc: proc.path, freshness: .zero)
        for inodes: [UInt64] in [[7], [8, 9], [], [10]] {
            try proc.list(inodes)
            #expect(Self.inodes(listings.recent()) == Set(inodes))
        }
    }

    @Test("a listing begun before the reading (as the plan's walk starts) is the one the reading takes")
    func beganBeforeTheReading() throws {
        let proc = FakeProc()
        try proc.list([7])
        let listings = FlockListings(proc: proc.path, freshness: .seconds(3600))
        listings.begin()
        #expect(Self.inodes(listings.recent()) == [7])
        // Not begun: the reading waits for its own.
        try proc.list([8])
        #expect(Self.inodes(FlockListings(proc: proc.path).recent()) == [8])
    }
}
