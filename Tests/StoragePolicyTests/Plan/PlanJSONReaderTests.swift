// The piecewise plan reader (PlanJSONReader) reads every plan file to the Plan `Plan.decode(json:)` gives, in
// any piece size, and leaves whatever it does not take on to JSONDecoder (PlanFile.load then decodes the whole
// file): the same plan or the same error either way, and the SHA-256 of every byte.
import Foundation
import Testing
import TreeFixture
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyPlan
@testable import StoragePolicyApply
@testable import StoragePolicyModel

@Suite("Plan reader: piecewise, as JSONDecoder reads it") struct PlanJSONReaderTests {
    /// Every action kind, identities at the integers' ends, escapes, a non-UTF-8 path, name and value.
    static func everyKind() -> Plan {
        let odd = RelativePath([0x61, 0x2F, 0xFF, 0x01, 0x22])!
        let actions = [
            Action(kind: .delete, path: RelativePath("tmp/a \"b\"\\c\u{1}\t/é😀")!, rule: "expiry",
                   reason: "mtime 2d3h ago > 24h, a reason longer than fifteen bytes", bytes: Int64.max,
                   identity: EntryIdentity(device: UInt64.max, inode: 0, size: Int64.min, modificationTimeNs: -1),
                   type: .regular, entries: 3),
            Action(kind: .delete, path: odd, rule: "expiry", reason: "mtime 2d3h ago > 24h, a reason longer than fifteen bytes",
                   bytes: 0, identity: EntryIdentity(device: 1, inode: 2, size: 3, modificationTimeNs: 4), type: .directory),
            Action(kind: .rename(to: RelativePath("b/c d")!), path: RelativePath("b/C D")!, rule: "naming", reason: "r", type: .symlink),
            Action(kind: .trash(to: odd), path: RelativePath("x/y")!, rule: "forbid", reason: "forbidden"),
            Action(kind: .mkdir, path: RelativePath("Documents/Import")!, rule: "layout", reason: "missing"),
            Action(kind: .setxattr(name: "user.a", value: [0xFF, 0x00]), path: RelativePath("c")!, rule: "backup", reason: "mark"),
            Action(kind: .setxattr(name: "user.b", value: Array("v/1".utf8)), path: RelativePath("c")!, rule: "backup", reason: "mark"),
            Action(kind: .writeTag, path: RelativePath("Library/Caches")!, rule: "backup", reason: "tag"),
            Action(kind: .unmark(name: "com.apple.metadata:com_apple_backup_excludeItem"), path: RelativePath("d")!, rule: "backup", reason: "include"),
            Action(kind: .untag, path: RelativePath("e")!, rule: "backup", reason: "include"),
        ]
        var plan = Plan(policy: "p\u{7F}", root: "/r/ö", createdAt: "2026-01-02T03:04:05Z", evaluatedAtNs: 12, actions: actions,
                        violations: [Violation(rule: "forbid", path: odd, message: "m", severity: .error)],
                        skipped: [SkippedEntry(path: RelativePath("s")!, reason: "EACCES")], notes: ["a note"], entriesScanned: 9,
                        fingerprint: Plan.Fingerprint(policySHA256: "ab", policyPath: "/p.yaml", rootDevice: 5, rootInode: 6))
        plan.asOf = nil
        return plan
    }

    static func layouts(_ plan: Plan) throws -> [[UInt8]] {
        let compact = JSONEncoder()
        return [PlanJSONWriter.data(plan), PlanJSONWriter.data(plan, layout: .encoder), Array(try compact.encode(plan))]
    }

    /// The plan read from `bytes` handed over `size` bytes at a time.
    static func read(_ bytes: [UInt8], pieces size: Int) throws -> Plan {
        var offset = 0
        return try PlanJSONReader.read(sizeHint: bytes.count) {
            guard offset < bytes.count else { return nil }
            defer { offset += size }
            return bytes[offset..<min(bytes.count, offset + size)]
        }
    }

