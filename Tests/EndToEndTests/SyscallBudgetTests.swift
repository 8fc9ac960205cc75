// Issue 20's budget per deleted file, held by counting system calls (strace): beyond the walk's one stat of each
// entry, a file delete costs one stat (the identity check just before it) and one unlink; no rename into staging,
// no stat of the folder after every removal, and a journal fsync per group, not per file.
import TreeFixture
import Foundation
import Testing

@Suite("System calls per deleted file (strace)")
struct SyscallBudgetTests {
    static let straceWorks: Bool = {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/strace") else { return false }
        return (try? ChildProcess.run("/usr/bin/strace", ["-f", "-o", "/dev/null", "/bin/true"]))?.status == 0
    }()

    @Test("apply of 200 expired files among 400 in one folder: 600 stats of its entries, 200 unlinks, no renames, a handful of folder stats and fsyncs",
          .enabled(if: SyscallBudgetTests.straceWorks))
    func perDeletedFile() throws {
        let scratch = ScratchDirectory("syscalls")
        let root = scratch.sub("root")
        let policy = scratch.path + "/policy.yaml"
        try writePolicy(policy, "version: 1\nname: budget\nrules:\n  - name: tmp-expiry\n    path: tmp\n    expire: { after: 24h, by: mtime }\n")
        var nodes: [TreeNode] = [.dir("tmp", ageHours: 1)]
        for i in 0..<400 { nodes.append(.file("tmp/f\(i).dat", size: 0, ageHours: i % 2 == 0 ? 48 : 1)) }
        try buildTree(at: root, nodes)

        let trace = scratch.path + "/strace.out"
        let run = try ChildProcess.run("/usr/bin/strace", ["-f", "-y", "-e", "trace=statx,newfstatat,fstat,unlinkat,renameat2,renameat,rename,fsync,fdatasync",
                                                           "-o", trace, PolicyctlBinary.path, "apply", "--yes", "--policy", policy, "--root", root])
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        var left = 0
        for i in 0..<400 where FileManager.default.fileExists(atPath: root + "/tmp/f\(i).dat") { left += 1 }
        #expect(left == 200)

        // Calls made inside tmp/ (by the descriptor strace -y names), whether on an entry or on the folder itself.
        let lines = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n").filter { !$0.contains("resumed>") }
        let inTmp = lines.filter { $0.contains("<\(root)/tmp>") }
        let entryStats = inTmp.filter { ($0.contains("statx(") || $0.contains("newfstatat(")) && $0.contains(#", "f"#) }
        let folderStats = inTmp.filter { ($0.contains("statx(") || $0.contains("newfstatat(")) && $0.contains(#", """#) }
        let unlinks = inTmp.filter { $0.contains("unlinkat(") }
        let renames = lines.filter { $0.contains("rename") }
        let fsyncs = lines.filter { $0.contains("fsync(") || $0.contains("fdatasync(") }
        // The walk stats all 400, the identity check the 200 it deletes.
        #expect(entryStats.count == 600, "\(entryStats.count) stats of entries")
        #expect(unlinks.count == 200)
        #expect(renames.isEmpty, "\(renames)")
        // The folder: opened and checked at the walk and once per group of steps, never once per removal.
        #expect(folderStats.count < 20, "\(folderStats.count) stats of the folder")
        // The journal: begin, the groups of intents, commit and end, and a few folder syncs.
        #expect(fsyncs.count < 20, "\(fsyncs.count) fsyncs")
    }
}
