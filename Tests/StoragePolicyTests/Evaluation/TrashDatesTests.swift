// The .trashinfo reader and the trash stamp parser on their own: each accepted DeletionDate form pinned
// (the documented ones), impossible calendar dates and times outside 64-bit nanoseconds refused, never a trap.
import Testing
@testable import StoragePolicy
@testable import StoragePolicyEvaluation
import TreeFixture

@Suite("Trash dates")
struct TrashDatesTests {
    static func info(_ body: String) -> [UInt8] { Array(body.utf8) }
    static let noon: Int64 = 1_677_672_000 * 1_000_000_000  // 2023-03-01T12:00:00Z

    @Test("the documented DeletionDate forms: a zone (Z, +02:00, +0200, -05:30) and fractional seconds", arguments: [
        ("2023-03-01T12:00:00Z", noon),
        ("2023-03-01T12:00:00.250Z", noon + 250_000_000),
        ("2023-03-01T12:00:00.123456789Z", noon + 123_456_789),
        ("2023-03-01T12:00:00.1234567891Z", noon + 123_456_789),  // beyond nanoseconds: cut, not rounded
        ("2023-03-01T14:00:00+02:00", noon),
        ("2023-03-01T14:00:00+0200", noon),
        ("2023-03-01T06:30:00-05:30", noon),
        ("2023-03-01T14:00:00.5+02:00", noon + 500_000_000),
        ("2024-02-29T00:00:00Z", 1_709_164_800 * 1_000_000_000),  // a leap day
        ("2000-02-29T00:00:00Z", 951_782_400 * 1_000_000_000),  // divisible by 400: a leap year
        ("2262-04-11T23:47:16Z", 9_223_372_036 * 1_000_000_000),  // the last whole second 64 bits hold
    ] as [(String, Int64)])
    func zonedForms(text: String, expected: Int64) {
        #expect(TrashDates.parseDate(Array(text.utf8)) == expected)
        #expect(TrashDates.read(trashInfo: Self.info("[Trash Info]\nPath=/x\nDeletionDate=\(text)\n")) == .date(expected))
    }

    @Test("the spec's form is local time; a fraction is kept")
    func localForm() {
        let now = Tree.currentTimeNs() / 1_000_000_000 * 1_000_000_000
        let text = TrashTests.localDate(now, minus: .seconds(0))
        #expect(TrashDates.parseDate(Array(text.utf8)) == now)
        #expect(TrashDates.parseDate(Array((text + ".250").utf8)) == now + 250_000_000)
    }

    @Test("impossible calendar dates and times are unreadable, never rolled over", arguments: [
        "2023-02-30T00:00:00", "2023-02-29T00:00:00", "1900-02-29T00:00:00Z", "2023-04-31T00:00:00", "2023-06-31T12:00:00Z",
        "2023-00-10T00:00:00", "2023-13-01T00:00:00", "2023-01-00T00:00:00", "2023-01-32T00:00:00",
        "2023-01-01T24:00:00", "2023-01-01T12:60:00", "2023-01-01T12:00:60", "2023-01-01T12:00:00+24:00",
        "2023-01-01T12:00:00+02:60", "2023-01-01T12:00:00.", "2023-01-01T12:00:00Y", "2023-01-01 12:00:00",
        "2023-1-01T12:00:00", "2023-01-01T12:00", "+023-01-01T12:00:00", "2023-01-01T12:00:00Z ", "",
    ])
    func impossible(text: String) {
        #expect(TrashDates.parseDate(Array(text.utf8)) == nil)
        #expect(TrashDates.read(trashInfo: Self.info("[Trash Info]\nDeletionDate=\(text)\n")) == .unreadable(Array(text.utf8)))
    }

    @Test("dates 64-bit nanoseconds cannot hold are unreadable, not a trap", arguments: [
        "2262-04-11T23:47:17Z", "2262-04-12T00:00:00", "9999-12-31T23:59:59", "9999-12-31T23:59:59.999999999Z",
        "1677-09-21T00:12:43Z", "1677-09-20T00:00:00", "0000-01-01T00:00:00", "0000-01-01T00:00:00+23:59",
    ])
    func outOfRange(text: String) {
        #expect(TrashDates.parseDate(Array(text.utf8)) == nil)
    }

    @Test("the [Trash Info] header rule: only the first DeletionDate inside that group counts")
    func headerRule() {
        let d = "DeletionDate=2023-03-01T12:00:00Z"
        #expect(TrashDates.read(trashInfo: Self.info("\(d)\n")) == .missing)  // no header at all
        #expect(TrashDates.read(trashInfo: Self.info("\(d)\n[Trash Info]\nPath=/x\n")) == .missing)  // before it
        #expect(TrashDates.read(trashInfo: Self.info("[Other]\n\(d)\n")) == .missing)
        #expect(TrashDates.read(trashInfo: Self.info("[Trash Info]\n[Other]\n\(d)\n")) == .missing)
        #expect(TrashDates.read(trashInfo: Self.info("[trash info]\n\(d)\n")) == .missing)  // case matters
        #expect(TrashDates.read(trashInfo: Self.info("[Trash Info]\r\n\(d)\r\n")) == .date(Self.noon))  // CRLF
        #expect(TrashDates.read(trashInfo: Self.info("[Other]\nx=1\n[Trash Info]\n\(d)\nDeletionDate=junk\n")) == .date(Self.noon))
        #expect(TrashDates.read(trashInfo: Self.info("[Trash Info]\nDeletionDate=junk\n\(d)\n")) == .unreadable(Array("junk".utf8)))
        #expect(TrashDates.read(trashInfo: Self.info("[Trash Info]\nDeletionDate =2023-03-01T12:00:00Z\n")) == .missing)
        #expect(TrashDates.read(trashInfo: []) == .missing)
        #expect(TrashDates.read(trashInfo: [0xFF, 0x0A, 0x5B]) == .missing)
    }

    @Test("the reasons a report gives for a .trashinfo without a date")
    func problems() {
        #expect(TrashDates.Reading.missing.problem == "has no DeletionDate in a [Trash Info] group")
        #expect(TrashDates.Reading.unreadable(Array("2023-02-30T00:00:00".utf8)).problem
                == "has no readable DeletionDate ('2023-02-30T00:00:00' is not a valid time)")
        #expect(TrashDates.Reading.unreadable([0x1B, 0x5B, 0x32, 0x4A]).problem == "has no readable DeletionDate ('\\x1b[2J' is not a valid time)")
        #expect(TrashDates.Reading.date(0).problem == nil)
    }

    @Test("the trash stamp: whole or fractional seconds; anything else, or out of range, is no time", arguments: [
        ("1700000000", Int64(1_700_000_000) * 1_000_000_000), ("1700000000.5", Int64(1_700_000_000) * 1_000_000_000 + 500_000_000),
        ("1700000000\n", Int64(1_700_000_000) * 1_000_000_000), ("0", 0),
        ("9223372036", 9_223_372_036 * 1_000_000_000), ("9223372036.854775807", Int64.max),
        ("9223372036.854775808", nil), ("9223372037", nil), ("99999999999", nil), ("99999999999999999999999", nil),
        ("-5", nil), ("", nil), (".5", nil), ("1.2.3", nil), ("soon", nil), ("1e9", nil),
    ] as [(String, Int64?)])
    func stamps(text: String, expected: Int64?) {
        #expect(TrashDates.stamp(Array(text.utf8)) == expected)
    }
}
