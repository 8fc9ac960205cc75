import Testing
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyModel

@Suite("Durations and sizes") struct UnitsTests {
    @Test("durations sum their units", arguments: [("90s", 90), ("24h", 86400), ("7d", 604800), ("1d12h", 129600), ("2w", 1209600), ("1m30s", 90)])
    func durations(text: String, seconds: Int64) {
        #expect(PolicyDuration(parsing: text)?.seconds == seconds)
    }

    @Test("malformed durations are refused", arguments: ["24 hours", "24", "h", "1h1h", "", "-1h", "1.5h", "99999999999999999999w"])
    func badDurations(text: String) {
        #expect(PolicyDuration(parsing: text) == nil)
    }

    @Test("sizes know SI and binary units", arguments: [("512KiB", 524288), ("1GB", 1_000_000_000), ("1.5GiB", 1_610_612_736), ("4096B", 4096), ("10", 10)])
    func sizes(text: String, bytes: Int64) {
        #expect(ByteSize(parsing: text)?.bytes == bytes)
    }

    @Test("malformed sizes are refused", arguments: ["1.5", "GiB", "-1MB", "1..5MB", "12 parsecs", "1e3KB"])
    func badSizes(text: String) {
        #expect(ByteSize(parsing: text) == nil)
    }

    @Test("durations print in their shortest form") func printing() {
        #expect(PolicyDuration(seconds: 129600).description == "1d12h")
        #expect(PolicyDuration.humanAge(nanoseconds: 183_600 * 1_000_000_000) == "2d3h")
    }
}
