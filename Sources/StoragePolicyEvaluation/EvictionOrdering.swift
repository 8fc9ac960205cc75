// The eviction order a quota's or trash's `order` and `first` ask for. Protection (minAge, keep) is decided on
// the oldest-first order before this runs, so `order: largest` never lets a quota take the newest files keep
// protects; this only rearranges what may go. Ties keep the order they came in (oldest, then path).

@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyModel

package enum EvictionOrdering {
    /// Rearranges `candidates` (oldest first, ties by path) into `choice`'s order: `first` matches before the
    /// rest, then largest first for `order: largest`; `oldest` and `newest-last-access` keep the time order
    /// (the time recorded is the mtime or the atime to match).
    static func reorder<Member>(_ candidates: inout [(time: Int64, member: Member)], _ choice: EvictionChoice,
                                order: EvictionOrder, bytes: (Member) -> Int64, relativePath: (Member) -> RelativePath) {
        guard order == .largest || !choice.first.isEmpty else { return }
        let keys = candidates.indices.map { i in
            (first: !choice.first.isEmpty && choice.goesFirst(relativePath(candidates[i].member)),
             bytes: order == .largest ? bytes(candidates[i].member) : 0, index: i)
        }
        let sorted = keys.sorted { a, b in
            if a.first != b.first { return a.first }
            if a.bytes != b.bytes { return a.bytes > b.bytes }
            return a.index < b.index
        }
        candidates = sorted.map { candidates[$0.index] }
    }

    /// A quota's eviction reason: the same words as before `order` existed when none of the new keys is set.
    static func quotaReason(_ quota: Quota, used: Int64, maximum: Int64, files: Int, unitDirectory: Bool = false) -> String {
        var over: [String] = []
        if used > maximum { over.append("\(ByteSize.human(used)) used > \(ByteSize.human(maximum)) max") }
        if quota.eviction.exceedsEntries(files) { over.append("\(files) files > maxEntries \(quota.eviction.maxEntries!)") }
        let oldest = unitDirectory ? "oldest (newest mtime inside)" : "oldest (mtime)"
        let lru = unitDirectory ? "least recently used (newest atime inside)" : "least recently used (atime)"
        let order: String
        if quota.eviction.order == nil && quota.eviction.first.isEmpty {
            order = "\(quota.evict == .lru ? lru : oldest) first"
        } else {
            order = quota.eviction.describe(quota.evictionOrder, oldest: oldest)
        }
        return "quota: \(over.joined(separator: ", ")); \(unitDirectory ? "unit: directory, " : "")\(order)"
    }
}
