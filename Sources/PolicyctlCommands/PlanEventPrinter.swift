// Renders the engine's PlanEvents for plan, audit and explain as those commands have always shown them: a
// progress line on stderr while the walk runs (only when stderr is a terminal), cleared before any result.
// Decides nothing itself; the commands print the result they get back.
import StoragePolicy

final class PlanEventPrinter: @unchecked Sendable {
    /// Which command's progress wording.
    enum Wording { case plan, audit }

    private let wording: Wording
    private let progress = ProgressLine()
    private let started = ProgressLine.now()

    init(_ wording: Wording) { self.wording = wording }

    /// Called from the walking threads one at a time for `.planning`, then from the caller's thread.
    func render(_ event: PlanEvent) {
        switch event {
        case .planning(let step):
            let directory = step.directory.isRoot ? "." : step.directory.escaped
            switch wording {
            case .plan:
                let rate = Double(step.entriesScanned) / max(ProgressLine.now() - started, 0.001)
                progress.update("scanning: \(step.entriesScanned) entries (\(Int(rate))/s) \(directory)")
            case .audit:
                progress.update("audit: \(step.entriesScanned) entries, in \(directory)")
            }
        // The set-aside baseline entries are not findings: nothing to say about them.
        case .baselineNarrowed, .planned, .audited, .explained:
            progress.finish()
        }
    }

    /// Clears the progress line (also when the run threw before its result).
    func finish() { progress.finish() }
}
