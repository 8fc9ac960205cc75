// An apply cancelled after its first group of deletes, from its own event handler (as a BGTask's expiration
// handler would, from another thread). The issue's contract: the file deletes made stay made, every other change
// of the transaction is rolled back (directories made, attributes set, renames, directory deletes, which are
// staged), the journal says `cancelled`, nothing is left for recover, and CancellationError is thrown.
// "Rolled back" is checked by planning again: the new plan is the old one less exactly the file deletes made.
import Foundation
import Synchronization
import StoragePolicy

enum ApplyCancelPart {
    /// Files in tmp: more than the first group of deletes holds, so the deletes span two groups.
    static let files = 2500

    static func run(_ root: URL, policies: URL) async throws {
        let old = Duration.seconds(2 * 86400)
        try Files.directory(root) {
            try Files.directory(root.appendingPathComponent("tmp")) {
                for d in 0..<10 {
                    let folder = root.appendingPathComponent("tmp/z\(d)")
                    try Files.directory(folder, age: old) { try Files.file(folder.appendingPathComponent("inside"), age: old) }
                }
                for f in 0..<files { try Files.file(root.appendingPathComponent(String(format: "tmp/f%04d", f)), age: old, size: 0) }
            }
            try Files.directory(root.appendingPathComponent("Documents")) {
                try Files.file(root.appendingPathComponent("Documents/Notes.TXT"), age: old)
            }
            try Files.directory(root.appendingPathComponent("Library")) {
                try Files.directory(root.appendingPathComponent("Library/Caches"))
            }
        }
        let policyFile = policies.appendingPathComponent("cancel.yaml")
        try Data("""
            version: 1
            name: outside-cancel
            layout:
              - path: Library/Caches
                backup: exclude
              - path: Library/Caches/Thumbnails
            rules:
              - name: tmp-expiry
                path: tmp
                type: any
                expire: { after: 24h }
              - name: lowercase-names
                path: Documents
                naming: { case: lower }

            """.utf8).write(to: policyFile)
        var engine = try StorageEngine(policyFile: policyFile, root: root)
        engine.waitForLock = false
        let before = try await engine.plan()
                let others = before.actions.filter { $0.kind.name != "delete" }.count
        print("apply-cancel: planned \(before.actions.count) actions, \(others) of them not deletes")

        // The handler is @Sendable (called from the engine's thread): it keeps its note behind a Mutex.
        let cancellation = StorageEngine.Cancellation()
        let cancelledAt = Mutex<Int?>(nil)
        do {
            _ = try await engine.apply(maxDelete: .count(100_000), cancellation: cancellation) { event in
                // After the first group of deletes: stop before the next one.
                if case .applying(let done, _) = event, done > others {
                    cancelledAt.withLock { if $0 == nil { $0 = done } }
                    cancellation.cancel()
                }
            }
            throw CheckFailed(description: "the cancelled apply committed")
        } catch is CancellationError {
        }
        let at = try require(cancelledAt.withLock { $0 }, "an .applying event after the first group of deletes")

        // The deletes that stayed made are file deletes of the plan's first group, not all of them; the folders
        // deleted in that group (staged) were put back whole, and so was every other change.
        let gone = Set(before.actions.filter { $0.kind.name == "delete" }.map(\.path.escaped).filter {
            !FileManager.default.fileExists(atPath: root.appendingPathComponent($0).path)
        })
        try check(!gone.isEmpty && gone.count < files, "\(gone.count) of \(files) deletes stayed made (expected some, not all)")
        try check(gone.allSatisfy { $0.hasPrefix("tmp/f") }, "a delete of a folder stayed made: \(gone.filter { !$0.hasPrefix("tmp/f") }.sorted())")
        for d in 0..<10 {
            try check(FileManager.default.fileExists(atPath: root.appendingPathComponent("tmp/z\(d)/inside").path), "tmp/z\(d) was not put back whole")
        }
        try check(FileManager.default.fileExists(atPath: root.appendingPathComponent("Documents/Notes.TXT").path), "the rename was not rolled back")
        try check(!FileManager.default.fileExists(atPath: root.appendingPathComponent("Library/Caches/Thumbnails").path), "the mkdir was not rolled back")

        // Everything else rolled back: a new plan is the old one less exactly the deletes that stayed made.
        let after = try await engine.plan().actions.map(describe)
        let expected = before.actions.filter { $0.kind.name != "delete" || !gone.contains($0.path.escaped) }.map(describe)
        try check(after == expected, "the plan after the cancel differs: new \(after.filter { !expected.contains($0) }), gone \(expected.filter { !after.contains($0) })")

        // Journaled as cancelled; nothing for recover.
        let last = try require(try engine.journal().last, "a journaled transaction")
        try check(last.outcome == .partiallyRolledBack && last.reason == "cancelled", "journal: \(last.outcome) (\(last.reason ?? "no reason")), expected partially rolled back (cancelled)")
        try check(last.counts == [.delete: gone.count], "journal counts \(last.counts), expected \(gone.count) deletes")
        let recovery = try await engine.recover()
        try check(recovery.nothingToDo, "recover found work after a cancelled apply: \(recovery)")
        print("apply-cancel: cancelled after \(at) of \(before.actions.count) steps: CancellationError; \(gone.count) file deletes stayed made, the other \(before.actions.count - gone.count) actions undone or never made (a new plan has them all); journal: \(last.outcome.rawValue) (\(last.reason ?? "")); recover: nothing to do")
    }

    /// `delete tmp/f0001`, `rename Documents/Notes.TXT -> Documents/notes.txt`.
    static func describe(_ action: Action) -> String {
        switch action.kind {
        case .rename(let to), .trash(let to): "\(action.kind.name) \(action.path.escaped) -> \(to.escaped)"
        default: "\(action.kind.name) \(action.path.escaped)"
        }
    }
}
