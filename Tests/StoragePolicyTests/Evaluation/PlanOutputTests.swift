// The plan's two outputs: the streamed JSON must say exactly what the Codable form says (and decode back to
// the same plan), and the text must read as specified, with colour only when asked for.
import Foundation
import Testing
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyPlan
import TreeFixture

@Suite("Plan output") struct PlanOutputTests {
    static func sample() -> Plan {
        let weird = RelativePath([0x74, 0x6D, 0x70, 0x2F, 0xFF, 0x0A, 0x22, 0x5C])!  // tmp/\xff\n"\
        let identity = EntryIdentity(device: 7, inode: 42, size: 100, modificationTimeNs: 1_700_000_000_123_456_789)
        var plan = Plan(policy: "p", root: "/r", createdAt: "2026-01-02T03:04:05Z", evaluatedAtNs: 1_767_323_045_000_000_000,
                        actions: [
                            Action(kind: .delete, path: path("tmp/a.dat"), rule: "tmp-expiry", reason: "mtime 2d ago > 1d",
                                   bytes: 4096, identity: identity, type: .regular),
                            Action(kind: .delete, path: weird, rule: "tmp-expiry", reason: "mtime 3d ago > 1d", bytes: 8192,
                                   identity: identity, type: .directory, entries: 3),
                            Action(kind: .rename(to: path("Docs/a.txt")), path: path("Docs/A.txt"), rule: "lower",
                                   reason: "name has uppercase letters", identity: identity, type: .regular),
                            Action(kind: .trash(to: RelativePath([0x54, 0x2F, 0xFE])!), path: path("Docs/x.sqlite"), rule: "no-db",
                                   reason: "forbidden (matches '**/*.sqlite')", identity: identity, type: .regular),
                            Action(kind: .mkdir, path: path("Library/Caches"), rule: "layout", reason: "layout directory is missing",
                                   type: .directory),
                            Action(kind: .setxattr(name: "user.xdg.robots.backup", value: Array("false".utf8)), path: path("Library"),
                                   rule: "layout", reason: "backup-exclusion marker missing", type: .directory),
                            Action(kind: .setxattr(name: "user.bin", value: [0xFF, 0x00]), path: path("Library"),
                                   rule: "layout", reason: "binary", type: .directory),
                            Action(kind: .writeTag, path: path("Library/Caches"), rule: "layout", reason: "CACHEDIR.TAG missing"),
                        ],
                        violations: [Violation(rule: "no-db", path: weird, message: "forbidden \"x\"", severity: .error)],
                        skipped: [SkippedEntry(path: path("tmp/pipe"), reason: "fifo: left alone")],
                        notes: ["a note"], entriesScanned: 1234,
                        fingerprint: Plan.Fingerprint(policySHA256: "ab", policyPath: "/p.yaml", rootDevice: 1, rootInode: 2))
        plan.sort()
        return plan
    }

    @Test("streamed JSON says what the Codable form says, and decodes to the same plan")
    func json() throws {
        let plan = Self.sample()
        let streamed = Data(PlanJSONWriter.data(plan))
        let encoded = try plan.jsonData()
        let a = try JSONSerialization.jsonObject(with: streamed) as! NSDictionary
        let b = try JSONSerialization.jsonObject(with: encoded) as! NSDictionary
        #expect(a == b)
        #expect(try Plan.decode(json: streamed) == plan)
        #expect(String(decoding: streamed, as: UTF8.self).hasPrefix("{\n  \"actions\" : [\n    {\n      \"action\" : \"rename\",\n      \"bytes\" : 0,\n"))
        // Chunked writing gives the same bytes as one piece.
        var pieces: [[UInt8]] = []
        var writer = PlanJSONWriter { pieces.append($0) }
        try writer.write(plan)
        #expect(pieces.flatMap { $0 } == Array(streamed))
    }

    @Test("an empty plan is valid JSON too")
    func emptyJSON() throws {
        let plan = Plan(policy: "p", root: "/r", createdAt: "2026-01-02T03:04:05Z", evaluatedAtNs: 0)
        let streamed = Data(PlanJSONWriter.data(plan))
        #expect(try Plan.decode(json: streamed) == plan)
    }

    @Test("text: grouped by rule in policy order, human sizes, findings and a summary line")
    func text() {
        let text = PlanRenderer(color: false, ruleOrder: ["tmp-expiry", "no-db", "lower"]).render(Self.sample())
        #expect(text == """
            Plan for policy 'p' on /r
              evaluated 2026-01-02T03:04:05Z, 1,234 entries scanned

            tmp-expiry
              - delete    tmp/a.dat  4.0 KiB  mtime 2d ago > 1d
              - delete    tmp/\\xff\\n"\\\\/  8.0 KiB, 3 entries  mtime 3d ago > 1d

            no-db
              ~ trash     Docs/x.sqlite -> T/\\xfe  forbidden (matches '**/*.sqlite')

            lower
              ~ rename    Docs/A.txt -> a.txt  name has uppercase letters

            layout
              * setxattr  Library  user.xdg.robots.backup=false  backup-exclusion marker missing
              * setxattr  Library  user.bin=\\xff\\x00  binary
              + mkdir     Library/Caches  layout directory is missing
              * write-tag Library/Caches  CACHEDIR.TAG missing

            Violations (1):
              error   no-db  tmp/\\xff\\n"\\\\: forbidden "x"

            Skipped (1):
              tmp/pipe: fifo: left alone

            Notes:
              a note

            Freed per rule: tmp-expiry 12.0 KiB
            Plan: 1 folder and 1 file, 4 entries to delete (12.0 KiB freed), 1 to rename, 1 to move to the trash, 1 to create, 2 markers to set, 1 cache tag to write; 1 violation, 1 skipped.

            """)
        #expect(!text.contains("\u{1B}"))
        let coloured = PlanRenderer(color: true).render(Self.sample())
        #expect(coloured.contains("\u{1B}[31m- delete   \u{1B}[0m"))
    }

    @Test("an empty plan says so")
    func noChanges() {
        let plan = Plan(policy: "p", root: "/r", createdAt: "2026-01-02T03:04:05Z", evaluatedAtNs: 0, entriesScanned: 5)
        #expect(PlanRenderer().render(plan).hasSuffix("\nNo changes. 0 to delete (0 B freed), 0 to rename, 0 to move to the trash, 0 to create, 0 markers to set, 0 cache tags to write; 0 violations, 0 skipped.\n"))
    }
}
