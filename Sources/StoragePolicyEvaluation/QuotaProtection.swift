// quota `minAge` and `keep`: units a quota must not evict, whatever the total. When they stop eviction short of
// the target, the plan evicts what it may and reports a violation naming the rule and the bytes still over.

@_spi(Layers) import StoragePolicyModel
@_spi(Layers) import StoragePolicyFileSystem

package enum QuotaProtection {
    /// Drops the protected candidates from the tail of `candidates` (sorted oldest first): the `keep` newest,
    /// and every one younger than `minAge` (a unit exactly `minAge` old may go). Returns how many were dropped.
    static func removeProtected<Member>(_ candidates: inout [(time: Int64, member: Member)], quota: Quota, now: Int64) -> Int {
        let before = candidates.count
        candidates.removeLast(min(quota.keep, candidates.count))
        if let minAge = quota.minAge {
            while let last = candidates.last, Ages.age(of: last.time, now: now) < minAge.nanoseconds {
                candidates.removeLast()
            }
        }
        return before - candidates.count
    }

    /// The violation for a quota that `minAge`/`keep` kept above its target.
    static func unmet(_ quota: Quota, rule: String, remaining: Int64, target: Int64, protected: Int) -> String {
        "quota not met: \(remaining - target) bytes (\(ByteSize.human(remaining - target))) still over the target of \(ByteSize.human(target)); \(protection(quota, protected: protected))"
    }

    /// `keep 8 protect 8 files`, `minAge 5d and keep 2 protect 3 units`: what kept the quota above its target.
    static func protection(_ quota: Quota, protected: Int) -> String {
        var why: [String] = []
        if quota.minAge != nil { why.append("minAge \(quota.minAge!)") }
        if quota.keep > 0 { why.append("keep \(quota.keep)") }
        return "\(why.joined(separator: " and ")) protect \(protected) \(quota.unit == .directory ? "unit" : "file")\(protected == 1 ? "" : "s")"
    }
}
