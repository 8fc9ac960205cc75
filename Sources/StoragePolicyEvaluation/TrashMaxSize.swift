// trash `maxSize`: after retention, while a trash folder still holds more than maxSize (the allocated bytes of
// the items retention keeps), the items trashed longest ago go first (ties by path) until it is at or below
// maxSize. Items whose trash time cannot be told count toward the size but are never chosen: their order is unknown.

import StoragePolicyFileSystem
import StoragePolicyModel
import StoragePolicyPlan

package struct TrashSizeCap {
    private struct Candidate {
        var trashedAt: Int64
        var item: TrashItem
        var info: TrashInfoFile?
        var source: String
    }
    private var held: [Int: Int64] = [:]
    private var candidates: [Int: [Candidate]] = [:]

    /// An item retention keeps and nothing can date: it counts toward the size only.
    package mutating func hold(_ item: TrashItem) { held[item.rule, default: 0] += item.bytes }

    /// An item retention keeps, trashed at `trashedAt`: it counts, and may go to bring the size down.
    package mutating func keep(_ item: TrashItem, trashedAt: Int64, info: TrashInfoFile?, source: String) {
        hold(item)
        candidates[item.rule, default: []].append(Candidate(trashedAt: trashedAt, item: item, info: info, source: source))
    }

    /// The deletions (enforced rules) and findings (audit rules) that bring each trash to its maxSize.
    func evictions(_ rules: [CompiledRule], now: Int64,
                   report: (Int, RelativePath, String) -> Void) -> [Action] {
        var actions: [Action] = []
        for (index, total) in held.sorted(by: { $0.key < $1.key }) {
            let rule = rules[index]
            guard case .trash(let retention) = rule.rule.kind, let maxSize = retention.maxSize?.bytes, total > maxSize else { continue }
            var size = total
            let ordered = (candidates[index] ?? []).sorted {
                $0.trashedAt != $1.trashedAt ? $0.trashedAt < $1.trashedAt : $0.item.path < $1.item.path
            }
            for c in ordered where size > maxSize {
                size -= c.item.bytes
                let reason = "trash holds \(ByteSize.human(total)) > maxSize \(ByteSize.human(maxSize)); trashed longest ago first ("
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
            if size > maxSize {
                report(index, rule.rule.path, "trash still holds \(size - maxSize) bytes over maxSize \(ByteSize.human(maxSize)): the rest cannot be dated")
            }
        }
        return actions
    }
}
