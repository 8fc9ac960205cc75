// Reads the deletion time out of a FreeDesktop `.trashinfo` file and the stamp `policyctl trash` records.
// Never guesses and never traps: a date it cannot read, an impossible calendar date or one outside what
// nanoseconds since the epoch can hold is reported as unreadable, and the item is kept.

@_spi(Layers) import StoragePolicyFileSystem

package enum TrashDates {
    /// What a `.trashinfo` says about when its item was trashed.
    package enum Reading: Equatable {
        /// Nanoseconds since the epoch.
        case date(Int64)
        /// No `DeletionDate=` line inside a `[Trash Info]` group.
        case missing
        /// A `DeletionDate=` whose value is not a time (the raw value, for the report).
        case unreadable([UInt8])

        package var date: Int64? { if case .date(let t) = self { t } else { nil } }

        /// Why there is no date, in words for a report ("has no readable DeletionDate").
        package var problem: String? {
            switch self {
            case .date: nil
            case .missing: "has no DeletionDate in a [Trash Info] group"
            case .unreadable(let raw): "has no readable DeletionDate ('\(PathEscaping.escape(Array(raw.prefix(64))))' is not a valid time)"
            }
        }
    }

    /// `DeletionDate=` of the `[Trash Info]` group, in nanoseconds since the epoch. The spec's form is
    /// `YYYY-MM-DDThh:mm:ss` in local time; fractional seconds and a zone (`Z`, `+02:00`, `+0200`) are
    /// accepted too, as some implementations write them. Only the first `DeletionDate` of the group counts;
    /// lines before any group, and other groups, are ignored.
    package static func deletionDate(fromTrashInfo bytes: [UInt8]) -> Int64? { read(trashInfo: bytes).date }

    package static func read(trashInfo bytes: [UInt8]) -> Reading {
        var inGroup = false
        let key = Array("DeletionDate=".utf8)
        for line in bytes.split(separator: 0x0A, omittingEmptySubsequences: true) {
            var text = line
            if text.last == 0x0D { text = text.dropLast() }
            if text.first == 0x5B {  // "["
                inGroup = text.elementsEqual("[Trash Info]".utf8)
                continue
            }
            if inGroup, text.starts(with: key) {
                let value = Array(text.dropFirst(key.count))
                return parseDate(value).map(Reading.date) ?? .unreadable(value)
            }
        }
        return .missing
    }

    /// The decimal seconds since the epoch `policyctl trash` writes into the stamp attribute (a fraction
    /// is allowed); nil for anything else, and for a time nanoseconds since the epoch cannot hold.
    package static func stamp(_ bytes: [UInt8]) -> Int64? {
        var text = bytes[...]
        while let last = text.last, last == 0 || last == 0x0A || last == 0x20 { text.removeLast() }
        guard !text.isEmpty, text.count <= 64 else { return nil }
        var whole: Int64 = 0
        var fraction: Int64 = 0
        var scale: Int64 = 1_000_000_000
        var seenDot = false
        var digits = 0
        for b in text {
            if b == 0x2E && !seenDot { seenDot = true; continue }
            guard b >= 0x30 && b <= 0x39 else { return nil }
            let d = Int64(b - 0x30)
            if seenDot {
                if scale > 1 { scale /= 10; fraction += d * scale }
            } else {
                let (m, o1) = whole.multipliedReportingOverflow(by: 10)
                let (a, o2) = m.addingReportingOverflow(d)
                guard !o1, !o2 else { return nil }
                whole = a
                digits += 1
            }
        }
        guard digits > 0 else { return nil }
        return nanoseconds(seconds: whole, plus: fraction)
    }

    /// `seconds * 10^9 + nanos`, or nil when that does not fit in 64 bits (after 2262-04-11, before 1677-09-21).
    static func nanoseconds(seconds: Int64, plus nanos: Int64) -> Int64? {
        let (scaled, o1) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let (total, o2) = scaled.addingReportingOverflow(nanos)
        return o1 || o2 ? nil : total
    }

    /// Days in `month` (1...12) of `year` in the proleptic Gregorian calendar.
    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 to the given civil date (proleptic Gregorian; Howard Hinnant's algorithm).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let m = Int64(month)
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// `YYYY-MM-DDThh:mm:ss[.fraction][Z|±hh[:]mm]`. Every field is checked against the calendar (no
    /// 30 February, no hour 24, no second 60): `mktime` would quietly roll an impossible date over.
    static func parseDate(_ s: [UInt8]) -> Int64? {
        guard s.count <= 64 else { return nil }
        var i = 0
        func number(_ count: Int) -> Int? {
            guard i + count <= s.count else { return nil }
            var n = 0
            for k in 0..<count {
                let b = s[i + k]
                guard b >= 0x30 && b <= 0x39 else { return nil }
                n = n * 10 + Int(b - 0x30)
            }
            i += count
            return n
        }
        func expect(_ c: UInt8) -> Bool {
            guard i < s.count, s[i] == c else { return false }
            i += 1
            return true
        }
        guard let year = number(4), expect(0x2D), let month = number(2), expect(0x2D), let day = number(2),
              expect(0x54), let hour = number(2), expect(0x3A), let minute = number(2), expect(0x3A),
              let second = number(2) else { return nil }
        guard (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day),
              hour < 24, minute < 60, second < 60 else { return nil }
        var nanos: Int64 = 0
        if i < s.count, s[i] == 0x2E {
            i += 1
            var scale: Int64 = 100_000_000
            var any = false
            while i < s.count, s[i] >= 0x30 && s[i] <= 0x39 {
                nanos += Int64(s[i] - 0x30) * scale
                scale /= 10
                i += 1
                any = true
            }
            guard any else { return nil }
        }
        var offsetSeconds: Int? = nil
        if i < s.count {
            if s[i] == 0x5A { i += 1; offsetSeconds = 0 }  // Z
            else if s[i] == 0x2B || s[i] == 0x2D {
                let sign = s[i] == 0x2D ? -1 : 1
                i += 1
                guard let h = number(2) else { return nil }
                _ = expect(0x3A)
                guard let m = number(2), h < 24, m < 60 else { return nil }
                offsetSeconds = sign * (h * 3600 + m * 60)
            }
        }
        guard i == s.count else { return nil }
        let seconds: Int64
        if let offsetSeconds {
            // Four-digit years keep this well inside 64 bits; only the nanoseconds can overflow.
            seconds = daysFromCivil(year: year, month: month, day: day) * 86_400
                + Int64(hour * 3600 + minute * 60 + second) - Int64(offsetSeconds)
        } else {
            var t = CInterop.BrokenDownTime()
            t.tm_year = Int32(year - 1900); t.tm_mon = Int32(month - 1); t.tm_mday = Int32(day)
            t.tm_hour = Int32(hour); t.tm_min = Int32(minute); t.tm_sec = Int32(second)
            t.tm_isdst = -1  // local time, DST decided by the zone rules
            let local = system_mktime(&t)
            guard local != -1 || (year == 1969 && month == 12 && day == 31) else { return nil }
            seconds = Int64(local)
        }
        return nanoseconds(seconds: seconds, plus: nanos)
    }
}
