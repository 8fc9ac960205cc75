// A plan of a large tree cancelled 30 ms after it started: the walk looks at the task's cancellation between
// directories, so CancellationError comes within one directory's work (the issue asks for 300 ms), and the walk
// has stopped (its progress does not move afterwards).
import Foundation
import Synchronization
import StoragePolicy

enum PlanCancelPart {
    /// Entries per folder of the large tree: one folder's work is what a cancellation may wait for.
    static let perDirectory = 1000

    static func run(_ big: URL, entries: Int, policies: URL) async throws {
        // ENTRIES entries below tmp: D folders of (perDirectory - 1) files each, the folders counted too.
        let directories = max(1, entries / perDirectory)
        let files = entries / directories - 1
        let tmp = big.appendingPathComponent("tmp", isDirectory: true)
        // 0700: nobody else may add to (or take from) what the loops below create and remove by name.
        try Files.directory(big, mode: 0o700)
        try Files.directory(tmp)
        let clock = ContinuousClock()
        let built = clock.now
        try BigTree.make(tmp, directories: directories, files: files, workers: 4)
        let total = directories * (files + 1)
        print("plan-cancel: built \(total) entries in \(milliseconds(clock.now - built)) ms")
        defer {
            let removing = clock.now
            BigTree.remove(tmp, directories: directories, files: files, workers: 4)
            rmdir(big.path)
            print("plan-cancel: removed them in \(milliseconds(clock.now - removing)) ms")
        }

        let policyFile = policies.appendingPathComponent("big.yaml")
        try Data("""
            version: 1
            name: big-tree
            rules:
              - name: tmp-expiry
                path: tmp
                expire: { after: 24h }

            """.utf8).write(to: policyFile)
        let engine = try StorageEngine(policyFile: policyFile, root: big)

        let scanned = Mutex(0)
        let started = clock.now
        let planning = Task { try await engine.plan { progress in scanned.withLock { $0 = max($0, progress.entriesScanned) } } }
        try await Task.sleep(for: .milliseconds(30))
        let cancelled = clock.now
        planning.cancel()
        let outcome = await planning.result
        let thrown = clock.now
        let atThrow = scanned.withLock { $0 }

        switch outcome {
        case .success(let plan):
            throw CheckFailed(description: "the plan finished (\(plan.summary.entriesScanned) entries) instead of throwing CancellationError")
        case .failure(let error):
            try check(error is CancellationError, "the cancelled plan threw \(type(of: error)): \(error), not CancellationError")
        }
        // Stopped, not abandoned: no walking thread reports progress any more.
        try await Task.sleep(for: .milliseconds(200))
        let later = scanned.withLock { $0 }
        try check(later == atThrow, "the walk went on after CancellationError: \(atThrow) entries, then \(later)")
        try check(atThrow < total, "the walk had read all \(total) entries before the cancel")
        let waited = milliseconds(thrown - cancelled)
        print("plan-cancel: cancelled \(milliseconds(cancelled - started)) ms after start, CancellationError \(waited) ms after the cancel, \(atThrow) of \(total) entries scanned; the walk stopped")
        try check(waited < 300, "CancellationError came \(waited) ms after the cancel (at most 300)")
    }

    static func milliseconds(_ d: Duration) -> Int {
        Int(d.components.seconds) * 1000 + Int(d.components.attoseconds / 1_000_000_000_000_000)
    }
}
