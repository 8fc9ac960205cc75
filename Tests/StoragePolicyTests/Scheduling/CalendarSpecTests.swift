import Testing
@testable import StoragePolicy
@testable import StoragePolicyReports

@Suite("Calendar specifications") struct CalendarSpecTests {
    struct Parsed: Sendable, CustomStringConvertible {
        var text: String
        var weekdays: [Int]? = nil, months: [Int]? = nil, days: [Int]? = nil
        var hours: [Int]?, minutes: [Int]?, seconds: [Int]? = [0]
        var description: String { text }
    }

    static let accepted: [Parsed] = [
        Parsed(text: "daily", hours: [0], minutes: [0]),
        Parsed(text: "Daily", hours: [0], minutes: [0]),
        Parsed(text: "hourly", hours: nil, minutes: [0]),
        Parsed(text: "minutely", hours: nil, minutes: nil),
        Parsed(text: "weekly", weekdays: [1], hours: [0], minutes: [0]),
        Parsed(text: "monthly", days: [1], hours: [0], minutes: [0]),
        Parsed(text: "quarterly", months: [1, 4, 7, 10], days: [1], hours: [0], minutes: [0]),
        Parsed(text: "semiannually", months: [1, 7], days: [1], hours: [0], minutes: [0]),
        Parsed(text: "yearly", months: [1], days: [1], hours: [0], minutes: [0]),
        Parsed(text: "*-*-* 03:00:00", hours: [3], minutes: [0]),
        Parsed(text: "Mon..Fri 02:30", weekdays: [1, 2, 3, 4, 5], hours: [2], minutes: [30]),
        Parsed(text: "mon-fri 2:30", weekdays: [1, 2, 3, 4, 5], hours: [2], minutes: [30]),
        Parsed(text: "Sat,Sun 09:00", weekdays: [6, 7], hours: [9], minutes: [0]),
        Parsed(text: "Monday..Wednesday,Fri 1:00", weekdays: [1, 2, 3, 5], hours: [1], minutes: [0]),
        Parsed(text: "Mon", weekdays: [1], hours: [0], minutes: [0]),
        Parsed(text: "*-*-01 04:00", days: [1], hours: [4], minutes: [0]),
        Parsed(text: "*-*-1,15 04:00", days: [1, 15], hours: [4], minutes: [0]),
        Parsed(text: "2-29 03:00", months: [2], days: [29], hours: [3], minutes: [0]),
        Parsed(text: "*:0/15", hours: nil, minutes: [0, 15, 30, 45]),
        Parsed(text: "9..17:00", hours: Array(9...17), minutes: [0]),
        Parsed(text: "*-*-* 8..20/4:00", hours: [8, 12, 16, 20], minutes: [0]),
        Parsed(text: "0,12:00", hours: [0, 12], minutes: [0]),
        Parsed(text: "23:59:59", hours: [23], minutes: [59], seconds: [59]),
        Parsed(text: "*-*-* *:*:*", hours: nil, minutes: nil, seconds: nil),
        Parsed(text: "mon..fri,sat..sun 3:00", hours: [3], minutes: [0]),
    ]

    @Test("common forms parse into value sets", arguments: accepted)
    func parses(expected: Parsed) throws {
        let spec = try CalendarSpec(parsing: expected.text)
        #expect(spec.weekdays == expected.weekdays)
        #expect(spec.months == expected.months)
        #expect(spec.days == expected.days)
        #expect(spec.hours == expected.hours)
        #expect(spec.minutes == expected.minutes)
        #expect(spec.seconds == expected.seconds)
        #expect(spec.text == expected.text)
    }