    @Test("plans of every action kind, in both layouts and compact, in pieces of 1, 7 and 64 KiB bytes: JSONDecoder's plan")
    func sameAsDecoder() throws {
        let empty = Plan(policy: "p", root: "/r", createdAt: "2026-01-02T03:04:05Z", evaluatedAtNs: 0)
        for plan in [Self.everyKind(), empty] {
            for bytes in try Self.layouts(plan) {
                let decoded = try Plan.decode(json: bytes)
                #expect(decoded == plan)
                for size in [1, 7, 65536] { #expect(try Self.read(bytes, pieces: size) == decoded) }
            }
        }
    }

    @Test("what the reader does not take on is Unsupported, not guessed at", arguments: [
        (#""bytes" : 0,"#, #""bytes" : 1.5,"#), (#""bytes" : 0,"#, #""bytes" : 1e2,"#), (#""bytes" : 0,"#, #""bytes" : 01,"#),
        (#""rule" : "r""#, #""r\u0075le" : "r""#), (#""rule" : "r""#, #""rule" : "r", "rule" : "q""#),
        (#""reason" : "r","#, #""reason" : "\ud800","#), (#""action" : "untag""#, #""action" : "chmod""#),
        (#""bytes" : 0,"#, #""bytes" : null,"#),
    ])
    func unsupported(_ edit: (String, String)) throws {
        let plan = Plan(policy: "p", root: "/r", createdAt: "2026-01-02T03:04:05Z", evaluatedAtNs: 0,
                        actions: [Action(kind: .untag, path: RelativePath("e")!, rule: "r", reason: "r")])
        let text = String(decoding: PlanJSONWriter.data(plan), as: UTF8.self)
        #expect(text.contains(edit.0))
        let edited = Array(text.replacingOccurrences(of: edit.0, with: edit.1).utf8)
        #expect(throws: PlanJSONReader.Unsupported.self) { try Self.read(edited, pieces: 5) }
    }

    @Test("PlanFile.load: the plan and the SHA-256 of every byte; a file left to JSONDecoder is read again whole, to its plan or its error")
    func load() throws {
        let plan = Self.everyKind()
        let bytes = PlanJSONWriter.data(plan)
        let path = TestScratch.path("plan") + ".json"
        #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
        let loaded = try PlanFile.load(path)
        #expect(loaded.plan == plan)
        #expect(loaded.sha256 == SHA256.hex(bytes))

        // An escaped key: JSONDecoder reads it (as "rule"), the reader leaves it to it.
        let escaped = Array(String(decoding: bytes, as: UTF8.self).replacingOccurrences(of: #""rule" : "naming""#, with: #""r\u0075le" : "naming""#).utf8)
        #expect(escaped != bytes)
        #expect(FileManager.default.createFile(atPath: path, contents: Data(escaped)))
        let fallback = try PlanFile.load(path)
        #expect(fallback.plan == plan)
        #expect(fallback.sha256 == SHA256.hex(escaped))

        // No plan at all: JSONDecoder's own error.
        let broken = Array(#"{"version": 1.5}"#.utf8)
        #expect(FileManager.default.createFile(atPath: path, contents: Data(broken)))
        var expected = ""
        do { _ = try Plan.decode(json: broken) } catch { expected = "\(error)" }
        switch Result(catching: { () throws(PlanFile.LoadError) in try PlanFile.load(path) }) {
        case .success: Issue.record("a broken plan loaded")
        case .failure(.decode(let e)): #expect("\(e)" == expected && !expected.isEmpty)
        case .failure(let other): Issue.record("not a decode error: \(other)")
        }
    }

    @Test("SHA256.Hasher over pieces of any size gives the one-shot digest")
    func hasher() {
        let message = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        for length in [0, 1, 55, 56, 63, 64, 65, 128, 1000] {
            for size in [1, 3, 64, 100] {
                var hasher = SHA256.Hasher()
                var offset = 0
                while offset < length {
                    message[offset..<min(length, offset + size)].withUnsafeBytes { hasher.update($0) }
                    offset += size
                }
                #expect(hasher.hex() == SHA256.hex(message[0..<length]))
            }
        }
    }
}
