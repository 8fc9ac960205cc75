// A span of time written as summed units (`90s`, `24h`, `1d12h`, `2w`), held in whole seconds.
// Never accepts a bare number or free text ("24 hours"): the accepted forms are stated in every error.
// Never traps: parsing refuses what overflows, and nanoseconds saturate (a limit past 2262 is "forever").

/// A length of time as policies write it (`24h`, `1d12h`), to the second.
public struct PolicyDuration: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The duration in seconds.
    public var seconds: Int64

    /// A duration of `seconds` seconds.
    public init(seconds: Int64) { self.seconds = seconds }

    /// `n` seconds.
    public static func seconds(_ n: Int64) -> PolicyDuration { PolicyDuration(seconds: n) }
    /// `n` minutes.
    public static func minutes(_ n: Int64) -> PolicyDuration { PolicyDuration(seconds: saturating(n, 60)) }
    /// `n` hours.
    public static func hours(_ n: Int64) -> PolicyDuration { PolicyDuration(seconds: saturating(n, 3600)) }
    /// `n` days of 24 hours.
    public static func days(_ n: Int64) -> PolicyDuration { PolicyDuration(seconds: saturating(n, 86400)) }
    /// `n` weeks of 7 days.
    public static func weeks(_ n: Int64) -> PolicyDuration { PolicyDuration(seconds: saturating(n, 604800)) }

    /// The duration in nanoseconds, the unit timestamps are compared in; saturates at Int64.max (about 292
    /// years), which no age measured in nanoseconds since 1970 can exceed: such a limit never expires anything.
    public var nanoseconds: Int64 { PolicyDuration.saturating(seconds, 1_000_000_000) }

    /// `a * b`, clamped to Int64's range instead of trapping.
    static func saturating(_ a: Int64, _ b: Int64) -> Int64 {
        let (p, o) = a.multipliedReportingOverflow(by: b)
        return o ? ((a < 0) != (b < 0) ? .min : .max) : p
    }

    /// How durations may be written, for error messages.
    package static let acceptedForms = "a number followed by a unit s, m, h, d or w, summed without spaces (90s, 24h, 7d, 1d12h, 2w)"

    /// Parses `1d12h`-style text; nil when it is not of that form or overflows.
    public init?(parsing text: String) {
        let units: [UInt8: Int64] = [0x73: 1, 0x6D: 60, 0x68: 3600, 0x64: 86400, 0x77: 604800]
        var total: Int64 = 0
        var number: Int64? = nil
        var seen = Set<UInt8>()
        for c in text.utf8 {
            if c >= 0x30 && c <= 0x39 {
                let (m, o1) = (number ?? 0).multipliedReportingOverflow(by: 10)
                let (a, o2) = m.addingReportingOverflow(Int64(c - 0x30))
                guard !o1, !o2 else { return nil }
                number = a
            } else if let unit = units[c], let n = number, !seen.contains(c) {
                let (p, o1) = n.multipliedReportingOverflow(by: unit)
                let (t, o2) = total.addingReportingOverflow(p)
                guard !o1, !o2 else { return nil }
                total = t
                number = nil
                seen.insert(c)
            } else {
                return nil
            }
        }
        guard number == nil, !seen.isEmpty else { return nil }
        self.seconds = total
    }

    /// The shortest summed form: `1d12h`, `90s` -> `1m30s`, `0s`.
    public var description: String { PolicyDuration.format(seconds: seconds, largestUnits: 5) }

    /// A rough human age for plans: the two largest units (`2d3h`, `5m12s`).
    package static func humanAge(nanoseconds: Int64) -> String {
        format(seconds: nanoseconds / 1_000_000_000, largestUnits: 2)
    }

    package static func format(seconds: Int64, largestUnits: Int) -> String {
        if seconds == 0 { return "0s" }
        var rest = seconds < 0 ? (seconds == .min ? .max : -seconds) : seconds
        var parts: [String] = []
        for (unit, size) in [("w", Int64(604800)), ("d", 86400), ("h", 3600), ("m", 60), ("s", 1)] {
            let n = rest / size
            if n > 0 || (!parts.isEmpty && parts.count < largestUnits && rest > 0) {
                if n > 0 { parts.append("\(n)\(unit)") }
                rest -= n * size
            }
            if parts.count == largestUnits { break }
        }
        return (seconds < 0 ? "-" : "") + parts.joined()
    }

    /// Orders durations by length.
    public static func < (a: PolicyDuration, b: PolicyDuration) -> Bool { a.seconds < b.seconds }
}
