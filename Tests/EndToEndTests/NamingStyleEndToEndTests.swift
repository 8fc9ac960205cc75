// Naming styles through the built binary: kebab case with onCollision: report on ugly names (a newline, bytes
// that are not UTF-8), applied and audited; validate --effective keeps the keys.
import Foundation
import Testing

@Suite("naming styles (end to end)")
struct NamingStyleEndToEndTests {
    @Test("kebab renames what it can, reports a taken name and a name that is not UTF-8, and touches nothing else")
    func kebabWithReport() throws {
        let scratch = ScratchDirectory("naming-style")
        let root = scratch.sub("tree")
        try buildTree(at: root, [.dir("docs"), .file("docs/My File.TXT", size: 11), .file("docs/my-file.txt", size: 12),
                                 .file("docs/Bad\nName.Md", size: 13), .rawFile(Array("docs/X".utf8) + [0xFF], size: 14, ageHours: 1)])
        let policy = scratch.path + "/p.yaml"
        try writePolicy(policy, "version: 1\nname: p\nrules:\n  - name: names\n    path: docs\n    naming: { case: kebab, onCollision: report }\n")
        let effective = try policyctl(["validate", "--effective", policy])
        #expect(effective.stdout.contains("    naming: { case: kebab, onCollision: report }\n"), "\(effective)")
        let apply = try policyctl(["apply", "--policy", policy, "--root", root, "--yes"])
        #expect(apply.status == 0, "\(apply)")
        let names = try FileManager.default.contentsOfDirectoryAtPathRaw(root + "/docs")
        #expect(names.contains("bad\nname.md") && !names.contains("Bad\nName.Md"), "\(names)")
        #expect(names.contains("My File.TXT") && names.contains("my-file.txt"), "\(names)")
        #expect(FileManager.default.contents(atPath: root + "/docs/bad\nname.md")?.count == 13)
        let audit = try policyctl(["audit", "--policy", policy, "--root", root])
        #expect(audit.status == 1, "\(audit)")
        #expect(audit.stdout.contains("docs/My File.TXT"), "\(audit)")
        #expect(audit.stdout.contains("but 'my-file.txt' is taken (onCollision: report); not renamed"), "\(audit)")
        #expect(audit.stdout.contains("it cannot be restyled"), "\(audit)")
    }
}

extension FileManager {
    /// The names in a folder as text, the ones that are not UTF-8 left out (FileManager would mangle them).
    func contentsOfDirectoryAtPathRaw(_ path: String) throws -> [String] {
        try contentsOfDirectory(atPath: path).filter { $0.utf8.allSatisfy { $0 != 0xEF } }
    }
}
