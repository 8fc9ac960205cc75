// trash `maxSize` and `maxEntries`: after retention, while a trash folder still holds more than maxSize (the
// allocated bytes of the items retention keeps) or more than maxEntries items, items go in the trash's order
// until it is within both: an item larger than maxSize on its own first (it can never stay, and taking the
// older ones before it would empty the whole trash for nothing), then those matching `first:`, then by `order`
// (default: trashed longest ago first), ties by path. Items whose trash time cannot be told count toward the
// size and the count but are never chosen: their order is unknown.

@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyModel
@_spi(Layers) import StoragePolicyPlan

package struct TrashSizeCap {
    package struct Candidate {
        var trashedAt: Int64
        var item: TrashItem
        var info: TrashInfoFile?
        var source: String
    }
    private var held: [Int: Int64] = [:]
    private var heldCount: [Int: Int] = [:]
    private var candidates: [Int: [Candidate]] = [:]

    /// An item retention keeps and nothing can date: it counts toward the size only.
    package mutating func hold(_ item: TrashItem) {
        held[item.rule, default: 0] += item.bytes
        heldCount[item.rule, default: 0] += 1
    }

    /// An item retention keeps, trashed at `trashedAt`: it counts, and may go to bring the size down.
    package mutating func keep(_ item: TrashItem, trashedAt: Int64, info: TrashInfoFile?, source: String) {
        hold(item)
        candidates[item.rule, default: []].append(Candidate(trashedAt: trashedAt, item: item, info: info, source: source))
    }

    /// The deletions (enforced rules) and findings (audit rules) that bring each trash to its maxSize and maxEntries.
    mutating func evictions(_ rules: [CompiledRule], now: Int64,
                            report: (Int, RelativePath, String) -> Void) -> [Action] {
        var actions: [Action] = []
        for (index, total) in held.sorted(by: { $0.key < $1.key }) {
            let rule = rules[index]
            guard case .trash(let retention) = rule.rule.kind else { continue }
            let maxSize = retention.maxSize?.bytes ?? .max
            let choice = retention.eviction
            let count = heldCount[index] ?? 0
            guard total > maxSize || choice.exceedsEntries(count) else { continue }
            var size = total
            var left = count
            let ordered = Self.order(candidates[index] ?? [], choice, maxSize: total > maxSize ? maxSize : .max)
            var over: [String] = []
            if total > maxSize { over.append("trash holds \(ByteSize.human(total)) > maxSize \(ByteSize.human(maxSize))") }
            if choice.exceedsEntries(count) { over.append("trash holds \(count) items > maxEntries \(choice.maxEntries!)") }
            let order = choice.order == nil && choice.first.isEmpty
                ? "trashed longest ago first" : choice.describe(choice.order ?? .oldest, oldest: "trashed longest ago")
            var taken = 0
            for c in ordered where size > maxSize || choice.exceedsEntries(left) {
                size -= c.item.bytes
                left -= 1
                taken += 1
                let why = total > maxSize && c.item.bytes > maxSize ? "larger than maxSize on its own, so it goes first" : order
                let reason = "\(over.joined(separator: ", ")); \(why) ("
                    + Ages.describe("trashed (\(c.source))", c.trashedAt, limit: retention.retain, now: now) + ")"
                if rule.enforces {
                    actions.append(Action(kind: .delete, path: c.item.path, rule: rule.name, reason: reason, bytes: c.item.bytes,
                                          identity: c.item.identity, type: c.item.type, entries: c.item.entries))
                    if let info = c.info {
                        actions.append(Action(kind: .delete, path: info.path, rule: rule.name,
                                              reason: "the .trashinfo of a deleted item", bytes: info.bytes,
                                              identity: info.identity, type: .regular))
                    }
                } else {
                    report(index, c.item.path, "\(reason): would be deleted")
                }
            }
            // What stays is what a pressure rule may still take (enforced: the evicted ones are planned already).
            if rule.enforces { candidates[index] = Array(ordered.dropFirst(taken)) }
            if size > maxSize {
                report(index, rule.rule.path, "trash still holds \(size - maxSize) bytes over maxSize \(ByteSize.human(maxSize)): the rest cannot be dated")
            }
            if choice.exceedsEntries(left) {
                report(index, rule.rule.path, "trash still holds \(left - choice.maxEntries!) items over maxEntries \(choice.maxEntries!): the rest cannot be dated")
            }
        }
        return actions
    }

    /// The items of trash rule `index` retention and maxSize keep, in the rule's order (`first:`, then `order`,
    /// then path): what a pressure rule evicts, honouring the rule's minAge.
    func pressureCandidates(_ index: Int, _ choice: EvictionChoice) -> [Candidate] {
        Self.order(candidates[index] ?? [], choice, maxSize: .max)
    }

    /// The eviction order: alone over `maxSize` first, then `first:` matches, then `order`, then path.
    private static func order(_ candidates: [Candidate], _ choice: EvictionChoice, maxSize: Int64) -> [Candidate] {
        let order = choice.order ?? .oldest
        func key(_ c: Candidate) -> (Bool, Bool, Int64, Int64) {
            let first = !choice.first.isEmpty && choice.goesFirst(RelativePath(unchecked: c.item.name.bytes))
            switch order {
            case .oldest: return (c.item.bytes > maxSize, first, 0, c.trashedAt)
            case .largest: return (c.item.bytes > maxSize, first, -c.item.bytes, c.trashedAt)
            case .newestLastAccess: return (c.item.bytes > maxSize, first, 0, c.item.accessTimeNs)
            }
        }
        return candidates.map { (key($0), $0) }.sorted { a, b in
            if a.0.0 != b.0.0 { return a.0.0 }
            if a.0.1 != b.0.1 { return a.0.1 }
            if a.0.2 != b.0.2 { return a.0.2 < b.0.2 }
            if a.0.3 != b.0.3 { return a.0.3 < b.0.3 }
            return a.1.item.path < b.1.item.path
        }.map(\.1)
    }
}
