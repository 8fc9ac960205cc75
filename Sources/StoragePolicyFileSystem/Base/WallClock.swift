// Wall-clock time for journal records and trash stamps: nanoseconds since the epoch, RFC 3339 in UTC,
// and the local-time form FreeDesktop's DeletionDate uses. Never used to measure durations (monotonic is).

package enum WallClock {
    package static func nowNs() -> Int64 {
        var ts = CInterop.TimeSpec()
        _ = system_clock_gettime(_CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }

    /// `2026-11-29T13:22:43Z`
    package static func rfc3339(ns: Int64) -> String {
        var t = CInterop.Time(ns / 1_000_000_000)
        var parts = CInterop.BrokenDownTime()
        system_gmtime_r(&t, &parts)
        return format(parts) + "Z"
    }

    /// `2026-11-29T14:22:43` in local time, as the XDG trash specification's DeletionDate.
    package static func localTimestamp(seconds: Int64) -> String {
        var t = CInterop.Time(seconds)
        var parts = CInterop.BrokenDownTime()
        system_localtime_r(&t, &parts)
        return format(parts)
    }

    /// A compact UTC stamp for transaction ids: `20261129T132243Z`.
    package static func compactUTC(ns: Int64) -> String {
        var t = CInterop.Time(ns / 1_000_000_000)
        var p = CInterop.BrokenDownTime()
        system_gmtime_r(&t, &p)
        return pad(Int(p.tm_year) + 1900, 4) + pad(Int(p.tm_mon) + 1, 2) + pad(Int(p.tm_mday), 2) + "T"
            + pad(Int(p.tm_hour), 2) + pad(Int(p.tm_min), 2) + pad(Int(p.tm_sec), 2) + "Z"
    }

    /// Parses `YYYY-MM-DDThh:mm:ss[.fff]Z` (UTC) into nanoseconds; nil for anything else.
    package static func parseRFC3339(_ text: String) -> Int64? {
        let b = Array(text.utf8)
        guard b.count >= 20, b.last == 0x5A else { return nil }
        func number(_ r: Range<Int>) -> Int? {
            var n = 0
            for i in r { guard b[i] >= 0x30 && b[i] <= 0x39 else { return nil }; n = n * 10 + Int(b[i] - 0x30) }
            return n
        }
        guard let y = number(0..<4), let mo = number(5..<7), let d = number(8..<10),
              let h = number(11..<13), let mi = number(14..<16), let s = number(17..<19) else { return nil }
        var parts = CInterop.BrokenDownTime()
        parts.tm_year = Int32(y - 1900); parts.tm_mon = Int32(mo - 1); parts.tm_mday = Int32(d)
        parts.tm_hour = Int32(h); parts.tm_min = Int32(mi); parts.tm_sec = Int32(s)
        return Int64(system_timegm(&parts)) * 1_000_000_000
    }

    private static func format(_ p: CInterop.BrokenDownTime) -> String {
        pad(Int(p.tm_year) + 1900, 4) + "-" + pad(Int(p.tm_mon) + 1, 2) + "-" + pad(Int(p.tm_mday), 2) + "T"
            + pad(Int(p.tm_hour), 2) + ":" + pad(Int(p.tm_min), 2) + ":" + pad(Int(p.tm_sec), 2)
    }

    private static func pad(_ n: Int, _ width: Int) -> String {
        let s = String(n)
        return String(repeating: "0", count: max(0, width - s.count)) + s
    }
}
