// The backup-exclusion reader: an Apple marker counts when its value holds `com.apple.backupd` anywhere (the
// binary plist `isExcludedFromBackup` and `tmutil` write, an XML plist, the bare string), as other readers accept,
// so an Apple tree reads the same from Linux; the Linux marker must be exactly `false`. The Darwin writer (the
// documented calls) cannot run here: off Darwin it declines and the raw bytes are written as before.
import Foundation
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
import Testing
import TreeFixture

@Suite("backup-exclusion markers: what counts as excluded")
struct ExclusionMarkerTests {
    static let apple = (name: Markers.appleBackupAttribute, value: Markers.appleBackupValue)
    static let linux = (name: Markers.linuxBackupAttribute, value: Markers.linuxBackupValue)

    @Test("any Apple value holding com.apple.backupd excludes; others do not")
    func appleValues() {
        let xml = Array("""
        <?xml version="1.0" encoding="UTF-8"?>
        <plist version="1.0"><string>com.apple.backupd</string></plist>
        """.utf8)
        #expect(ExclusionMarker.isAppleExclusion(Markers.appleBackupValue))
        #expect(ExclusionMarker.isAppleExclusion(xml))
        #expect(ExclusionMarker.isAppleExclusion(Array("com.apple.backupd".utf8)))
        #expect(ExclusionMarker.isAppleExclusion([0, 0xFF] + Array("xcom.apple.backupdx".utf8) + [0]))
        #expect(!ExclusionMarker.isAppleExclusion(nil))
        #expect(!ExclusionMarker.isAppleExclusion([]))
        #expect(!ExclusionMarker.isAppleExclusion(Array("com.apple.backup".utf8)))
        #expect(!ExclusionMarker.isAppleExclusion(Array("com.apple.backupD".utf8)))
        #expect(!ExclusionMarker.isAppleExclusion(Array("bplist00".utf8)))
        // The bytes policyctl itself writes where there is no documented call hold the string too.
        #expect(Markers.appleBackupValue.count == 61)
    }

    @Test("satisfied: the Apple marker by any exclusion value, the Linux marker only by exactly 'false'")
    func satisfies() {
        #expect(ExclusionMarker.satisfies(Self.apple, current: Array("<string>com.apple.backupd</string>".utf8)))
        #expect(!ExclusionMarker.satisfies(Self.apple, current: nil))
        #expect(!ExclusionMarker.satisfies(Self.apple, current: Array("false".utf8)))
        #expect(ExclusionMarker.satisfies(Self.linux, current: Array("false".utf8)))
        #expect(!ExclusionMarker.satisfies(Self.linux, current: Array("false\n".utf8)))
        #expect(!ExclusionMarker.satisfies(Self.linux, current: Array("com.apple.backupd".utf8)))
        #expect(!ExclusionMarker.satisfies(Self.linux, current: nil))
    }

    @Test("two Apple exclusions are the same value for apply and rollback; any other attribute compares its bytes")
    func sameValue() {
        let xml = Array("<string>com.apple.backupd</string>".utf8)
        #expect(ExclusionMarker.same(Markers.appleBackupAttribute, Markers.appleBackupValue, xml))
        #expect(!ExclusionMarker.same(Markers.appleBackupAttribute, Markers.appleBackupValue, nil))
        #expect(ExclusionMarker.same(Markers.appleBackupAttribute, nil, nil))
        #expect(!ExclusionMarker.same(Markers.linuxBackupAttribute, Array("false".utf8), Array("False".utf8)))
        #expect(!ExclusionMarker.same("user.x", Markers.appleBackupValue, xml))
        #expect(ExclusionMarker.same("user.x", [1], [1]))
    }

    @Test("off Darwin there is no documented call: the writer declines and the raw bytes are written")
    func noSystemCallOffDarwin() throws {
        #if !canImport(Darwin)
        let path = TestScratch.path("exclusion-marker")
        mkdir(path, 0o755)
        defer { rmdir(path) }
        let dir = try DirectoryHandle.open(root: path)
        #expect(try ExclusionMarker.setThroughSystem(true, of: nil, in: dir) == false)
        #expect(try ExclusionMarker.setThroughSystem(false, of: nil, in: dir) == false)
        #endif
    }
}
