// Large flat folders: a second thread fetches the stats of a big directory ahead of the thread judging it,
// and nothing in the plan may depend on whether it did. Also: statuses fetched ahead are exactly the ones a
// lone thread would have fetched, vanished entries included.
import Testing
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyModel
import TreeFixture

@Suite("Flat folders") struct FlatFolderTests {
    /// 20,000 entries in one folder with every kind of verdict: expired and fresh files under `keep: 5`,
    /// names to lowercase (some colliding on case), quota candidates, forbidden files, old subdirectories.
    static func flatTree() throws -> Tree {
        try Tree {
            Dir("flat") {
                for i in 0..<20_000 {
                    switch i % 4 {
                    case 0: File("old-\(i).dat", age: .days(Int64(2 + i % 7)))
                    case 1: File("new-\(i).dat", age: .hours(Int64(1 + i % 20)))
                    case 2:
                        File("Note-\(i).txt")
                        if i % 500 == 2 { File("note-\(i).txt") }
                    default:
                        if i % 1000 == 3 { File("x-\(i).sqlite", age: .days(1)) }
                        else { File("c-\(i).bin", age: .minutes(Int64(i % 5000)), size: 1000) }
                    }
                }
                for d in 0..<40 { Dir("d-\(d)", age: .days(d % 2 == 0 ? 5 : 0)) { File("in.dat", age: .days(3)) } }
            }
        }
    }

    static let rules = [
        rule("expiry", "flat", .expire(Expire(after: .days(1), keep: 5)), match: ["*.dat", "d-*"]),
        rule("lower", "flat", .naming(Naming(letterCase: .lower)), match: ["*.txt"]),
        rule("cache", "flat", .quota(Quota(max: ByteSize(bytes: 10_000_000), target: .percent(50))), match: ["*.bin"]),
        rule("no-db", "flat", .forbid(globs(["*.sqlite"]))),
    ]

    @Test("a 20,000-entry folder with mixed verdicts plans the same on one thread and on two")
    func sameOnOneAndTwoThreads() throws {
        let tree = try Self.flatTree()
        defer { tree.remove() }
        let one = try plan(tree, Self.rules, threads: 1)
        // The plan really holds every kind of verdict, so the comparison below means something.
        let kinds = Set(one.actions.map(\.kind.name))
        #expect(kinds.isSuperset(of: ["delete", "rename"]))
        #expect(one.actions.count > 5_000)
        #expect(one.findings.contains { $0.hasPrefix("lower: flat/Note-2.txt: differs only by case") })
        #expect((one.lines + one.findings).contains { $0.contains("flat/x-3.sqlite") })
        #expect(one.summary.entriesScanned >= 20_081)
        let expected = try one.jsonData()
        for _ in 0..<2 {
            #expect(try plan(tree, Self.rules, threads: 2).jsonData() == expected)
        }
    }

    /// A listing of `root/flat` with an `offer` that runs the helper at once, to the end, on this thread:
    /// the visiting thread then finds every later entry fetched ahead.
    static func listing(_ root: String, prefetch: Bool) throws -> (DirectoryListing, WalkDirectory) {
        let counter = WalkDirectory.Counter()
        let top = try WalkDirectory.open(root: root, counter: counter)
        let directory = try WalkDirectory.open(FileName("flat")!, in: top.descriptor, path: path("flat"), counter: counter)
        let listing = DirectoryListing()
        try listing.load(directory, skipStateDirectory: false)
        if prefetch { listing.offer = { task in task.run() } }
        return (listing, directory)
    }

    static func outcome(_ listing: DirectoryListing, _ i: Int) -> String {
        do {
            let s = try listing.status(i)
            return "\(s.inode) \(s.size) \(s.modificationTimeNs)"
        } catch {
            return "\(error.operation) \(error.path.escaped) \(error.errno)"
        }
    }

    @Test("statuses fetched ahead equal a lone thread's, for entries that vanished after the listing too")
    func prefetchedStatuses() throws {
        let tree = try Tree {
            Dir("flat") { for i in 0..<5_000 { File("f-\(i).dat") } }
        }
        defer { tree.remove() }
        let (plain, plainDirectory) = try Self.listing(tree.root, prefetch: false)
        let (ahead, aheadDirectory) = try Self.listing(tree.root, prefetch: true)
        defer { plain.endVisit(); ahead.endVisit(); _ = (plainDirectory, aheadDirectory) }
        #expect(plain.count == 5_000 && ahead.count == 5_000)
        // Every tenth file vanishes between the listing and the stats.
        for i in stride(from: 0, to: 5_000, by: 10) { #expect(unlink(tree.root + "/flat/f-\(i).dat") == 0) }
        var byName: [String: String] = [:]
        for i in 0..<plain.count { byName[String(decoding: plain.nameBytes(i), as: UTF8.self)] = Self.outcome(plain, i) }
        var vanished = 0
        for i in 0..<ahead.count {
            let name = String(decoding: ahead.nameBytes(i), as: UTF8.self)
            let got = Self.outcome(ahead, i)
            #expect(got == byName[name], "\(name)")
            if got.hasPrefix("fstatat") { vanished += 1 }
            // Fetched ahead or not, only what the visitor asked for counts as fetched.
            #expect(ahead.hasStatus(i) == plain.hasStatus(i))
        }
        #expect(vanished == 500)
    }

    @Test("a quota skips files moved out of its scope, and moves elsewhere leave another quota's count alone")
    func quotaAfterMoves() throws {
        let tree = try Tree {
            Dir(".Trash") {}
            Dir("cache") {
                File("a1.bin", age: .days(5), size: 4000)
                File("a2.bin", age: .days(4), size: 4000)
                File("a3.bin", age: .days(3), size: 4000)
                Dir("junk") { File("big.bin", age: .days(6), size: 40_000) }
            }
            Dir("other") {
                File("o1.bin", age: .days(5), size: 4000)
                File("o2.bin", age: .days(1), size: 4000)
            }
            Dir("Docs") { File("x.sqlite") }
        }
        defer { tree.remove() }
        let cacheUsed = ["cache/a1.bin", "cache/a2.bin", "cache/a3.bin"].reduce(0) { $0 + allocated(tree, $1) }
        let otherUsed = ["other/o1.bin", "other/o2.bin"].reduce(0) { $0 + allocated(tree, $1) }
        let rules = [
            rule("trash", ".Trash", .trash(TrashRetention(retain: .days(30)))),
            rule("no-junk", "cache", .forbid(globs(["junk"]))),
            rule("no-db", "Docs", .forbid(globs(["*.sqlite"]))),
            rule("q-cache", "cache", .quota(Quota(max: ByteSize(bytes: cacheUsed - 1), target: .percent(100)))),
            rule("q-other", "other", .quota(Quota(max: ByteSize(bytes: otherUsed - 1), target: .percent(100)))),
        ]
        let p = try plan(tree, rules)
        // cache/junk (the oldest and largest) is moved away: it neither counts nor is evicted.
        #expect(p.lines.filter { $0.hasPrefix("delete") } == ["delete cache/a1.bin", "delete other/o1.bin"])
        #expect(p.lines.contains { $0.hasPrefix("trash cache/junk -> ") })
        #expect(p.lines.contains { $0.hasPrefix("trash Docs/x.sqlite -> ") })
    }
}
