// `by: newest` pinned: systemd-tmpfiles' default (abcmABM): the newest of atime, mtime, the birth time where the
// file system records one, and, for non-directories, ctime. Docs/policy-reference.md says so.
import Testing
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyModel

@Suite("by: newest") struct NewestTimestampTests {
    static func status(_ type: FileType, atime: Int64, mtime: Int64, ctime: Int64) -> FileStatus {
        FileStatus(device: 1, inode: 2, type: type, size: 0, allocatedSize: 0, accessTimeNs: atime,
                   modificationTimeNs: mtime, changeTimeNs: ctime)
    }

    @Test("without a birth time, newest is max(atime, mtime, ctime) for files and max(atime, mtime) for directories")
    func pinned() {
        #expect(Ages.timestamp(Self.status(.regular, atime: 1, mtime: 2, ctime: 3), by: .newest) == ("newest (ctime)", 3))
        #expect(Ages.timestamp(Self.status(.regular, atime: 5, mtime: 2, ctime: 3), by: .newest) == ("newest (atime)", 5))
        #expect(Ages.timestamp(Self.status(.directory, atime: 1, mtime: 2, ctime: 9), by: .newest) == ("newest (mtime)", 2))
        #expect(Expire.Timestamp.allCases.map(\.rawValue) == ["mtime", "atime", "ctime", "newest", "birth"])
    }

    @Test("birth judges by btime; with none recorded the entry is never older (kept); newest counts btime where recorded")
    func birth() {
        var s = Self.status(.regular, atime: 1, mtime: 2, ctime: 3)
        #expect(Ages.timestamp(s, by: .birth) == ("btime", .max))
        #expect(!Ages.isOlder(Ages.timestamp(s, by: .birth).ns, than: .seconds(0), now: 100))
        s.birthTimeNs = 50
        #expect(Ages.timestamp(s, by: .birth) == ("btime", 50))
        #expect(Ages.timestamp(s, by: .newest) == ("newest (btime)", 50))
        // A backdated directory (mtime and atime set back; ctime is not counted for directories) is as young as
        // its birth, as tmpfiles' ABM has it.
        var d = Self.status(.directory, atime: 1, mtime: 2, ctime: 90)
        d.birthTimeNs = 80
        #expect(Ages.timestamp(d, by: .newest) == ("newest (btime)", 80))
        d.birthTimeNs = 1
        #expect(Ages.timestamp(d, by: .newest) == ("newest (mtime)", 2))
    }
}
