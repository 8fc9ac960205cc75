// The common forms of systemd's calendar syntax (`daily`, `Mon..Fri 02:30`, `*-*-01 04:00`, `*:0/15`), parsed
// into value sets so launchd and cron can be given the same times. Never accepts what systemd would refuse.

@_spi(Layers) import StoragePolicyModel

package struct CalendarSpec: Sendable, Hashable, CustomStringConvertible {
    /// The specification as given (whitespace collapsed): what `OnCalendar=` is written with.
    package let text: String
    /// Each field's values in ascending order; nil means every value (`*`).
    /// Weekdays count 1 (Monday) to 7 (Sunday), as systemd orders them.
    package private(set) var weekdays: [Int]?
    package private(set) var years: [Int]?
    package private(set) var months: [Int]?
    package private(set) var days: [Int]?
    package private(set) var hours: [Int]?
    package private(set) var minutes: [Int]?
    package private(set) var seconds: [Int]?

    package var description: String { text }

    package static let acceptedForms = """
        minutely, hourly, daily, weekly, monthly, quarterly, semiannually, yearly (or annually); \
        or [WEEKDAYS] [YEAR-MONTH-DAY] [HOUR:MINUTE[:SECOND]] as systemd.time(7) writes them, e.g. \
        'Mon..Fri 02:30', 'Sat,Sun 09:00', '*-*-* 03:00:00', '*-*-01 04:00', '*:0/15', '9..17:00'; \
        weekdays Mon..Sun (full names too) with ',' and '..'; every other field '*', numbers, \
        ',' lists, 'A..B' ranges and 'A/STEP' repetitions (no time zones, fractions or '~')
        """

    private static let shorthands: [String: String] = [
        "minutely": "*-*-* *:*:00", "hourly": "*-*-* *:00:00", "daily": "*-*-* 00:00:00",
        "weekly": "Mon *-*-* 00:00:00", "monthly": "*-*-01 00:00:00", "yearly": "*-01-01 00:00:00",
        "annually": "*-01-01 00:00:00", "quarterly": "*-01,04,07,10-01 00:00:00",
        "semiannually": "*-01,07-01 00:00:00",
    ]

    private static let weekdayNames = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
    private static let weekdayFullNames = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]

    package init(parsing input: String) throws(ScheduleError) {
        let words = input.split(whereSeparator: { $0 == " " || $0 == "\t" })
        text = words.joined(separator: " ")
        func refuse(_ why: String) -> ScheduleError {
            ScheduleError("invalid calendar '\(input)': \(why); accepted forms: \(CalendarSpec.acceptedForms)")
        }
        guard !words.isEmpty else { throw refuse("it is empty") }
        var rest = words[...]
        if words.count == 1, let expanded = CalendarSpec.shorthands[words[0].lowercased()] {
            rest = expanded.split(separator: " ")[...]
        }
        var sawDate = false, sawTime = false, sawWeekdays = false
        if let word = rest.first, word.first!.isLetter {
            weekdays = try CalendarSpec.weekdays(word, refuse)
            sawWeekdays = true
            rest.removeFirst()
        }
        if let word = rest.first, word.contains("-"), !word.contains(":") {
            let parts = word.split(separator: "-", omittingEmptySubsequences: false)
            guard parts.count == 2 || parts.count == 3 else { throw refuse("'\(word)' is not a date (YEAR-MONTH-DAY or MONTH-DAY)") }
            if parts.count == 3 { years = try CalendarSpec.field(parts[0], 1970...2199, "year", refuse, digits: 4...4) }
            months = try CalendarSpec.field(parts[parts.count - 2], 1...12, "month", refuse)
            days = try CalendarSpec.field(parts[parts.count - 1], 1...31, "day", refuse)
            sawDate = true
            rest.removeFirst()
        }
        if let word = rest.first, word.contains(":") {
            let parts = word.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2 || parts.count == 3 else { throw refuse("'\(word)' is not a time (HOUR:MINUTE[:SECOND])") }
            hours = try CalendarSpec.field(parts[0], 0...23, "hour", refuse)
            minutes = try CalendarSpec.field(parts[1], 0...59, "minute", refuse)
            seconds = parts.count == 3 ? try CalendarSpec.field(parts[2], 0...59, "second", refuse) : [0]
            sawTime = true
            rest.removeFirst()
        }
        if let word = rest.first {
            throw refuse("unexpected '\(word)' (the order is weekdays, date, time; no time zones)")
        }
        guard sawWeekdays || sawDate || sawTime else { throw refuse("it names no time") }
        if !sawTime { hours = [0]; minutes = [0]; seconds = [0] }
        try measureGaps(refuse)
    }

    /// `Mon..Fri`, `Sat,Sun`, `mon-fri`, `Monday`: ranges run Monday to Sunday, never wrapping.
    private static func weekdays(_ word: Substring, _ refuse: (String) -> ScheduleError) throws(ScheduleError) -> [Int]? {
        func day(_ name: Substring) throws(ScheduleError) -> Int {
            let lower = name.lowercased()
            if let i = weekdayNames.firstIndex(of: lower) ?? weekdayFullNames.firstIndex(of: lower) { return i + 1 }
            throw refuse("'\(name)' is not a weekday (Mon, Tue, Wed, Thu, Fri, Sat, Sun)")
        }
        var set = Set<Int>()
        for item in word.split(separator: ",", omittingEmptySubsequences: false) {
            let bounds: [Substring]
            if let r = item.range(of: "..") {
                bounds = [item[..<r.lowerBound], item[r.upperBound...]]
            } else {
                bounds = item.split(separator: "-", omittingEmptySubsequences: false)
            }
            guard bounds.count == 1 || bounds.count == 2 else { throw refuse("'\(item)' is not a weekday range") }
            let first = try day(bounds[0]), last = try day(bounds[bounds.count - 1])
            guard first <= last else { throw refuse("weekday range '\(item)' runs backwards (weeks run Mon..Sun)") }
            set.formUnion(first...last)
        }
        return set.count == 7 ? nil : set.sorted()
    }

    /// `*`, or a `,` list of `N`, `A..B`, `A..B/STEP` and `A/STEP` (A, A+STEP, ... up to the field's end;
    /// systemd wants A+STEP inside the field).
    private static func field(_ text: Substring, _ range: ClosedRange<Int>, _ name: String,
                              _ refuse: (String) -> ScheduleError, digits: ClosedRange<Int> = 1...2) throws(ScheduleError) -> [Int]? {
        if text == "*" { return nil }
        func number(_ s: Substring) throws(ScheduleError) -> Int {
            guard digits.contains(s.count), s.allSatisfy(\.isASCII), s.allSatisfy(\.isNumber), let n = Int(s) else {
                throw refuse("'\(s)' is not a valid \(name) (\(digits.lowerBound == 4 ? "four digits" : "a number") \(range.lowerBound)..\(range.upperBound), or *)")
            }
            guard range.contains(n) else { throw refuse("\(name) \(n) is outside \(range.lowerBound)..\(range.upperBound)") }
            return n
        }
        var values = Set<Int>()
        for item in text.split(separator: ",", omittingEmptySubsequences: false) {
            var body = item
            var step: Int?
            if let slash = item.firstIndex(of: "/") {
                body = item[..<slash]
                let stepText = item[item.index(after: slash)...]
                guard let s = Int(stepText), s >= 1, stepText.allSatisfy(\.isNumber) else {
                    throw refuse("'\(item)' needs a repetition of at least 1 after '/'")
                }
                step = s
            }
            let low: Int, high: Int
            if let r = body.range(of: "..") {
                low = try number(body[..<r.lowerBound])
                high = try number(body[r.upperBound...])
                guard low <= high else { throw refuse("\(name) range '\(body)' runs backwards") }
            } else {
                low = try number(body)
                high = step == nil ? low : range.upperBound
                if let step, low + step > range.upperBound {
                    throw refuse("'\(item)' repeats past the last \(name) (\(range.upperBound))")
                }
            }
            values.formUnion(stride(from: low, through: high, by: step ?? 1))
        }
        return values.count == range.count ? nil : values.sorted()
    }

    /// Refuses what cron and launchd cannot say: seconds other than :00, a year, and a weekday together with
    /// a day of the month (both fire when *either* matches; systemd wants both).
    package func checkCronLike(scheduler: String) throws(ScheduleError) {
        let forms = "use minutes and coarser fields, e.g. 'Mon..Fri 02:30', '*-*-01 04:00', '*:0/15', 'daily'"
        if seconds != [0] {
            throw ScheduleError("\(scheduler) cannot run at seconds other than :00 ('\(text)'); \(forms)")
        }
        if years != nil {
            throw ScheduleError("\(scheduler) cannot restrict the year ('\(text)'); \(forms)")
        }
        if weekdays != nil, days != nil {
            throw ScheduleError("\(scheduler) cannot require both a weekday and a day of the month ('\(text)'): it runs when either matches; \(forms)")
        }
    }

    /// The shortest and longest time between two runs. The shortest bounds the randomized delay (a delay as
    /// long as the gap would merge runs); the longest is what the effective maximum age adds to a rule's age.
    package private(set) var shortestGap = PolicyDuration.days(365)
    package private(set) var longestGap = PolicyDuration.days(365)

    /// Walks the calendar day by day (eight years, or the years listed, so leap days and weekday/date
    /// alignments come round) to find the gaps between runs. Throws for a specification that never runs.
    private mutating func measureGaps(_ refuse: (String) -> ScheduleError) throws(ScheduleError) {
        var times: [Int] = []
        for h in hours ?? Array(0...23) {
            for m in minutes ?? Array(0...59) {
                for s in seconds ?? Array(0...59) { times.append(h * 3600 + m * 60 + s) }
            }
        }
        var shortest = Int.max, longest = 0
        for (a, b) in zip(times, times.dropFirst()) { shortest = min(shortest, b - a); longest = max(longest, b - a) }

        let firstDay: Int, lastDay: Int
        if let years {
            firstDay = CalendarSpec.daysSinceEpoch(year: years.first!, month: 1, day: 1)
            lastDay = CalendarSpec.daysSinceEpoch(year: years.last! + 1, month: 1, day: 1) - 1
        } else {
            firstDay = CalendarSpec.daysSinceEpoch(year: 2024, month: 1, day: 1)
            lastDay = firstDay + 8 * 365 + 2
        }
        var previous: Int?
        var matchingDays = 0
        for day in firstDay...lastDay {
            let (y, m, d) = CalendarSpec.civilDate(daysSinceEpoch: day)
            let weekday = (day + 3) % 7 + 1  // 1970-01-01 was a Thursday (4)
            guard years?.contains(y) ?? true, months?.contains(m) ?? true, days?.contains(d) ?? true,
                  weekdays?.contains(weekday) ?? true else { continue }
            matchingDays += 1
            if let previous {
                let gap = (day - previous) * 86400 - times.last! + times.first!
                shortest = min(shortest, gap); longest = max(longest, gap)
            }
            previous = day
        }
        guard matchingDays > 0 else { throw refuse("no day matches it, so it would never run") }
        if shortest != Int.max { shortestGap = .seconds(Int64(shortest)) }
        if longest > 0 { longestGap = .seconds(Int64(longest)) }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
    static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146097 + dayOfEra - 719468
    }

    /// The date of a day number (civil_from_days).
    static func civilDate(daysSinceEpoch days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719468
        let era = (z >= 0 ? z : z - 146096) / 146097
        let dayOfEra = z - era * 146097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
