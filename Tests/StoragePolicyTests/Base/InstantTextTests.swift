// The instants --at takes: dates, minutes, seconds, fractions and offsets; impossible dates and missing zones refused.
import Testing
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem

@Suite("Instant text") struct InstantTextTests {
    @Test("the accepted forms, each to the same instant as its RFC 3339 spelling")
    func forms() {
        let midnight = WallClock.parseRFC3339("2027-01-01T00:00:00Z")!
        #expect(InstantText.nanoseconds("2027-01-01") == midnight)
        #expect(InstantText.nanoseconds("2027-01-01T00:00Z") == midnight)
        #expect(InstantText.nanoseconds("2027-01-01t00:00:00z") == midnight)
        #expect(InstantText.nanoseconds("2027-01-01T02:00+02:00") == midnight)
        #expect(InstantText.nanoseconds("2026-12-31T23:00:00-01:00") == midnight)
        #expect(InstantText.nanoseconds("2027-01-01T00:00:00.25Z") == midnight + 250_000_000)
    }

    @Test("impossible dates, missing zones and stray text are no instants")
    func refused() {
        for text in ["2027-02-30", "2027-13-01", "2027-01-01T00:00", "2027-01-01T24:00Z", "2027-01-01T00:00:00.Z",
                     "2027-01-01 00:00Z", "tomorrow", "", "2027-01-01T00:00Zx", "1969-12-31", "2027-01-01T00:00+2:00"] {
            #expect(InstantText.nanoseconds(text) == nil, "\(text)")
        }
    }
}
