// Units of change: a plan action that changes several entries is carried out, journaled and recovered as one.
// A trash rule plans the delete of an item and, as a second action, the delete of its record (FreeDesktop
// `info/NAME.trashinfo`, an app trash's `.policyctl-info/NAME.trashinfo`). The record dates the item: an item
// left without it is never deleted by a later run (retention cannot date it), so the two must never split, not
// by a skip, not by a crash. Here the record's step is attached to its item's step, which makes both changes
// under its own action number, staged both, so a rollback or recovery puts both back (Docs/journal.md,
// "Units of change").

@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyPlan

extension Step {
    /// True for a delete whose path ends in `.trashinfo`: a candidate record of a trash item.
    fileprivate var isRecordDelete: Bool { restore == nil && action.mayBeRecordDelete }
}

extension Action {
    /// A delete of a regular file whose name ends in `.trashinfo`: maybe a trash item's record.
    fileprivate var mayBeRecordDelete: Bool {
        guard isDelete, type == .regular, identity != nil else { return false }
        return path.bytes.count > TrashFolder.infoSuffix.count && path.bytes.suffix(TrashFolder.infoSuffix.count).elementsEqual(TrashFolder.infoSuffix)
    }
}

extension Applier {
    /// True when one of `actions` may delete a trash record (`coupleRecords` has work). Each action is read in
    /// place: a pass over a plan's steps made and copied each one (900 instructions a step, Docs/performance.md).
    static func mayDeleteRecords(_ actions: [Action]) -> Bool {
        let last = TrashFolder.infoSuffix.last
        return actions.withUnsafeBufferPointer { a in
            // Two stored fields first (a regular file whose name ends in `o`, as `.trashinfo` does): asking each
            // action's `mayBeRecordDelete` copied the whole action into the getter and destroyed the copy, 340
            // instructions an action of the plan before the run's first step.
            for i in a.indices where a[i].type == .regular && a[i].path.bytes.last == last && a[i].mayBeRecordDelete {
                return true
            }
            return false
        }
    }

    /// Attaches each trash record delete to the delete of the item it describes (same rule, both in the plan):
    /// `record` on the item's step, `carriedBy` on the record's. A record whose folder (or any folder above it)
    /// the plan deletes as well is left alone: it goes with that folder, and moving its change to the item's
    /// place in the order could put it after its folder's removal.
    static func coupleRecords<Steps: MutableCollection & RandomAccessCollection<Step>>(_ steps: inout Steps) where Steps.Index == Int {
        // Most plans delete no trash record: one pass over the path endings, nothing hashed.
        guard steps.contains(where: { $0.isRecordDelete }) else { return }
        var deletes: [RelativePath: Int] = [:]
        for (i, step) in steps.enumerated() where step.action.isDelete && step.restore == nil { deletes[step.action.path] = i }
        for j in steps.indices where steps[j].isRecordDelete {
            let record = steps[j].action.path
            guard let name = record.lastComponent, name.bytes.count > TrashFolder.infoSuffix.count else { continue }
            let itemName = FileName(unchecked: Array(name.bytes.dropLast(TrashFolder.infoSuffix.count)))
            let folder = record.parent
            let item: RelativePath
            if folder.lastComponent == TrashFolder.infoName {
                item = folder.parent.appending(TrashFolder.filesName).appending(itemName)
            } else if folder.lastComponent == TrashFolder.indexName {
                item = folder.parent.appending(itemName)
            } else {
                continue
            }
            guard let i = deletes[item], i != j, steps[i].record == nil, steps[i].carriedBy == nil, steps[j].record == nil,
                  steps[i].action.rule == steps[j].action.rule, steps[i].action.identity != nil else { continue }
            var ancestor = record.parent
            var deletedAbove = false
            while true {
                if deletes[ancestor] != nil { deletedAbove = true; break }
                if ancestor.isRoot { break }
                ancestor = ancestor.parent
            }
            if deletedAbove { continue }
            steps[i].record = j
            steps[j].carriedBy = i
        }
    }
}
