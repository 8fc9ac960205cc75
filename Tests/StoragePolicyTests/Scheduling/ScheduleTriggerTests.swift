import Testing
@testable import StoragePolicy
@testable import StoragePolicyReports

@Suite("--every and --on") struct ScheduleTriggerTests {
    @Test("intervals are policy durations of at least a minute", arguments: [("1m", 60), ("15m", 900), ("6h", 21600), ("1d", 86400), ("1d12h", 129600), ("2w", 1209600)])
    func every(text: String, seconds: Int64) throws {
        #expect(try ScheduleTrigger(every: text) == .every(.seconds(seconds)))
    }

    @Test("bad intervals are refused with the accepted forms", arguments: [
        ("banana", "invalid interval 'banana' for --every: expected a number followed by a unit s, m, h, d or w, summed without spaces (90s, 24h, 7d, 1d12h, 2w)"),
        ("24 hours", "invalid interval '24 hours' for --every: expected a number followed by a unit s, m, h, d or w, summed without spaces (90s, 24h, 7d, 1d12h, 2w)"),
        ("0s", "interval '0s' for --every is too short: it must be at least 1m (e.g. 15m, 1h, 1d)"),
        ("59s", "interval '59s' for --every is too short: it must be at least 1m (e.g. 15m, 1h, 1d)"),
    ])
    func badEvery(text: String, message: String) {
        #expect(throws: ScheduleError(message)) { try ScheduleTrigger(every: text) }
    }

    @Test("randomized delay: a tenth of the shortest gap, at most an hour; accuracy at most a minute", arguments: [
        ("1d", 3600, 60), ("1h", 360, 60), ("15m", 90, 60), ("5m", 30, 30), ("1m", 6, 6),
    ])
    func delays(text: String, delay: Int64, accuracy: Int64) throws {
        let trigger = try ScheduleTrigger(every: text)
        #expect(trigger.randomizedDelay.seconds == delay)
        #expect(trigger.accuracy.seconds == accuracy)
    }

    @Test("a calendar's delay follows its shortest gap")
    func calendarDelay() throws {
        #expect(try ScheduleTrigger(calendar: "0,1:00").randomizedDelay == .minutes(6))
        #expect(try ScheduleTrigger(calendar: "Mon..Fri 02:30").longestGap == .days(3))
        #expect(try ScheduleTrigger(calendar: "Mon..Fri 02:30").description == "on Mon..Fri 02:30")
        #expect(try ScheduleTrigger(every: "1d").description == "every 1d")
    }
}
