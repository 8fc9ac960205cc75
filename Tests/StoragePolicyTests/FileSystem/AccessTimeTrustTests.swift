// Darwin's atime trust is decided from statfs f_flags alone; the decision table runs on Linux, where the flags
// are never read (Linux keeps its statvfs reading, CPosix.c).
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyEvaluation
import Testing
import TreeFixture

@Suite("atime trust from Darwin's statfs f_flags")
struct AccessTimeTrustTests {
    /// f_flags and the mode each must give.
    static let table: [(flags: UInt64, mode: Int)] = [
        (UInt64(0), AccessTimeTrust.lazy),
        (0x0000_1000, AccessTimeTrust.lazy),                // MNT_LOCAL: still lazy
        (0x0080_1000, AccessTimeTrust.lazy),                // MNT_LOCAL | MNT_JOURNALED
        (0x1000_0000, AccessTimeTrust.never),               // MNT_NOATIME
        (0x8000_0000, AccessTimeTrust.strict),              // MNT_STRICTATIME
        (0x8000_1000, AccessTimeTrust.strict),              // MNT_STRICTATIME | MNT_LOCAL
        (0x9000_0000, AccessTimeTrust.never),               // both: nothing is written
        (0xFFFF_FFFF_0000_0000, AccessTimeTrust.lazy),      // high bits mean nothing here
    ]

    @Test("noatime never updates, strictatime always, anything else lazily", arguments: table)
    func darwinFlags(flags: UInt64, mode: Int) {
        #expect(AccessTimeTrust.darwinMode(flags: flags) == mode)
    }

    @Test("the constants are <sys/mount.h>'s, and the modes are the ones AccessTimeNotes reads")
    func constants() {
        #expect(AccessTimeTrust.darwinNoAtime == 0x1000_0000 && AccessTimeTrust.darwinStrictAtime == 0x8000_0000)
        #expect([AccessTimeTrust.strict, AccessTimeTrust.relatime, AccessTimeTrust.never, AccessTimeTrust.lazy] == [0, 1, 2, 3])
    }

    @Test("a lazy mount gets its own note; Linux's notes are unchanged")
    func lazyNote() throws {
        let rules = [rule("by-atime", "tmp", expire(.hours(24), by: .atime))].enumerated().map {
            CompiledRule(index: $0.offset, rule: $0.element)
        }
        #expect(AccessTimeNotes.notes(rules) { _ in AccessTimeTrust.lazy }
                == ["rule 'by-atime' judges by atime; tmp is on a mount without strictatime: atime is updated lazily, so a read may not keep a file"])
        #expect(AccessTimeNotes.notes(rules) { _ in AccessTimeTrust.relatime }
                == ["rule 'by-atime' judges by atime; tmp is on a relatime mount: atime is updated at most once a day"])
        #expect(AccessTimeNotes.notes(rules) { _ in AccessTimeTrust.strict } == [])
    }
}
