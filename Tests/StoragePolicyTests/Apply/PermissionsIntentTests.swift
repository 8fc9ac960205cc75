// The journal's `permissions` change (layout mode, owner and group): what it records reads back as written,
// and recovery refuses a record it could not have written (the root, a previous mode with setuid, previous
// values without the directory's identity).
import Foundation
import Testing
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyApply

@Suite("Journal permissions intent") struct PermissionsIntentTests {
    static let identity = EntryIdentity(device: 3, inode: 4, size: 4096, modificationTimeNs: 5)

    static func readBack(_ intent: Intent) throws -> Intent? {
        var w = Transaction.header(id: "20260101T000000Z-0000abcd", sequence: 2, type: .intent)
        intent.encode(into: &w)
        return Intent(try JSONDecoder().decode(RecordBody.self, from: Data(w.finished)))
    }

    @Test("a repair and a creation read back as written; only the fields set are recorded")
    func roundTrip() throws {
        let repair = Intent(op: 2, action: 1, change: .permissions(path: RelativePath("spool/in")!,
                                                                   set: Permissions(mode: 0o2750, owner: nil, group: 12346),
                                                                   previous: Permissions(mode: 0o755, owner: nil, group: 0)),
                            identity: Self.identity)
        #expect(try Self.readBack(repair) == repair)
        var w = Transaction.header(id: "20260101T000000Z-0000abcd", sequence: 2, type: .intent)
        repair.encode(into: &w)
        let text = String(decoding: w.finished, as: UTF8.self)
        #expect(text.contains("\"setMode\":1512") && text.contains("\"previousGid\":0") && !text.contains("Uid"), "\(text)")
        let created = Intent(op: 1, action: 0, change: .permissions(path: RelativePath("new")!,
                                                                    set: Permissions(mode: 0o700, owner: 12345, group: nil),
                                                                    previous: nil), identity: Self.identity)
        #expect(try Self.readBack(created) == created)
        #expect(repair.refusal == nil && created.refusal == nil)
    }

    @Test("the root, a setuid mode to put back, and previous values without an identity are refused")
    func refusals() {
        let set = Permissions(mode: 0o700, owner: nil, group: nil)
        func refusal(_ path: RelativePath, previous: Permissions?, identity: EntryIdentity? = Self.identity) -> String? {
            Intent(op: 1, action: 0, change: .permissions(path: path, set: set, previous: previous), identity: identity).refusal
        }
        #expect(refusal(.root, previous: nil) == "permissions of the root")
        #expect(refusal(RelativePath("a")!, previous: Permissions(mode: 0o4755, owner: nil, group: nil))
                == "permissions of a back to setuid mode 4755")
        #expect(refusal(RelativePath("a")!, previous: Permissions(mode: 0o755, owner: nil, group: nil), identity: nil)
                == "permissions of a without the identity of the directory")
        #expect(refusal(RelativePath(".policyctl/x")!, previous: nil) == "permissions of .policyctl/x, inside the engine's own state")
    }

    @Test("a mode above 07777 in a record is a damaged record, never applied")
    func outOfRange() throws {
        let json = #"{"tx":"20260101T000000Z-0000abcd","seq":2,"type":"intent","op":1,"action":0,"change":"permissions","path":"a","setMode":65535}"#
        #expect(Intent(try JSONDecoder().decode(RecordBody.self, from: Data(json.utf8))) == nil)
    }
}
