// quota minAge and keep: protected files are never evicted; a unit exactly minAge old may be; when protection
// stops the total short of the target, the plan evicts what it may and reports the bytes still over.
import Testing
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyModel
import TreeFixture

@Suite("quota minAge and keep") struct QuotaProtectionTests {
    static func quota(_ max: Int64, minAge: PolicyDuration? = nil, keep: Int = 0) -> Rule {
        rule("q", "cache", .quota(Quota(max: ByteSize(bytes: max), target: .percent(50), minAge: minAge, keep: keep)))
    }

    /// The evictions (oldest first) that bring the total to the target when only files aged `from`...10 days may go.
    static func expected(_ tree: Tree, evictable: ClosedRange<Int>, target: Int64) -> (lines: [String], left: Int64) {
        var left = QuotaTests.total(tree)
        var lines: [String] = []
        for d in evictable.reversed() where left > target {
            left -= allocated(tree, "cache/f\(d).bin")
            lines.append("delete cache/f\(d).bin")
        }
        return (lines.sorted(), left)
    }

    @Test("a file exactly minAge old may be evicted; one second younger may not, and the shortfall is a violation")
    func minAgeBoundary() throws {
        let tree = try QuotaTests.cache()
        defer { tree.remove() }
        let max = QuotaTests.total(tree) - 1
        let target = Int64((Double(max) * 0.5).rounded(.down))
        let free = Self.expected(tree, evictable: 1...10, target: target)
        #expect(free.lines.count == 6)  // f5...f10
        let exact = try plan(tree, [Self.quota(max, minAge: .days(5))])
        #expect(exact.lines == free.lines)
        #expect(exact.violations.isEmpty)

        let over = try plan(tree, [Self.quota(max, minAge: PolicyDuration(seconds: 5 * 86400 + 1))])
        let short = Self.expected(tree, evictable: 6...10, target: target)
        #expect(over.lines == short.lines)
        #expect(short.left > target)
        #expect(over.violations.map(\.rule) == ["q"])
        #expect(over.violations.map(\.message) == ["quota not met: \(short.left - target) bytes (\(ByteSize.human(short.left - target))) still over the target of \(ByteSize.human(target)); minAge 5d1s protect 5 files"])
    }

    @Test("the keep newest files are never evicted: exactly N stay")
    func keepN() throws {
        let tree = try QuotaTests.cache()
        defer { tree.remove() }
        let max = QuotaTests.total(tree) - 1
        let target = Int64((Double(max) * 0.5).rounded(.down))
        // keep 4: f1...f4 stay; the 6 oldest are exactly what the target needs, so no violation.
        let four = try plan(tree, [Self.quota(max, keep: 4)])
        #expect(four.lines == Self.expected(tree, evictable: 1...10, target: target).lines)
        #expect(four.violations.isEmpty)
        // keep 8: only f9 and f10 may go.
        let eight = try plan(tree, [Self.quota(max, keep: 8)])
        #expect(eight.lines == ["delete cache/f10.bin", "delete cache/f9.bin"])
        let left = QuotaTests.total(tree) - allocated(tree, "cache/f10.bin") - allocated(tree, "cache/f9.bin")
        #expect(eight.violations.map(\.message) == ["quota not met: \(left - target) bytes (\(ByteSize.human(left - target))) still over the target of \(ByteSize.human(target)); keep 8 protect 8 files"])
        // The note names keep as the cause first (it used to blame only the hard links, which there are none of).
        #expect(eight.notes.contains { $0.hasPrefix("quota rule 'q': only ") && $0.hasSuffix("(keep 8 protect 8 files; files with several hard links are never evicted)") },
                "\(eight.notes)")
        // keep 10: nothing at all may go.
        #expect(try plan(tree, [Self.quota(max, keep: 10)]).lines == [])
    }

    @Test("the loader reads minAge and keep")
    func loader() throws {
        let yaml = "version: 1\nname: k\nrules:\n  - name: q\n    path: c\n    quota: { max: 1GiB, target: 90%, minAge: 1h, keep: 10 }\n"
        #expect(try PolicyLoader.load(yaml: yaml).policy.rules[0].kind
                == .quota(Quota(max: .gibibytes(1), target: .percent(90), minAge: .hours(1), keep: 10)))
    }
}
