// Cancellation through the engine's flag: a plan stops before its next directory and makes nothing; an apply
// stops between groups, keeps the file deletes it made, puts back every staged change, journals the rollback
// as `cancelled` and leaves nothing for recover. Trees under /tmp only, a few hundred entries.
import Foundation
import Testing
import Synchronization
import StoragePolicy
import TreeFixture

@Suite("Library: cancellation") struct CancellationTests {
    static let policy = """
        version: 1
        name: cancel
        rules:
          - name: tmp-expiry
            path: tmp
            type: any
            expire: { after: 24h }
        """

    @Test("a plan whose flag is set before it starts throws .cancelled and makes nothing") func cancelledBeforePlan() throws {
        let tree = try Tree { Dir("tmp") { File("old", age: .days(2)) } }
        defer { tree.remove() }
        var options = tree.options()
        options.cancellation = CancellationFlag()
        options.cancellation?.cancel()
        let engine = try StorageEngine(yaml: Self.policy, root: tree.root, planOptions: options)
        do {
            _ = try engine.plan(progress: nil)
            Issue.record("expected a cancellation")
        } catch {
            guard case .cancelled(nil) = error else { Issue.record("wrong case: \(error)"); return }
            #expect(error.description == "cancelled; nothing was changed")
        }
    }

    @Test("a plan cancelled mid-walk stops before its next directory") func cancelledDuringWalk() throws {
        // 200 directories of 20 entries: progress comes every 2,048 entries, so the flag is set after about
        // 100 directories, and the walk must not read all 200.
        let tree = try Tree {
            Dir("tmp") { for d in 0..<200 { Dir("d\(d)") { for f in 0..<20 { File("f\(f)", size: 0) } } } }
        }
        defer { tree.remove() }
        var options = tree.options(threads: 1)
        let flag = CancellationFlag()
        options.cancellation = flag
        let engine = try StorageEngine(yaml: Self.policy, root: tree.root, planOptions: options)
        let seenAtCancel = Mutex<Int?>(nil)
        let seenLast = Mutex(0)
        do {
            _ = try engine.plan { progress in
                seenLast.withLock { $0 = progress.entriesScanned }
                seenAtCancel.withLock { if $0 == nil { $0 = progress.entriesScanned } }
                flag.cancel()
            }
            Issue.record("expected a cancellation")
        } catch {
            guard case .cancelled(nil) = error else { Issue.record("wrong case: \(error)"); return }
        }
        let atCancel = try #require(seenAtCancel.withLock { $0 })
        // One thread: after the cancel, at most the directory being read is finished (21 entries).
        #expect(seenLast.withLock { $0 } <= atCancel + 21)
        #expect(atCancel < 4_201)
    }

    @Test("an apply cancelled after its first group keeps that group's file deletes, puts back its staged directories, journals 'cancelled', leaves nothing to recover")
    func cancelledApply() throws {
        // Deletes run deepest path first, in reverse order: the z directories (staged renames) and f299...f054
        // make the first group of 256 steps; f053...f000 would be the second.
        let tree = try Tree {
            Dir("tmp") {
                for d in 0..<10 { Dir("z\(d)", age: .days(2)) { File("inside", age: .days(2)) } }
                for f in 0..<300 { File(String(format: "f%03d", f), age: .days(2), size: 0) }
            }
        }
        defer { tree.remove() }
        let flag = CancellationFlag()
        var request = ApplyRequest(root: tree.root, source: .policy(try PolicyLoader.load(yaml: Self.policy, file: "cancel.yaml").policy))
        request.planOptions = tree.options()
        request.cancellation = flag
        var events: [String] = []
        do {
            _ = try StorageEngine.apply(request) { event in
                switch event {
                case .applying(let done, _):
                    events.append("applying \(done)")
                    flag.cancel()
                case .failed(let error): events.append("failed \(error)")
                default: break
                }
            }
            Issue.record("expected a cancellation")
        } catch {
            guard case .cancelled(let transaction?) = error else { Issue.record("wrong case: \(error)"); return }
            #expect(events.first == "applying 256")
            #expect(events.last?.hasPrefix("failed cancelled; rolled back transaction \(transaction)") == true)
        }
        let names = Set(Manifest.take(tree.root).map { String(decoding: $0.path, as: UTF8.self) })
        for d in 0..<10 { #expect(names.contains("tmp/z\(d)/inside"), "tmp/z\(d) was put back whole") }
        for f in 0..<54 { #expect(names.contains(String(format: "tmp/f%03d", f))) }
        for f in 54..<300 { #expect(!names.contains(String(format: "tmp/f%03d", f)), "a delete made stays made") }
        let engine = try StorageEngine(yaml: Self.policy, root: tree.root, planOptions: tree.options())
        let journal = try engine.journal()
        #expect(journal.count == 1)
        #expect(journal.last?.outcome == .partiallyRolledBack)
        #expect(journal.last?.reason == "cancelled")
        #expect(journal.last?.counts == [.delete: 246])
        #expect(try engine.recover().nothingToDo)
        #expect(Set(Manifest.take(tree.root).map { String(decoding: $0.path, as: UTF8.self) }) == names)
    }
}
