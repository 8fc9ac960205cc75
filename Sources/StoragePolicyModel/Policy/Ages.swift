// Which timestamp a rule judges an entry by, and the few words a plan shows for it ("mtime 2d3h ago > 1d").
// Pure arithmetic on nanoseconds: never reads the clock itself, never rounds an age down to "expired", never
// traps (ages that overflow are "not older", and saturate in text).

@_spi(Layers) import StoragePolicyFileSystem

package enum Ages {
    /// The timestamp `by` names; `newest` is the newest of atime, mtime, the birth time where the file system
    /// records one, and, for non-directories, ctime: systemd-tmpfiles' default (`abcmABM`), the safest, since any
    /// of them moving keeps the entry (and btime, which no one can set, undoes a backdated directory's mtime).
    package static func timestamp(_ s: FileStatus, by: Expire.Timestamp) -> (label: String, ns: Int64) {
        switch by {
        case .mtime: return ("mtime", s.modificationTimeNs)
        case .atime: return ("atime", s.accessTimeNs)
        case .ctime: return ("ctime", s.changeTimeNs)
        // No birth time: the farthest future, so the entry is never older than anything (kept, not judged).
        case .birth: return ("btime", s.birthTimeNs ?? .max)
        case .newest:
            var best = ("mtime", s.modificationTimeNs)
            if s.accessTimeNs > best.1 { best = ("atime", s.accessTimeNs) }
            if s.type != .directory && s.changeTimeNs > best.1 { best = ("ctime", s.changeTimeNs) }
            if let birth = s.birthTimeNs, birth > best.1 { best = ("btime", birth) }
            return ("newest (\(best.0))", best.1)
        }
    }

    /// The newest of the timestamps `list` names (`by: [atime, mtime]`), labelled with the one it is: exactly
    /// those, for folders too (a list is what the policy asked for). A birth time the file system does not
    /// record is left out; when nothing is left, the farthest future (kept, as `by: birth` keeps it).
    package static func timestamp(_ s: FileStatus, newestOf list: [Expire.Timestamp]) -> (label: String, ns: Int64) {
        var best: (label: String, ns: Int64)? = nil
        for t in list {
            if t == .birth && s.birthTimeNs == nil { continue }
            let found = timestamp(s, by: t)
            if best == nil || found.ns > best!.ns { best = found }
        }
        let name = "newest of " + list.map { $0 == .birth ? "btime" : $0.rawValue }.joined(separator: "/")
        guard let best else { return (name, .max) }
        return ("\(name) (\(best.label))", best.ns)
    }

    /// True when `then` is strictly more than `limit` before `now`: an entry exactly `limit` old is kept.
    package static func isOlder(_ then: Int64, than limit: PolicyDuration, now: Int64) -> Bool {
        let (age, overflow) = now.subtractingReportingOverflow(then)
        return !overflow && age > limit.nanoseconds
    }

    /// `now - then`, saturating: a timestamp near Int64's ends (clamped from a file's own ±2^63 seconds)
    /// gives the largest age or the farthest future, never a trap.
    package static func age(of then: Int64, now: Int64) -> Int64 {
        let (difference, overflow) = now.subtractingReportingOverflow(then)
        return overflow ? (then > now ? .min : .max) : difference
    }

    /// `mtime 2d3h ago > 1d` when expired, `mtime 3h ago <= 1d` when not; future times say so.
    package static func describe(_ label: String, _ then: Int64, limit: PolicyDuration, now: Int64) -> String {
        let age = Ages.age(of: then, now: now)
        if age < 0 { return "\(label) \(human(nanoseconds: age == .min ? .max : -age)) in the future" }
        // Built as bytes, one String at the end: a reason is written for every action a plan holds.
        var out: [UInt8] = []
        out.reserveCapacity(label.utf8.count + 32)
        out.append(contentsOf: label.utf8)
        out.append(0x20)
        appendHuman(&out, seconds: age / 1_000_000_000, units: 2)
        out.append(contentsOf: (age > limit.nanoseconds ? " ago > " : " ago <= ").utf8)
        appendHuman(&out, seconds: limit.seconds, units: 4)
        return String(decoding: out, as: UTF8.self)
    }

    /// `seconds` cut to what `human(seconds:units: 2)` shows of it: two ages with the same cut read the same.
    package static func shownSeconds(_ seconds: Int64) -> Int64 {
        if seconds <= 0 { return 0 }
        if seconds >= 86400 { return seconds - seconds % 3600 }  // days and hours
        if seconds >= 3600 { return seconds - seconds % 60 }  // hours and minutes
        return seconds  // minutes and seconds, or seconds
    }

    /// An age for people: the two largest of d, h, m, s (`40d`, `1d1h`, `5m12s`). Days, not weeks:
    /// "30d" is what a policy says, "4w2d" nobody does.
    package static func human(nanoseconds: Int64) -> String { human(seconds: nanoseconds / 1_000_000_000, units: 2) }

    /// The `units` adjacent units from the largest non-zero one, zeros left out: `1d1h`, `2h`, `1m30s`.
    package static func human(seconds: Int64, units: Int) -> String {
        var out: [UInt8] = []
        appendHuman(&out, seconds: seconds, units: units)
        return String(decoding: out, as: UTF8.self)
    }

    private static func appendHuman(_ out: inout [UInt8], seconds: Int64, units: Int) {
        // d, h, m, s and their sizes: no table, no String per call.
        let sizes: (Int64, Int64, Int64, Int64) = (86400, 3600, 60, 1)
        let letters: (UInt8, UInt8, UInt8, UInt8) = (0x64, 0x68, 0x6D, 0x73)
        if seconds <= 0 { out.append(0x30); out.append(0x73); return }
        var first = 0
        while first < 3 && seconds < size(sizes, first) { first += 1 }
        var rest = seconds
        for u in first..<min(4, first + units) {
            let n = rest / size(sizes, u)
            if n > 0 {
                appendDecimal(&out, n)
                out.append(u == 0 ? letters.0 : u == 1 ? letters.1 : u == 2 ? letters.2 : letters.3)
            }
            rest -= n * size(sizes, u)
        }
    }

    @inline(__always)
    private static func size(_ sizes: (Int64, Int64, Int64, Int64), _ u: Int) -> Int64 {
        u == 0 ? sizes.0 : u == 1 ? sizes.1 : u == 2 ? sizes.2 : sizes.3
    }

    private static func appendDecimal(_ out: inout [UInt8], _ n: Int64) {
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var value = n
        var count = 0
        withUnsafeMutableBytes(of: &digits) { d in
            repeat {
                d[19 - count] = 0x30 + UInt8(value % 10)
                value /= 10
                count += 1
            } while value > 0
            out.append(contentsOf: d[(20 - count)...])
        }
    }
}

