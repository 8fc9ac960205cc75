// The descriptor stack subtree walks share: linear in depth, bounded in descriptors, and a folder swapped while
// it was closed is refused when the walk climbs back to it. Real directories under /tmp, a few thousand deep.
import Foundation
import Testing
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem

@Suite("Descriptor stack")
struct DescriptorStackTests {
    /// Makes `depth` nested folders named `d` under `top`, each opened from its parent (linear, any depth).
    private func chain(_ top: DirectoryHandle, depth: Int, siblings: Bool = false) throws {
        var current = top
        for level in 0..<depth {
            try current.makeDirectory(FileName("d")!)
            if siblings { try current.makeDirectory(FileName("s")!) }
            if level % 100 == 0 { _ = try current.openFile(FileName("f")!, options: [.writeOnly, .create]) }
            current = try current.openDirectory(FileName("d")!)
        }
    }

    @Test("down 3,000 levels and back up with at most 128 descriptors: under 3 opens per level, each level found again")
    func descendAndClimb() throws {
        let f = try ApplyFixture()
        try chain(f.root, depth: 3000)
        var stack = DescriptorStack(anchor: f.root)
        var inodes: [UInt64] = []
        var mostOpen = 0
        for _ in 0..<3000 {
            inodes.append(try stack.push(FileName("d")!).status().inode)
            mostOpen = max(mostOpen, stack.openCount)
        }
        #expect(stack.opens == 3000)
        while stack.depth > 1 {
            stack.pop()
            #expect(try stack.top().status().inode == inodes[stack.depth - 1])
            mostOpen = max(mostOpen, stack.openCount)
        }
        #expect(mostOpen <= DescriptorStack.defaultLimit + 1, "\(mostOpen) descriptors held at once")
        // Reopening from the top at every level would take 4.5 million opens.
        #expect(stack.opens < 3 * 3000, "\(stack.opens) opens for 3,000 levels down and up")
        #expect(try stack.top().status().inode == inodes[0])
        #expect(stack.relativePath == RelativePath("d")!)
    }

    @Test("a closed level swapped for another folder of the same name: the climb refuses it (ESTALE), never enters it")
    func swappedLevelRefused() throws {
        let f = try ApplyFixture()
        try chain(f.root, depth: 200)
        var stack = DescriptorStack(anchor: f.root, limit: 8)
        for _ in 0..<200 { try stack.push(FileName("d")!) }
        // d/d (level 1) was closed long ago; swap it for a fresh folder with its own copy of the chain below.
        #expect(rename(f.rootPath + "/d/d", f.rootPath + "/moved") == 0)
        #expect(mkdir(f.rootPath + "/d/d", 0o755) == 0)
        #expect(mkdir(f.rootPath + "/d/d/d", 0o755) == 0)
        var refused: FileSystemError?
        while stack.depth > 3 {
            stack.pop()
            do { _ = try stack.top() } catch { refused = error; break }
        }
        let error = try #require(refused)
        #expect(DescriptorStack.isReplacement(error), "\(error)")
        #expect(error.path == RelativePath("d/d")!)
    }

    @Test("removeTree: a 3,000-deep chain with a sibling folder at every level is removed completely")
    func deepCombRemoved() throws {
        let f = try ApplyFixture()
        f.dir("t")
        try chain(try f.root.openDirectory(FileName("t")!), depth: 3000, siblings: true)
        try f.root.removeTree(FileName("t")!)
        #expect(!f.exists("t"))
    }

    @Test("removeTree past its deadline stops with .pastDeadline (ETIMEDOUT); run again, it finishes")
    func removalStopsAtDeadline() throws {
        let f = try ApplyFixture()
        f.dir("t")
        try chain(try f.root.openDirectory(FileName("t")!), depth: 50)
        #expect(throws: FileSystemError(.pastDeadline, path: RelativePath("t")!, errno: .timedOut)) {
            try f.root.removeTree(FileName("t")!, deadline: .now)
        }
        #expect(f.exists("t/d/d"))
        try f.root.removeTree(FileName("t")!)
        #expect(!f.exists("t"))
    }
}
