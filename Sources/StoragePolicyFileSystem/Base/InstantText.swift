// The instants `--at` takes (plan, audit, explain evaluated as of another time): a UTC date and time in the
// RFC 3339 family, written as people write them. Pure parsing; the result is checked by formatting it back,
// so 2027-02-30 is refused rather than read as March 2nd.

package enum InstantText {
    /// The forms accepted, for messages.
    package static let forms = "YYYY-MM-DD, YYYY-MM-DDThh:mmZ or YYYY-MM-DDThh:mm:ssZ (UTC; an offset such as +02:00 instead of Z)"

    /// Nanoseconds since the epoch of `text`: `2027-01-01`, `2027-01-01T00:00Z`, `2027-01-01T00:00:00Z`, a
    /// fraction of a second after the seconds, `Z` or `±hh:mm`; nil for anything else.
    package static func nanoseconds(_ text: String) -> Int64? {
        let b = Array(text.utf8)
        func digits(_ at: Int, _ count: Int) -> Int? {
            guard at + count <= b.count else { return nil }
            var n = 0
            for i in at..<(at + count) {
                guard b[i] >= 0x30 && b[i] <= 0x39 else { return nil }
                n = n * 10 + Int(b[i] - 0x30)
            }
            return n
        }
        guard let year = digits(0, 4), b.count >= 10, b[4] == 0x2D, let month = digits(5, 2), b[7] == 0x2D,
              let day = digits(8, 2) else { return nil }
        var hour = 0, minute = 0, second = 0, fraction: Int64 = 0, offset = 0
        var i = 10
        if i < b.count {
            guard b[i] == 0x54 || b[i] == 0x74, let h = digits(i + 1, 2), i + 3 < b.count, b[i + 3] == 0x3A,
                  let m = digits(i + 4, 2) else { return nil }
            hour = h; minute = m; i += 6
            if i < b.count, b[i] == 0x3A {
                guard let s = digits(i + 1, 2) else { return nil }
                second = s; i += 3
                if i < b.count, b[i] == 0x2E {
                    i += 1
                    var scale: Int64 = 100_000_000, any = false
                    while i < b.count, b[i] >= 0x30 && b[i] <= 0x39 {
                        fraction += Int64(b[i] - 0x30) * scale; scale /= 10; i += 1; any = true
                    }
                    guard any else { return nil }
                }
            }
            guard i < b.count else { return nil }  // a time needs its zone: Z or an offset
            if b[i] == 0x5A || b[i] == 0x7A {
                i += 1
            } else if b[i] == 0x2B || b[i] == 0x2D, let oh = digits(i + 1, 2), i + 3 < b.count, b[i + 3] == 0x3A,
                      let om = digits(i + 4, 2), oh < 24, om < 60 {
                offset = (b[i] == 0x2B ? 1 : -1) * (oh * 3600 + om * 60)
                i += 6
            } else { return nil }
            guard i == b.count else { return nil }
        }
        guard (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 60, year >= 1970 else { return nil }
        var parts = CInterop.BrokenDownTime()
        parts.tm_year = Int32(year - 1900); parts.tm_mon = Int32(month - 1); parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(hour); parts.tm_min = Int32(minute); parts.tm_sec = Int32(second)
        let seconds = Int64(system_timegm(&parts))
        // timegm normalises 02-30 to 03-02: refuse a date that does not come back as written.
        let back = WallClock.rfc3339(ns: seconds * 1_000_000_000)
        guard back.hasPrefix(String(decoding: b[0..<10], as: UTF8.self)) else { return nil }
        let (ns, overflow) = (seconds - Int64(offset)).multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? nil : ns + fraction
    }
}
