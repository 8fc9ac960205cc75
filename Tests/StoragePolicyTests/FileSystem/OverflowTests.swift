// Numbers a co-tenant or a policy author controls: file timestamps at ±2^63 seconds, durations and sizes past
// Int64. Every conversion saturates or refuses, never traps; a clamped time is flagged so nothing judges by it.
import TreeFixture
import Testing
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyModel

@Suite("Overflow-safe times, durations and sizes") struct OverflowTests {
    @Test("a file's seconds outside nanosecond range are clamped and flagged; in range they are exact",
          arguments: [
            (Int64.max, 0, Int64.max, true), (Int64.min, 0, Int64.min, true),
            (9_223_372_037, 0, Int64.max, true), (-9_223_372_037, 0, Int64.min, true),
            (9_223_372_036, 854_775_807, Int64.max, false), (9_223_372_036, 854_775_808, Int64.max, true),
            (1_700_000_000, 5, 1_700_000_000_000_000_005, false), (-1, 999_999_999, -1, false),
          ] as [(Int64, Int64, Int64, Bool)])
    func timestamps(seconds: Int64, nanoseconds: Int64, expected: Int64, clamped: Bool) {
        let r = FileStatus.nanoseconds(seconds, nanoseconds)
        #expect(r.ns == expected)
        #expect(r.clamped == clamped)
    }

    @Test("allocated bytes saturate instead of overflowing st_blocks * 512")
    func blocks() {
        #expect(FileStatus.bytes(blocks: 8) == 4096)
        #expect(FileStatus.bytes(blocks: UInt64.max) == Int64.max)
        #expect(FileStatus.bytes(blocks: UInt64(Int64.max / 512) + 1) == Int64.max)
    }

    @Test("a duration past 292 years saturates in nanoseconds: it never expires anything, and nothing traps")
    func durations() throws {
        let long = try #require(PolicyDuration(parsing: "200000d"))
        #expect(long.seconds == 17_280_000_000)
        #expect(long.nanoseconds == Int64.max)
        #expect(PolicyDuration(parsing: "9999999999999999d") == nil)
        #expect(PolicyDuration(parsing: "9223372036854775807s")?.nanoseconds == Int64.max)
        #expect(PolicyDuration.days(Int64.max).seconds == Int64.max)
        #expect(PolicyDuration.weeks(Int64.min).seconds == Int64.min)
        #expect(PolicyDuration(seconds: Int64.min).description.hasPrefix("-"))
        #expect(!Ages.isOlder(Int64.min, than: long, now: 1_800_000_000_000_000_000))
    }

    @Test("ages of clamped times read as the farthest past or future, never trap")
    func ages() {
        let now: Int64 = 1_800_000_000_000_000_000
        let limit = PolicyDuration.days(1)
        #expect(Ages.age(of: Int64.min, now: now) == Int64.max)
        #expect(Ages.age(of: Int64.max, now: -now) == Int64.min)
        #expect(Ages.describe("mtime", Int64.min, limit: limit, now: now) == "mtime 106751d23h ago > 1d")
        #expect(Ages.describe("mtime", Int64.max, limit: limit, now: -now) == "mtime 106751d23h in the future")
        #expect(!Ages.isOlder(Int64.max, than: limit, now: now))
        #expect(!Ages.isOlder(Int64.min, than: limit, now: now), "an age past Int64 is not judged old")
    }

    @Test("policies with durations or sizes past Int64 are refused as invalid")
    func policies() throws {
        let header = "version: 1\nname: p\nrules:\n"
        for body in ["  - {name: r, path: t, expire: { after: 9999999999999999d }}\n",
                     "  - {name: r, path: t, quota: { max: 99999999999TiB }}\n"] {
            #expect(throws: (any Error).self) { _ = try PolicyLoader.load(yaml: header + body, file: "p.yaml") }
        }
        let policy = try PolicyLoader.load(yaml: header + "  - {name: r, path: t, expire: { after: 200000d }}\n").policy
        #expect(policy.rules.count == 1)
    }
}

@Suite("Setting times") struct EntryTimesTests {
    @Test("any nanosecond count converts to a valid timespec, times before 1970 included", arguments: [
        (Int64(0), 0, 0), (1_500_000_000_123, 1500, 123), (-1, -1, 999_999_999), (-1_000_000_000, -1, 0),
        (Int64.max, 9_223_372_036, 854_775_807), (Int64.min, -9_223_372_037, 145_224_192),
    ] as [(Int64, Int, Int)])
    func spec(ns: Int64, seconds: Int, nanoseconds: Int) {
        let t = EntryTimes.spec(ns)
        #expect(t.tv_sec == seconds)
        #expect(t.tv_nsec == nanoseconds)
    }
}
