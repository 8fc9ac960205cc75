// `policyctl trash --empty [--older-than D]`: the trash rule's own retention over the one folder (retain D, or 0),
// planned and applied as one journaled apply (StorageEngine.emptyTrash), so an item is dated exactly as apply
// dates it and one whose date cannot be told is kept and reported. Exit 1 when anything was kept or skipped.
import StoragePolicy

extension TrashCommand {
    func runEmpty(_ folder: RelativePath, layout: TrashRetention.Layout, session: StorageEngine.Session,
                  printer: ApplyEventPrinter) throws -> ExitCode {
        let result: ApplyResult
        // "Already matches the policy" would name a policy the operator never wrote: say what it means here.
        let events: (ApplyEvent) -> Void = { event in
            if case .nothingToDo = event {
                Terminal.out("Nothing to delete in the trash folder \(folder.escaped)\(olderThanText.map { " trashed more than \($0) ago" } ?? "").")
            } else {
                printer.render(event)
            }
        }
        do { result = try StorageEngine.emptyTrash(folder, layout: layout, olderThan: olderThan, session: session, events: events) }
        catch { throw try failure(error, printer) }
        // What retention keeps (undated items, an unreadable record) is reported as apply's plan reports it.
        for v in result.plan.violations { Terminal.err("kept: \(v.path.escaped): \(v.message)") }
        return result.plan.violations.isEmpty && result.report.skipped.isEmpty ? .success : .findings
    }
}