    /// Refused here and by systemd alike.
    static let refused: [(String, String)] = [
        ("banana", "'banana' is not a weekday (Mon, Tue, Wed, Thu, Fri, Sat, Sun)"),
        ("", "it is empty"),
        ("Mon 3", "unexpected '3' (the order is weekdays, date, time; no time zones)"),
        ("24:00", "hour 24 is outside 0..23"),
        ("1:60", "minute 60 is outside 0..59"),
        ("*-13-01", "month 13 is outside 1..12"),
        ("*-*-32", "day 32 is outside 1..31"),
        ("Fri..Mon", "weekday range 'Fri..Mon' runs backwards (weeks run Mon..Sun)"),
        ("Sun..Sat", "weekday range 'Sun..Sat' runs backwards (weeks run Mon..Sun)"),
        ("Mo 3:00", "'Mo' is not a weekday (Mon, Tue, Wed, Thu, Fri, Sat, Sun)"),
        ("03:00 *-*-*", "unexpected '*-*-*' (the order is weekdays, date, time; no time zones)"),
        ("Mon Tue", "unexpected 'Tue' (the order is weekdays, date, time; no time zones)"),
        ("*-*-* 23..1:00", "hour range '23..1' runs backwards"),
        ("22/2:00", "'22/2' repeats past the last hour (23)"),
        ("*:0/60", "'0/60' repeats past the last minute (59)"),
        ("*-*-* 08:00/0", "'00/0' needs a repetition of at least 1 after '/'"),
        ("*-*-* 1,,2:00", "'' is not a valid hour (a number 0..23, or *)"),
        ("1:2:3:4", "'1:2:3:4' is not a time (HOUR:MINUTE[:SECOND])"),
        ("1969-01-01", "year 1969 is outside 1970..2199"),
        ("+3", "unexpected '+3' (the order is weekdays, date, time; no time zones)"),
    ]

    @Test("what systemd refuses is refused, with the reason and the accepted forms", arguments: refused)
    func refuses(text: String, reason: String) {
        #expect(throws: ScheduleError("invalid calendar '\(text)': \(reason); accepted forms: \(CalendarSpec.acceptedForms)")) {
            try CalendarSpec(parsing: text)
        }
    }

    /// Forms systemd takes that this validator refuses on purpose: time zones, fractions, last-day `~`,
    /// two-digit years and over-long numbers, which launchd and cron could not follow.
    static let stricterThanSystemd = ["03:00 UTC", "*-*-* 03:00:00.5", "*-*~1", "99-1-1", "003:00", "*-02-30"]

    @Test("forms beyond the common ones are refused too", arguments: stricterThanSystemd)
    func stricter(text: String) {
        #expect(throws: ScheduleError.self) { try CalendarSpec(parsing: text) }
    }

    @Test("cross-check: systemd-analyze accepts what this accepts and refuses what it refuses",
          .enabled(if: SchedulingFixture.hasSystemdAnalyze))
    func crossCheck() throws {
        for spec in Self.accepted.map(\.text) {
            let outcome = try SchedulingFixture.run(SchedulingFixture.systemdAnalyze, ["calendar", spec])
            #expect(outcome.status == 0, "systemd refuses '\(spec)': \(outcome.stderr)")
        }
        for (spec, _) in Self.refused {
            let outcome = try SchedulingFixture.run(SchedulingFixture.systemdAnalyze, ["calendar", spec])
            #expect(outcome.status != 0, "systemd accepts '\(spec)'")
        }
    }

    static let gapCases: [(String, Int64, Int64)] = [
        ("minutely", 60, 60), ("hourly", 3600, 3600), ("daily", 86400, 86400), ("weekly", 604800, 604800),
        ("Mon..Fri 02:30", 86400, 259200), ("9..17:00", 3600, 57600), ("0,12:00", 43200, 43200),
        ("monthly", 2419200, 2678400), ("2-29 03:00", 126230400, 126230400),
    ]

    @Test("gaps between runs: the shortest bounds the delay, the longest goes into the maximum age", arguments: gapCases)
    func gaps(text: String, shortest: Int64, longest: Int64) throws {
        let spec = try CalendarSpec(parsing: text)
        #expect(spec.shortestGap.seconds == shortest)
        #expect(spec.longestGap.seconds == longest)
    }

    @Test("day numbers and dates agree", arguments: [(0, 1970, 1, 1), (19723, 2024, 1, 1), (19782, 2024, 2, 29), (-1, 1969, 12, 31)])
    func civil(days: Int, year: Int, month: Int, day: Int) {
        #expect(CalendarSpec.daysSinceEpoch(year: year, month: month, day: day) == days)
        #expect(CalendarSpec.civilDate(daysSinceEpoch: days) == (year, month, day))
    }
}
