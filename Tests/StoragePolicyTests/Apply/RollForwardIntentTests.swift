// The second line of defence for roll-forward deletes: an `unlink` intent read back from a journal is replayed
// only for a non-directory entry inside the root whose full identity it records.
import Foundation
import Testing
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyApply

@Suite("Roll-forward intents") struct RollForwardIntentTests {
    static let identity = EntryIdentity(device: 1, inode: 2, size: 3, modificationTimeNs: 4)

    static func refusal(_ path: RelativePath, _ type: FileType, _ identity: EntryIdentity? = identity) -> String? {
        Intent(op: 1, action: 0, change: .unlink(path: path, type: type), identity: identity).refusal
    }

    @Test("an unlink intent for a directory, for the root, for engine state or without an identity is refused, never replayed")
    func forgedUnlinkRefused() {
        #expect(Self.refusal(RelativePath("tmp/a")!, .regular) == nil)
        #expect(Self.refusal(RelativePath("tmp/l")!, .symlink) == nil)
        #expect(Self.refusal(RelativePath("tmp/d")!, .directory) == "unlink of tmp/d, a directory")
        #expect(Self.refusal(RelativePath("tmp/u")!, .unknown) == "unlink of tmp/u, a unknown")
        #expect(Self.refusal(RelativePath("tmp/a")!, .regular, nil) == "unlink of tmp/a without the identity of what it deletes")
        #expect(Self.refusal(.root, .regular) == "unlink of the root")
        #expect(Self.refusal(RelativePath(".policyctl/journal.jsonl")!, .regular) == "unlink of .policyctl/journal.jsonl, inside the engine's own state")
    }

    @Test("an unlink intent survives the journal: written and read back with its type and identity")
    func roundTrip() throws {
        let intent = Intent(op: 7, action: 3, change: .unlink(path: RelativePath("tmp/a b")!, type: .symlink), identity: Self.identity)
        var w = Transaction.header(id: "20260101T000000Z-0000abcd", sequence: 2, type: .intent)
        intent.encode(into: &w)
        let text = String(decoding: w.finished, as: UTF8.self)
        #expect(text.contains(#""change":"unlink""#) && text.contains(#""entryType":"symlink""#), "\(text)")
        let body = try JSONDecoder().decode(RecordBody.self, from: Data(w.finished))
        #expect(Intent(body) == intent)
    }
}
