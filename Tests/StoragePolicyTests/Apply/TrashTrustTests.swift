// The trust rule for trash folders as a pure function of a folder's status (owner, mode, type): what passes in
// each role, and that every refusal names the folder, its owner and mode, and the fix. No disk involved.
import TreeFixture
import Testing
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyApply

@Suite("Trash folder trust rule")
struct TrashTrustTests {
    static let me = UInt32(geteuid())
    static let other: UInt32 = me == 12345 ? 12346 : 12345

    private func folder(_ mode: UInt32, owner: UInt32, type: FileType = .directory, links: UInt64 = 1) -> FileStatus {
        FileStatus(device: 1, inode: 2, type: type, permissions: mode, linkCount: links, userID: owner, size: 0, allocatedSize: 0,
                   accessTimeNs: 0, modificationTimeNs: 0, changeTimeNs: 0)
    }

    private let path = RelativePath("Trash")!

    @Test("root's or the euid's folder that no one else can write passes in every role (0755 from mkdir -p too)")
    func trusted() {
        for owner in [0, Self.me] {
            for mode: UInt32 in [0o700, 0o755, 0o750] {
                #expect(TrashTrust.problem(folder(mode, owner: owner), at: path, role: .folder(sharedAllowed: false)) == nil)
                #expect(TrashTrust.problem(folder(mode, owner: owner), at: path, role: .part) == nil)
            }
        }
    }

    @Test("another user's folder, or one group or others can write, is refused naming owner, mode and the fix")
    func refused() throws {
        let foreign = try #require(TrashTrust.problem(folder(0o755, owner: Self.other), at: path, role: .folder(sharedAllowed: true)))
        #expect(foreign.hasPrefix("the trash folder Trash is owned by uid \(Self.other) (mode 0755), not by "))
        #expect(foreign.contains("chown \(Self.me) Trash && chmod go-w Trash"))
        let writable = try #require(TrashTrust.problem(folder(0o777, owner: Self.me), at: path, role: .part))
        #expect(writable.hasPrefix("the trash folder Trash is writable by group or others (owner uid \(Self.me), mode 0777)"))
        #expect(TrashTrust.problem(folder(0o775, owner: 0), at: path, role: .folder(sharedAllowed: false)) != nil)
        let link = try #require(TrashTrust.problem(folder(0o777, owner: 0, type: .symlink), at: path, role: .part))
        #expect(link.hasPrefix("the trash folder Trash is a symlink, not a folder; never followed"))
    }

    @Test("a shared FreeDesktop top folder (root's, sticky, 1777 or 1733) passes only where allowed; its parts must be the euid's 0700")
    func shared() {
        for mode: UInt32 in [0o1777, 0o1733] {
            #expect(TrashTrust.isShared(folder(mode, owner: 0)))
            #expect(TrashTrust.problem(folder(mode, owner: 0), at: path, role: .folder(sharedAllowed: true)) == nil)
            // An app trash keeps its items in the folder itself: never shared.
            #expect(TrashTrust.problem(folder(mode, owner: 0), at: path, role: .folder(sharedAllowed: false)) != nil)
        }
        // Not sticky, or not root's: not the spec's shared folder.
        #expect(!TrashTrust.isShared(folder(0o777, owner: 0)))
        #expect(!TrashTrust.isShared(folder(0o1777, owner: Self.other)))
        #expect(TrashTrust.problem(folder(0o1777, owner: Self.other), at: path, role: .folder(sharedAllowed: true)) != nil)
        let files = RelativePath("Trash/files")!
        #expect(TrashTrust.partRole(under: folder(0o1777, owner: 0)) == .partOfShared)
        #expect(TrashTrust.problem(folder(0o700, owner: Self.me), at: files, role: .partOfShared) == nil)
        #expect(TrashTrust.problem(folder(0o755, owner: Self.me), at: files, role: .partOfShared) != nil)
        let planted = TrashTrust.problem(folder(0o700, owner: Self.other), at: files, role: .partOfShared)
        #expect(planted?.hasPrefix("the trash folder Trash/files is owned by uid \(Self.other) with mode 0700 inside a shared trash folder") == true)
    }

    @Test("a record counts only when root or the euid wrote it, no one else can change it, and it has one link")
    func records() {
        #expect(TrashTrust.recordProblem(folder(0o644, owner: 0, type: .regular)) == nil)
        #expect(TrashTrust.recordProblem(folder(0o600, owner: Self.me, type: .regular)) == nil)
        #expect(TrashTrust.recordProblem(folder(0o644, owner: Self.other, type: .regular)) != nil)
        #expect(TrashTrust.recordProblem(folder(0o666, owner: 0, type: .regular)) != nil)
        #expect(TrashTrust.recordProblem(folder(0o644, owner: 0, type: .regular, links: 2)) != nil)
        #expect(TrashTrust.recordProblem(folder(0o777, owner: 0, type: .symlink)) != nil)
    }

    @Test("a restore goes only into a folder owned by root, the euid or the item's owner")
    func destinations() throws {
        let hooks = RelativePath("victim/.git/hooks")!
        #expect(TrashTrust.destinationProblem(folder(0o1777, owner: 0), at: hooks, itemOwner: 12345) == nil)
        #expect(TrashTrust.destinationProblem(folder(0o700, owner: Self.me), at: hooks, itemOwner: 12345) == nil)
        #expect(TrashTrust.destinationProblem(folder(0o700, owner: 12345), at: hooks, itemOwner: 12345) == nil)
        let why = try #require(TrashTrust.destinationProblem(folder(0o755, owner: 12346), at: hooks, itemOwner: 12345))
        #expect(why.hasPrefix("its destination folder victim/.git/hooks is owned by uid 12346, neither root, uid \(Self.me) nor the item's owner (uid 12345)"))
    }
}
