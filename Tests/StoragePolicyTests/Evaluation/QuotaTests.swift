// Quota eviction: allocated bytes as `du`, oldest (mtime) or least recently used (atime) first, ties by
// path, down to the target; files other rules delete do not count. Expected evictions worked out here.
import Testing
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyModel
import TreeFixture

@Suite("Quota") struct QuotaTests {
    /// Ten 10 kB files aged 1...10 days (mtime), with atimes in the opposite order.
    static func cache() throws -> Tree {
        try Tree {
            Dir("cache") {
                for d in 1...10 { File("f\(d).bin", age: .days(Int64(d)), atime: .days(Int64(11 - d)), size: 10_000) }
            }
        }
    }

    static func total(_ tree: Tree) -> Int64 { (1...10).reduce(Int64(0)) { $0 + allocated(tree, "cache/f\($1).bin") } }

    static func quota(_ max: Int64, target: Quota.Target = .percent(100), evict: Quota.Eviction = .oldest,
                      mode: Rule.Mode = .enforce) -> Rule {
        rule("cache-quota", "cache", .quota(Quota(max: ByteSize(bytes: max), target: target, evict: evict)), mode: mode)
    }

    @Test("exactly at the maximum nothing is evicted; one byte under it the oldest file goes")
    func boundary() throws {
        let tree = try Self.cache()
        defer { tree.remove() }
        let total = Self.total(tree)
        #expect(try plan(tree, [Self.quota(total)]).lines.isEmpty)
        let over = try plan(tree, [Self.quota(total - 1)])
        #expect(over.lines == ["delete cache/f10.bin"])
        #expect(over.actions[0].bytes == allocated(tree, "cache/f10.bin"))
        #expect(over.actions[0].reason == "quota: \(ByteSize.human(total)) used > \(ByteSize.human(total - 1)) max; oldest (mtime) first")
    }

    @Test("evicts oldest first until at or below the target")
    func target() throws {
        let tree = try Self.cache()
        defer { tree.remove() }
        let max = Self.total(tree) - 1
        let target = Int64((Double(max) * 0.5).rounded(.down))
        // Worked out here: drop the oldest until what is left fits the target.
        var left = Self.total(tree)
        var expected: [String] = []
        for d in stride(from: 10, through: 1, by: -1) where left > target {
            left -= allocated(tree, "cache/f\(d).bin")
            expected.append("delete cache/f\(d).bin")
        }
        let p = try plan(tree, [Self.quota(max, target: .percent(50))])
        #expect(p.lines == expected.sorted())
        #expect(expected.count == 6)
    }

    @Test("lru evicts by access time")
    func lru() throws {
        let tree = try Self.cache()
        defer { tree.remove() }
        let p = try plan(tree, [Self.quota(Self.total(tree) - 1, evict: .lru)])
        #expect(p.lines == ["delete cache/f1.bin"])  // accessed 10 days ago
    }

    @Test("ties break by path")
    func ties() throws {
        let tree = try Tree {
            Dir("cache") {
                File("b", age: .days(5), size: 10_000)
                File("a", age: .days(5), size: 10_000)
                File("c", age: .days(1), size: 10_000)
            }
        }
        defer { tree.remove() }
        let used = allocated(tree, "cache/a") + allocated(tree, "cache/b") + allocated(tree, "cache/c")
        #expect(try plan(tree, [Self.quota(used - 1)]).lines == ["delete cache/a"])
    }

    @Test("files another rule deletes do not count toward the quota")
    func expiredDoNotCount() throws {
        let tree = try Self.cache()
        defer { tree.remove() }
        // Without the expiry, one file over; with f10 expired, the rest fits.
        let rules = [rule("expiry", "cache", expire(.days(9))), Self.quota(Self.total(tree) - 1)]
        let p = try plan(tree, rules)
        #expect(p.lines == ["delete cache/f10.bin"])
        #expect(p.actions[0].rule == "expiry")
    }

    @Test("a file with other hard links counts once and is never evicted")
    func hardLinks() throws {
        let tree = try Tree {
            Dir("cache") {
                File("linked", age: .days(9), size: 10_000)
                HardLink("linked-too", to: "linked", age: .days(9))
                File("plain", age: .days(1), size: 10_000)
            }
        }
        defer { tree.remove() }
        let used = allocated(tree, "cache/linked") + allocated(tree, "cache/plain")
        let p = try plan(tree, [Self.quota(used - 1)])
        #expect(p.lines == ["delete cache/plain"])
    }

    @Test("audit mode reports the overrun at the scope")
    func audit() throws {
        let tree = try Self.cache()
        defer { tree.remove() }
        let total = Self.total(tree)
        let p = try plan(tree, [Self.quota(total - 1, mode: .audit)])
        #expect(p.actions.isEmpty)
        #expect(p.findings == ["cache-quota: cache: \(ByteSize.human(total)) used > \(ByteSize.human(total - 1)) max; would evict 1 files (\(ByteSize.human(allocated(tree, "cache/f10.bin")))) to reach \(ByteSize.human(total - 1))"])
    }
}
