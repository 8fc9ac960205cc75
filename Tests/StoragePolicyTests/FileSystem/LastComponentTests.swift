// An unlink worker names its file by the path's last component cut in place (no FileName made): the calls must
// reach exactly the entry `statusIfPresent(of:)` and `removeFile(_:)` reach with the name made.
import Testing
import TreeFixture
@_spi(Layers) @testable import StoragePolicyFileSystem

@Suite("Last component in place") struct LastComponentTests {
    static let names: [[UInt8]] = [
        Array("a".utf8), [0xFF, 0xFE, 0x2E, 0x74], Array("new\nline".utf8), Array(repeating: 0x6C, count: 255),
        Array("-rf".utf8), Array(" space ".utf8),
    ]

    @Test("status and removal of a file named by a path's last component, in the root and two levels down",
          arguments: [[UInt8](), Array("tmp/sub".utf8)])
    func statusAndRemoval(folder: [UInt8]) throws {
        let tree = try Tree {
            Dir("tmp") { Dir("sub") { for name in Self.names { File(bytes: name, size: 3) } } }
            for name in Self.names { File(bytes: name, size: 7) }
        }
        defer { tree.remove() }
        let root = try DirectoryHandle.open(root: tree.root)
        let dir = folder.isEmpty ? root : try root.openDirectory(at: RelativePath(folder)!)
        for name in Self.names {
            let path = RelativePath(folder.isEmpty ? name : folder + [0x2F] + name)!
            let made = try dir.statusIfPresent(of: FileName(name)!)
            let cut = try dir.statusIfPresent(ofLastComponentOf: path)
            #expect(cut?.identity == made?.identity && cut != nil)
            #expect(cut?.size == (folder.isEmpty ? 7 : 3))
            try dir.removeFile(lastComponentOf: path)
            #expect(try dir.statusIfPresent(of: FileName(name)!) == nil)
            #expect(try dir.statusIfPresent(ofLastComponentOf: path) == nil)
            // Gone: the unlink's error names the folder's path and the file.
            let error = #expect(throws: FileSystemError.self) { try dir.removeFile(lastComponentOf: path) }
            #expect(error?.errno == .noSuchFile)
            #expect(error?.path == dir.path.appending(FileName(name)!))
        }
    }
}
