// Reads the deletion time out of a FreeDesktop `.trashinfo` file and the stamp `policyctl trash` records.
// Never guesses: a date it cannot read is reported as undated, and the item is kept.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

enum TrashDates {
    /// `DeletionDate=` of the `[Trash Info]` group, in nanoseconds since the epoch. The spec's form is
    /// `YYYY-MM-DDThh:mm:ss` in local time; fractional seconds and a zone (`Z`, `+02:00`, `+0200`) are
    /// accepted too, as some implementations write them.
    static func deletionDate(fromTrashInfo bytes: [UInt8]) -> Int64? {
        var inGroup = false
        for line in bytes.split(separator: 0x0A, omittingEmptySubsequences: true) {
            var text = line
            if text.last == 0x0D { text = text.dropLast() }
            if text.first == 0x5B {  // "["
                inGroup = text.elementsEqual(Array("[Trash Info]".utf8))
                continue
            }
            let key = Array("DeletionDate=".utf8)
            if inGroup, text.starts(with: key) {
                return parseDate(Array(text.dropFirst(key.count)))
            }
        }
        return nil
    }

    /// The decimal seconds since the epoch `policyctl trash` writes into the stamp attribute (a fraction
    /// is allowed); nil for anything else.
    static func stamp(_ bytes: [UInt8]) -> Int64? {
        var text = bytes
        while let last = text.last, last == 0 || last == 0x0A || last == 0x20 { text.removeLast() }
        guard !text.isEmpty else { return nil }
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
        guard digits > 0, whole < Int64.max / 1_000_000_000 else { return nil }
        return whole * 1_000_000_000 + fraction
    }

    static func parseDate(_ s: [UInt8]) -> Int64? {
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
        guard (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second <= 60 else { return nil }
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
        var t = tm()
        t.tm_year = Int32(year - 1900); t.tm_mon = Int32(month - 1); t.tm_mday = Int32(day)
        t.tm_hour = Int32(hour); t.tm_min = Int32(minute); t.tm_sec = Int32(second)
        let seconds: Int
        if let offsetSeconds {
            seconds = Int(timegm(&t)) - offsetSeconds
        } else {
            t.tm_isdst = -1  // local time, DST decided by the zone rules
            let local = mktime(&t)
            guard local != -1 || (year == 1969 && month == 12 && day == 31) else { return nil }
            seconds = Int(local)
        }
        return Int64(seconds) * 1_000_000_000 + nanos
    }
}
