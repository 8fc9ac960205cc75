// Issue 25, item 6: an expired tree thousands of folders deep (a co-tenant builds 20,000 levels in seconds) is
// applied in time linear in its depth, and --max-runtime stops a run inside the tree's walks, not after them.
// Checked by outcome and by counting opens (strace), never by comparing timings of two sizes.
import TreeFixture
import Foundation
import StoragePolicy
import Testing

@Suite("An expired tree thousands of folders deep")
struct DeepTreeApplyTests {
    static let policyText = "version: 1\nname: deep\nrules:\n  - name: tmp-expiry\n    path: tmp\n    expire: { after: 24h }\n"

    /// ROOT/tmp/d/d/.../d, `depth` folders below tmp, a file every 100 levels and at the bottom, all dated
    /// three days ago. Made through descriptors (mkdirat, openat, futimens), so building it is linear too.
    private func buildChain(_ root: String, depth: Int) {
        mkdir(root + "/tmp", 0o755)
        let old = timespec(tv_sec: time(nil) - 3 * 86_400, tv_nsec: 0)
        var times = [old, old]
        var fd = open(root + "/tmp", O_RDONLY | O_DIRECTORY)
        for level in 0...depth {
            if level < depth { mkdirat(fd, "d", 0o755) }
            if level > 0 && (level % 100 == 0 || level == depth) {
                let file = openat(fd, "f", O_WRONLY | O_CREAT, 0o644)
                futimens(file, &times)
                close(file)
            }
            // The folder's own times last: its entries are all made.
            if level > 0 { futimens(fd, &times) }
            guard level < depth else { break }
            let child = openat(fd, "d", O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
            close(fd)
            fd = child
        }
        close(fd)
    }

    /// How deep the chain under ROOT/tmp still is (0: tmp holds no `d`).
    private func chainDepth(_ root: String) -> Int {
        var depth = 0
        var fd = open(root + "/tmp", O_RDONLY | O_DIRECTORY)
        while true {
            let child = openat(fd, "d", O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
            close(fd)
            guard child >= 0 else { return depth }
            depth += 1
            fd = child
        }
    }

    /// Every entry of the chain, level by level, with its type, mtime and inode: linear, where `manifest`
    /// reopens each folder from the top.
    private func chainManifest(_ root: String) throws -> [String] {
        var lines: [String] = []
        var directory = try DirectoryHandle.open(root: root + "/tmp")
        var level = 0
        while true {
            var next: DirectoryHandle?
            for entry in try directory.entries().sorted(by: { $0.name.bytes.lexicographicallyPrecedes($1.name.bytes) }) {
                let status = try directory.status(of: entry.name)
                lines.append("\(level) \(String(decoding: entry.name.bytes, as: UTF8.self)) \(status.type.rawValue) \(status.modificationTimeNs) \(status.inode)")
                if entry.name.bytes == Array("d".utf8) { next = try directory.openDirectory(entry.name) }
            }
            guard let next else { return lines }
            directory = next
            level += 1
        }
    }

    private func planned(_ depth: Int, policyText: String = DeepTreeApplyTests.policyText) throws -> (scratch: ScratchDirectory, root: String, plan: String) {
        let scratch = ScratchDirectory("deep")
        let root = scratch.sub("root")
        buildChain(root, depth: depth)
        let policy = scratch.path + "/policy.yaml"
        try writePolicy(policy, policyText)
        let plan = scratch.path + "/plan.json"
        let made = try policyctl(["plan", "--policy", policy, "--root", root, "--out", plan])
        #expect(made.status == 0, "\(made)")
        #expect(made.stdout.contains("delete    tmp/d/"), "one whole-tree delete: \(made.stdout)")
        return (scratch, root, plan)
    }

    @Test("a 3,000-deep expired chain: apply removes it whole, exit 0, and the journal commits")
    func removesDeepChain() throws {
        let (scratch, root, plan) = try planned(3000)
        _ = scratch
        #expect(chainDepth(root) == 3000)
        let run = try policyctl(["apply", plan, "--yes", "--max-delete", "none"])
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.contains("applied: 1 delete"), "\(run)")
        #expect(chainDepth(root) == 0)
        #expect(try manifest(of: root) == ["tmp directory"])
        #expect(try policyctl(["recover", "--root", root]).status == 0)
        #expect(try journalLines(root).contains { $0.contains(#""type":"end""#) && $0.contains(#""outcome":"committed""#) })
    }

    @Test("a 1,000-deep chain costs under 6 opens per level (strace): in-use look, check, check once staged, removal",
          .enabled(if: SyscallBudgetTests.straceWorks))
    func opensLinearInDepth() throws {
        let depth = 1000
        let (scratch, root, plan) = try planned(depth)
        let summary = scratch.path + "/strace.txt"
        let run = try ChildProcess.run("/usr/bin/strace", ["-f", "-c", "-e", "trace=openat,openat2", "-o", summary,
                                                          PolicyctlBinary.path, "apply", plan, "--yes", "--max-delete", "none"])
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        #expect(chainDepth(root) == 0)
        // strace -c: "% time seconds usecs/call calls errors syscall"; the calls column of each open call.
        var opens = 0
        for line in try String(contentsOfFile: summary, encoding: .utf8).split(separator: "\n") {
            let fields = line.split(separator: " ")
            if let name = fields.last, name == "openat" || name == "openat2", fields.count >= 5, let calls = Int(fields[3]) {
                opens += calls
            }
        }
        // One open per level for each of the three looks (in-use, before and after staging) and about two for
        // the removal (down, and up again to each parent for its rmdir); reopening from the top is 500,000.
        #expect(opens > depth, "the tree's folders were opened: \(opens)")
        #expect(opens < 6 * depth, "\(opens) openat/openat2 calls for \(depth) levels")
    }

    @Test("--max-runtime 2s on a chain whose walk takes 3 s or more: stops within 3 s, exit 3, the tree exactly as before; recover has nothing to do",
          .enabled(if: FaultInjection.isCompiledIn))
    func stopsWithinBudget() throws {
        let depth = 3000
        let (scratch, root, plan) = try planned(depth)
        _ = scratch
        #expect(try chainManifest(root).count == 3000 + 30)
        // Every open sleeps 1 ms: the first look into the tree alone takes 3 s (each of its 3,000 levels opened).
        try expectStopped(plan, root: root, budget: 2, within: .seconds(3))
        // With time enough, the same plan removes it.
        let again = try policyctl(["apply", plan, "--yes", "--max-delete", "none", "--max-runtime", "60s"])
        #expect(again.status == 0, "\(again)")
        #expect(chainDepth(root) == 0)
    }

    @Test("--max-runtime 1s with no in-use look (inUse: ignore): the whole-tree check stops inside its walk, within 2 s, exit 3, the tree exactly as before",
          .enabled(if: FaultInjection.isCompiledIn))
    func checkStopsWithinBudget() throws {
        let text = DeepTreeApplyTests.policyText.replacingOccurrences(of: "expire: { after: 24h }", with: "expire: { after: 24h }\n    inUse: ignore")
        let (scratch, root, plan) = try planned(2000, policyText: text)
        _ = scratch
        // Every open sleeps 1 ms: the check before staging opens each of the 2,000 levels, 2 s.
        try expectStopped(plan, root: root, budget: 1, within: .seconds(2))
    }

    /// Applies `plan` with every open slowed by 1 ms and `--max-runtime` of `budget` seconds: it must stop within
    /// `limit` (exit 3, naming the budget) and leave the chain exactly as before, with nothing to recover.
    private func expectStopped(_ plan: String, root: String, budget: Int, within limit: Duration,
                               sourceLocation: SourceLocation = #_sourceLocation) throws {
        let before = try chainManifest(root)
        let started = ContinuousClock.now
        let run = try policyctl(["apply", plan, "--yes", "--max-delete", "none", "--max-runtime", "\(budget)s"],
                                environment: ["POLICYCTL_SLOW_CALLS": "open:1000"])
        let took = ContinuousClock.now - started
        #expect(took < limit, "ran \(took) with a \(budget) s budget", sourceLocation: sourceLocation)
        #expect(run.status == 3, "\(run)", sourceLocation: sourceLocation)
        #expect(run.stderr.contains("ran past --max-runtime \(budget)s"), "\(run)", sourceLocation: sourceLocation)
        #expect(try chainManifest(root) == before, sourceLocation: sourceLocation)
        let recover = try policyctl(["recover", "--root", root])
        #expect(recover.status == 0, "\(recover)", sourceLocation: sourceLocation)
        #expect(recover.stdout.contains("Nothing to recover"), "\(recover)", sourceLocation: sourceLocation)
        #expect(try chainManifest(root) == before, sourceLocation: sourceLocation)
    }
}
