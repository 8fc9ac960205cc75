// Removing staged trees through descriptors: deeper than PATH_MAX, wider than one listing, symlinks to the
// outside left alone, mount-free. Real directories under /tmp.
import TreeFixture
import Foundation
import Testing
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem

@Suite("Tree removal")
struct TreeRemovalTests {
    @Test("a tree deeper than PATH_MAX and than the descriptor limit is removed completely")
    func deepTree() throws {
        let f = try ApplyFixture()
        f.dir("deep")
        var current = try f.root.openDirectory(FileName("deep")!)
        let name = FileName(String(repeating: "d", count: 40))!
        for level in 0..<300 {
            try current.makeDirectory(name)
            if level % 50 == 0 {
                _ = try current.openFile(FileName("f\(level)")!, options: [.writeOnly, .create])
            }
            current = try current.openDirectory(name)
        }
        _ = try current.openFile(FileName("leaf")!, options: [.writeOnly, .create])
        #expect(300 * 41 > Int(PATH_MAX))
        try f.root.removeTree(FileName("deep")!)
        #expect(!f.exists("deep"))
    }

    @Test("a wide directory with files and subdirectories is removed, and removing again is no error")
    func wideTree() throws {
        let f = try ApplyFixture()
        f.dir("w")
        for i in 0..<300 { f.file("w/f\(i)") }
        for i in 0..<40 { f.dir("w/d\(i)"); f.file("w/d\(i)/x") }
        try f.root.removeTree(FileName("w")!)
        #expect(!f.exists("w"))
        try f.root.removeTree(FileName("w")!)
    }

    @Test("symlinks inside are unlinked, never followed: what they point to survives")
    func symlinksNotFollowed() throws {
        let f = try ApplyFixture()
        f.dir("outside"); f.file("outside/precious"); f.dir("t"); f.dir("t/sub")
        symlink(f.rootPath + "/outside", f.rootPath + "/t/link")
        symlink(f.rootPath + "/outside", f.rootPath + "/t/sub/link2")
        symlink("/etc/passwd", f.rootPath + "/t/etc-link")
        try f.root.removeTree(FileName("t")!)
        #expect(!f.exists("t"))
        #expect(f.exists("outside/precious"))
    }

    @Test("a single file or symlink is simply unlinked")
    func singleEntries() throws {
        let f = try ApplyFixture()
        f.file("a")
        symlink("/", f.rootPath + "/l")
        try f.root.removeTree(FileName("a")!)
        try f.root.removeTree(FileName("l")!)
        #expect(try f.listing().isEmpty)
    }
}

/// The staging purge (and recovery, which uses it) never crosses a bind mount: a staged tree holding one
/// stops with EXDEV at the mount point, and what is mounted there survives. Root only; mounts detached in defer.
@Suite("Tree removal and mounts") struct TreeRemovalMountTests {
    @Test("a staged tree holding a bind mount of an outside folder: removal stops at the mount point, the folder survives",
          .enabled(if: WalkerMountTests.canBindMount))
    func bindMountNotCrossed() throws {
        let f = try ApplyFixture()
        f.dir("outside"); f.file("outside/precious"); f.dir("outside/sub"); f.file("outside/sub/more")
        f.dir("t"); f.dir("t/a"); f.file("t/a/x"); f.dir("t/a/mnt")
        let target = f.rootPath + "/t/a/mnt"
        #expect(mount(f.rootPath + "/outside", target, nil, UInt(MS_BIND), nil) == 0)
        defer { umount2(target, Int32(MNT_DETACH)) }
        #expect(throws: FileSystemError(.mountPoint, path: RelativePath("t/a/mnt")!, errno: .crossDevice)) {
            try f.root.removeTree(FileName("t")!)
        }
        #expect(f.exists("outside/precious"))
        #expect(f.exists("outside/sub/more"))
        #expect(f.exists("t/a/mnt/precious"), "still mounted, kept")
    }

    @Test("a mount point handed to removeTree itself is refused, not entered",
          .enabled(if: WalkerMountTests.canBindMount))
    func mountPointItself() throws {
        let f = try ApplyFixture()
        f.dir("outside"); f.file("outside/precious"); f.dir("mnt")
        let target = f.rootPath + "/mnt"
        #expect(mount(f.rootPath + "/outside", target, nil, UInt(MS_BIND), nil) == 0)
        defer { umount2(target, Int32(MNT_DETACH)) }
        #expect(throws: FileSystemError(.mountPoint, path: RelativePath("mnt")!, errno: .crossDevice)) {
            try f.root.removeTree(FileName("mnt")!)
        }
        #expect(f.exists("outside/precious"))
    }
}