extension Expire {
    /// The timestamp this rule judges `s` by (`by`, or the newest of its list) and its label.
    package func timestamp(of s: FileStatus) -> (label: String, ns: Int64) {
        if let list = newestOf { return Ages.timestamp(s, newestOf: list) }
        return Ages.timestamp(s, by: by)
    }

    /// `by` as written back: `mtime`, or `[atime, mtime]`.
    package var byText: String { newestOf.map { "[" + $0.map(\.rawValue).joined(separator: ", ") + "]" } ?? by.rawValue }

    /// Whether the timestamp judged can be no older than mtime (mtime itself, newest, or a list with mtime):
    /// then an entry whose recorded mtime is young is young by the rule too.
    package var neverOlderThanMtime: Bool { newestOf.map { $0.contains(.mtime) } ?? (by == .mtime || by == .newest) }

    /// Whether access times take part (atime, newest, or a list with atime).
    package var includesAccessTime: Bool { newestOf.map { $0.contains(.atime) } ?? (by == .atime || by == .newest) }
}

/// Bytes a delete frees: allocated blocks (as `du`), and nothing for a file with other hard links, since
/// removing one name does not free its data.
extension FileStatus {
    package var bytesFreedByRemoval: Int64 {
        (type != .directory && linkCount > 1) ? 0 : allocatedSize
    }
}
