// The timestamps of FileStatus and EntryIdentity as Foundation `Date`s, what an app compares and shows. The
// engine itself works in nanoseconds since the epoch (`*Ns`, package-only) to keep every comparison exact;
// a `Date` (a Double of seconds) is for people and UI, never for judging an entry. The one conversion between
// the two is here.
import Foundation

extension FileStatus {
    /// The last access (atime), which many mounts update lazily or never (see the plan's notes).
    public var accessTime: Date { Date(nanosecondsSinceEpoch: accessTimeNs) }
    /// The last change of the content (mtime).
    public var modificationTime: Date { Date(nanosecondsSinceEpoch: modificationTimeNs) }
    /// The last change of the content or the metadata (ctime).
    public var changeTime: Date { Date(nanosecondsSinceEpoch: changeTimeNs) }
    /// The birth time (btime), nil where the file system records none.
    public var birthTime: Date? { birthTimeNs.map(Date.init(nanosecondsSinceEpoch:)) }
}

extension EntryIdentity {
    /// The mtime the identity recorded.
    public var modificationTime: Date { Date(nanosecondsSinceEpoch: modificationTimeNs) }
}

extension Date {
    /// `ns` nanoseconds since 1970 (clamped values, Int64.min/max, give dates far in the past or future).
    package init(nanosecondsSinceEpoch ns: Int64) {
        let seconds = ns / 1_000_000_000
        let fraction = ns % 1_000_000_000
        self.init(timeIntervalSince1970: TimeInterval(seconds) + TimeInterval(fraction) / 1e9)
    }

    /// Nanoseconds since 1970, saturating at Int64's range. Whole seconds and the fraction are scaled apart, so
    /// a Date made from whole milliseconds gives them back exactly (a Double of nanoseconds would not).
    package var nanosecondsSinceEpoch: Int64 {
        let t = timeIntervalSince1970
        guard t.isFinite, abs(t) < 9.2e9 else { return t < 0 ? .min : .max }
        let seconds = t.rounded(.down)
        let fraction = Int64(((t - seconds) * 1e9).rounded())
        return Int64(seconds) * 1_000_000_000 + fraction
    }
}
