// End-to-end tests of `policyctl plan` and `explain`: the built binary over generated trees, each expected
// plan written out by hand. Covers every rule kind, hostile entries, exit codes, faults and fd limits.
import Foundation
import Testing
import StoragePolicy
import TreeFixture

/// Runs any executable (setpriv, sh) with output in files, the way PolicyctlBinary runs policyctl.
enum ChildProcess {
    static func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws -> PolicyctlBinary.Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env["NO_COLOR"] = "1"
        for (k, v) in environment { env[k] = v }
        process.environment = env
        let scratch = URL(fileURLWithPath: TestScratch.path("cmd"))
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let outURL = scratch.appendingPathComponent("out"), errURL = scratch.appendingPathComponent("err")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let out = try FileHandle(forWritingTo: outURL), err = try FileHandle(forWritingTo: errURL)
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        try out.close(); try err.close()
        let outData = try Data(contentsOf: outURL), errData = try Data(contentsOf: errURL)
        return PolicyctlBinary.Result(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                                      stderr: String(decoding: errData, as: UTF8.self), stdoutData: outData)
    }
}

/// A plan as the JSON says it, read without the library's decoder.
struct PlanJSON {
    var object: [String: Any]
    init(_ data: Data) throws {
        object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }
    var actions: [[String: Any]] { object["actions"] as? [[String: Any]] ?? [] }
    var skipped: [[String: Any]] { object["skipped"] as? [[String: Any]] ?? [] }
    var violations: [[String: Any]] { object["violations"] as? [[String: Any]] ?? [] }

    /// `delete tmp/a.dat`, `rename A.txt -> a.txt`, with non-UTF-8 paths taken from pathBase64 and escaped.
    var lines: [String] {
        actions.map { a in
            var line = "\(a["action"]!) \(Self.path(a, "path", "pathBase64"))"
            if a["to"] != nil { line += " -> " + Self.path(a, "to", "toBase64") }
            return line
        }
    }
    var skippedLines: [String] { skipped.map { "\(Self.path($0, "path", "pathBase64")): \($0["reason"]!)" } }

    static func path(_ o: [String: Any], _ key: String, _ base64Key: String) -> String {
        if let b64 = o[base64Key] as? String, let data = Data(base64Encoded: b64) {
            return RelativePath(Array(data))!.escaped
        }
        return RelativePath(Array((o[key] as! String).utf8))!.escaped
    }
}

@Suite("policyctl plan") struct PlanCommandTests {
    static let deepName = "nested-directory-level"

    /// The tree every rule kind meets, with hostile entries mixed in.
    static func containerTree(outside: String) throws -> Tree {
        // The clock is read before the tree is written (the trash stamps encode dates from it), so this tree is
        // only planned, never applied (no ctime check), by a binary whose clock is later: every age sits at least
        // 50 minutes from its rule's limit (fresh.tmp, 10 min against 1h), a margin a busy machine cannot eat.
        let now = Tree.currentTimeNs()
        func stamp(_ age: PolicyDuration) -> [(String, [UInt8])] {
            [(Markers.trashStampAttribute, Array(String((now - age.nanoseconds) / 1_000_000_000).utf8))]
        }
        return try Tree(now: now) {
            Dir("tmp") {
                File("old.dat", age: .hours(25))
                File("new.dat", age: .hours(1))
                File(bytes: Array("f".utf8) + [0xFF] + Array(".dat".utf8), age: .days(2))
                File("line\nbreak", age: .days(2))
                FIFO("pipe", age: .days(2))
                Symlink("outside-link", to: outside, age: .days(2))
                File("hard", age: .days(2))
                HardLink("hard-link", to: "hard", age: .days(2))
                Dir("deep") { Nest(Self.deepName, depth: 200) { File("leaf.dat", age: .days(2)) } }
            }
            Dir("Documents") {
                File("dl.tmp", age: .hours(2))
                File("fresh.tmp", age: .minutes(10))
                Dir("UserFiles") {
                    File("Notes.sqlite")
                    File("Letter.txt")
                    File("letter-two.txt")
                    Dir(".Trash") {
                        File("old-item", xattrs: stamp(.days(40)))
                        File("fresh-item", xattrs: stamp(.days(1)))
                    }
                }
            }
            Dir("Library") {
                Dir("Caches") {
                    Dir("Thumbnails") {
                        for d in 1...5 { File("t\(d).png", age: .days(Int64(d)), size: 10_000) }
                    }
                    Dir("Downloading")
                }
            }
        }
    }

    static func policy(quotaMax: Int64) -> String {
        """
        version: 1
        name: e2e
        layout:
          - path: Documents/UserFiles
          - path: Documents/Inbox
          - path: Library/Caches/Thumbnails
            backup: exclude
            cacheTag: true
        rules:
          - name: tmp-expiry
            path: tmp
            expire: { after: 24h }
          - name: download-residue
            path: Documents
            match: ["**/*.tmp"]
            expire: { after: 1h }
          - name: trash-retention
            path: Documents/UserFiles/.Trash
            trash: { retain: 30d }
          - name: thumbnail-quota
            path: Library/Caches/Thumbnails
            quota: { max: \(quotaMax)B, evict: oldest }
          - name: lowercase-names
            path: Documents/UserFiles
            match: ["**/*.txt"]
            exclude: [".Trash/**"]
            naming: { case: lower }
          - name: no-private-data
            path: Documents/UserFiles
            forbid: ["**/*.sqlite"]
          - name: downloads-backup
            path: Library/Caches/Downloading
            backup: exclude

        """
    }

    /// A folder for policies and plan files, readable by everyone (for the run as nobody).
    static func workspace(_ files: [String: String]) throws -> Tree {
        let work = try Tree { for (name, text) in files { File(name, contents: text) } }
        chmod(work.root, 0o755)
        return work
    }

    @Test("every rule kind, hostile names, a symlink out, a hard link, a FIFO and 200 levels, end to end")
    func fullPolicy() throws {
        let outside = try Tree { Dir("victim") { File("precious", age: .days(90)) } }
        defer { outside.remove() }
        let tree = try Self.containerTree(outside: outside.root + "/victim")
        defer { tree.remove() }
        let thumbnails = (1...5).reduce(Int64(0)) { $0 + allocated(tree, "Library/Caches/Thumbnails/t\($1).png") }
        let work = try Self.workspace(["policy.yaml": Self.policy(quotaMax: thumbnails - 1)])
        defer { work.remove() }
        let before = Manifest.take(tree.root), outsideBefore = Manifest.take(outside.root)

        let r = try PolicyctlBinary.run(["plan", "--policy", work.root + "/policy.yaml", "--root", tree.root, "--format", "json"])
        #expect(r.status == 0, "\(r.stderr)")
        let plan = try PlanJSON(r.stdoutData)
        let deep = "tmp/deep/" + Array(repeating: Self.deepName, count: 200).joined(separator: "/") + "/leaf.dat"
        // In plan order: by path bytes ('U' sorts before 'd'), then rule, then action.
        let expected = [
            "mkdir Documents/Inbox",
            "delete Documents/UserFiles/.Trash/old-item",
            "rename Documents/UserFiles/Letter.txt -> Documents/UserFiles/letter.txt",
            "trash Documents/UserFiles/Notes.sqlite -> Documents/UserFiles/.Trash/Notes.sqlite",
            "delete Documents/dl.tmp",
            "setxattr Library/Caches/Downloading",
            "setxattr Library/Caches/Thumbnails",
            "write-tag Library/Caches/Thumbnails",
            "delete Library/Caches/Thumbnails/t5.png",
            "delete " + deep,
            "delete tmp/f\\xff.dat",
            "delete tmp/hard",
            "delete tmp/hard-link",
            "delete tmp/line\\nbreak",
            "delete tmp/old.dat",
            "delete tmp/outside-link",
        ]
        #expect(plan.lines == expected)
        #expect(plan.skippedLines == ["tmp/pipe: fifo: not a regular file, directory or symlink; left alone"])
        #expect(plan.violations.isEmpty)

        // The JSON carries what apply needs: exact bytes, identity, sizes.
        let invalid = try #require(plan.actions.first { ($0["path"] as? String)?.hasPrefix("tmp/f") == true })
        #expect(invalid["pathBase64"] as? String == Data(Array("tmp/f".utf8) + [0xFF] + Array(".dat".utf8)).base64EncodedString())
        let old = try #require(plan.actions.first { $0["path"] as? String == "tmp/old.dat" })
        #expect(old["rule"] as? String == "tmp-expiry")
        #expect((old["reason"] as? String)?.hasSuffix(" ago > 1d") == true)
        #expect(old["bytes"] as? Int64 == allocated(tree, "tmp/old.dat"))
        let identity = try #require(old["identity"] as? [String: Any])
        #expect(identity["size"] as? Int == 100)
        #expect(Set(identity.keys) == ["dev", "ino", "size", "mtimeNs"])
        #expect(plan.actions.filter { ($0["path"] as? String)?.hasPrefix("tmp/hard") == true }.allSatisfy { $0["bytes"] as? Int == 0 })
        let link = try #require(plan.actions.first { $0["path"] as? String == "tmp/outside-link" })
        #expect(link["type"] as? String == "symlink")
        let fingerprint = try #require(plan.object["fingerprint"] as? [String: Any])
        #expect(fingerprint["policyPath"] as? String == work.root + "/policy.yaml")
        #expect((fingerprint["policySHA256"] as? String)?.count == 64)

        // Planning changed nothing, inside the root or outside it.
        #expect(Manifest.take(tree.root) == before)
        #expect(Manifest.take(outside.root) == outsideBefore)

        // The text form: grouped by rule in policy order, and a summary that adds up.
        let text = try PolicyctlBinary.run(["plan", "--policy", work.root + "/policy.yaml", "--root", tree.root])
        #expect(text.status == 0)
        let headers = text.stdout.split(separator: "\n").filter { !$0.hasPrefix(" ") && !$0.isEmpty }.map(String.init)
        // Last: Skipped, the freed lines (per rule, per volume) and the summary.
        #expect(Array(headers.dropFirst().dropLast(4)) == ["tmp-expiry", "download-residue", "trash-retention", "thumbnail-quota",
                                                          "lowercase-names", "no-private-data", "downloads-backup", "layout"])
        let freed = try #require((plan.object["summary"] as? [String: Any])?["bytesFreed"] as? Int64)
        let byRule = try #require((plan.object["summary"] as? [String: Any])?["bytesFreedByRule"] as? [String: Int64])
        #expect(byRule.values.reduce(0, +) == freed && byRule.keys.sorted() == ["download-residue", "thumbnail-quota", "tmp-expiry", "trash-retention"], "\(byRule)")
        #expect(headers.contains { $0.hasPrefix("Freed on the root's volume (device ") && $0.hasSuffix("): \(ByteSize.human(freed))") }, "\(headers)")
        #expect(text.stdout.hasSuffix("\nPlan: 10 to delete (\(ByteSize.human(freed)) freed), 1 to rename, 1 to move to the trash, 1 to create, 2 markers to set, 1 cache tag to write; 0 violations, 1 skipped.\n"))
        #expect(!text.stderr.contains("scanning"))  // no progress line without a terminal
    }

    @Test("a missing required option is a usage error (64) naming it, the same words in every command",
          arguments: [(["plan", "--root", "/tmp"], "--policy <file>"), (["plan", "--policy", "p.yaml"], "--root <dir>"),
                      (["explain", "--root", "/tmp", "x"], "--policy <file>"), (["recover"], "--root <dir>"),
                      (["journal"], "--root <dir>"), (["undo", "tx"], "--root <dir>"), (["trash", "x"], "--root <dir>"),
                      (["schedule", "--root", "/tmp", "--systemd"], "--policy <file>")])
    func missingRequiredOption(arguments: [String], option: String) throws {
        let r = try PolicyctlBinary.run(arguments)
        #expect(r.status == 64, "\(r)")
        #expect(r.stderr.contains("Missing expected option '\(option)'"), "\(r.stderr)")
    }

    @Test("an option value that does not parse is a usage error (64) quoting it and what is accepted",
          arguments: [(["apply", "--policy", "p.yaml", "--root", "/tmp", "--yes", "--max-delete", "lots"],
                       "The value 'lots' is invalid for '--max-delete <N|N%|none>' (a whole number, a percentage such as 5%, or none)"),
                      (["apply", "--policy", "p.yaml", "--root", "/tmp", "--yes", "--max-runtime", "soon"],
                       "The value 'soon' is invalid for '--max-runtime <duration>' ("),
                      (["journal", "--root", "/tmp", "--last", "0"], "The value '0' is invalid for '--last <N>' (a positive whole number)")])
    func invalidOptionValue(arguments: [String], message: String) throws {
        let r = try PolicyctlBinary.run(arguments)
        #expect(r.status == 64, "\(r)")
        #expect(r.stderr.contains(message), "\(r.stderr)")
    }

    @Test("--detailed-exitcode: 2 with changes pending, 0 without; --out writes the same JSON atomically")
    func exitCodesAndOut() throws {
        let tree = try Tree { Dir("tmp") { File("old", age: .days(2)) } }
        defer { tree.remove() }
        let work = try Self.workspace([
            "p.yaml": "version: 1\nname: p\nrules:\n  - name: tmp-expiry\n    path: tmp\n    expire: 24h\n",
            "none.yaml": "version: 1\nname: none\nrules:\n  - name: tmp-expiry\n    path: tmp\n    expire: 30d\n",
        ])
        defer { work.remove() }
        let base = ["plan", "--root", tree.root]
        #expect(try PolicyctlBinary.run(base + ["--policy", work.root + "/p.yaml"]).status == 0)
        #expect(try PolicyctlBinary.run(base + ["--policy", work.root + "/p.yaml", "--detailed-exitcode"]).status == 2)
        #expect(try PolicyctlBinary.run(base + ["--policy", work.root + "/none.yaml", "--detailed-exitcode"]).status == 0)

        let out = work.root + "/plan.json"
        let r = try PolicyctlBinary.run(base + ["--policy", work.root + "/p.yaml", "--format", "json", "--out", out])
        #expect(r.status == 0)
        let saved = try Data(contentsOf: URL(fileURLWithPath: out))
        #expect(saved == r.stdoutData)
        #expect(try PlanJSON(saved).lines == ["delete tmp/old"])
        #expect(try Plan.decode(json: saved).actions.map(\.path) == [RelativePath("tmp/old")!])
        #expect(try FileManager.default.contentsOfDirectory(atPath: work.root).sorted() == ["none.yaml", "p.yaml", "plan.json"])
    }

    @Test("--out to a device or FIFO writes into it and never replaces it with a file", .enabled(if: getuid() == 0))
    func outToDevice() throws {
        let tree = try Tree { Dir("tmp") { File("old", age: .days(2)) } }
        defer { tree.remove() }
        let work = try Self.workspace(["p.yaml": "version: 1\nname: p\nrules:\n  - name: tmp-expiry\n    path: tmp\n    expire: 24h\n"])
        defer { work.remove() }
        // A private null device in the test's own folder: never the system's /dev/null.
        let device = work.root + "/null"
        #expect(mknod(device, S_IFCHR | 0o666, dev_t((1 << 8) | 3)  /* makedev(1, 3) */) == 0)
        let r = try PolicyctlBinary.run(["plan", "--policy", work.root + "/p.yaml", "--root", tree.root, "--out", device])
        #expect(r.status == 0, "\(r.stderr)")
        var s = stat()
        #expect(lstat(device, &s) == 0)
        #expect(s.st_mode & S_IFMT == S_IFCHR)
        #expect(try FileManager.default.contentsOfDirectory(atPath: work.root).sorted() == ["null", "p.yaml"])
    }

    @Test("configuration errors are not findings: 65 invalid policy, 64 usage and refused roots, 74 missing root")
    func errors() throws {
        let tree = try Tree { Dir("tmp") }
        defer { tree.remove() }
        let work = try Self.workspace([
            "bad.yaml": "version: 1\nname: bad\nrules:\n  - name: tmp-expiry\n    path: tmp\n    expire: { afer: 24h }\n",
            "p.yaml": "version: 1\nname: p\nrules:\n  - name: tmp-expiry\n    path: tmp\n    expire: 24h\n",
        ])
        defer { work.remove() }
        let bad = try PolicyctlBinary.run(["plan", "--policy", work.root + "/bad.yaml", "--root", tree.root])
        #expect(bad.status == 65)
        #expect(bad.stderr.contains(work.root + "/bad.yaml:6:15: error: "), "\(bad.stderr)")
        #expect(bad.stdout.isEmpty)

        let p = work.root + "/p.yaml"
        #expect(try PolicyctlBinary.run(["plan", "--policy", p]).status == 64)
        let slash = try PolicyctlBinary.run(["plan", "--policy", p, "--root", "/"])
        #expect(slash.status == 64)
        #expect(slash.stderr.contains("refusing to use '/' as the root"))
        #expect(try PolicyctlBinary.run(["plan", "--policy", p, "--root", "/usr"]).status == 64)
        let home = try PolicyctlBinary.run(["plan", "--policy", p, "--root", tree.root], environment: ["HOME": tree.root])
        #expect(home.status == 64)
        #expect(home.stderr.contains("home directory"))
        #expect(try PolicyctlBinary.run(["plan", "--policy", p, "--root", tree.root, "--force-root"], environment: ["HOME": tree.root]).status == 0)
        let missing = try PolicyctlBinary.run(["plan", "--policy", p, "--root", tree.root + "/nonexistent"])
        #expect(missing.status == 74)
        #expect(missing.stderr.contains("No such file or directory (ENOENT)"))
    }

    /// True when this process is root and `setpriv` can run the binary as nobody (the build folder must be
    /// reachable by nobody).
    static let canRunAsNobody: Bool = {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") else { return false }
        let r = try? ChildProcess.run("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", PolicyctlBinary.path, "version"])
        return r?.status == 0
    }()

    @Test("an unreadable directory (mode 000, run as nobody) is skipped and the walk goes on",
          .enabled(if: PlanCommandTests.canRunAsNobody))
    func unreadableAsNobody() throws {
        let tree = try Tree {
            Dir("tmp") {
                Dir("locked", mode: 0o000) { File("secret", age: .days(2)) }
                File("old", age: .days(2))
            }
        }
        defer { tree.remove() }
        chmod(tree.root, 0o755)
        let work = try Self.workspace(["p.yaml": "version: 1\nname: p\nrules:\n  - name: tmp-expiry\n    path: tmp\n    expire: 24h\n"])
        defer { work.remove() }
        let r = try ChildProcess.run("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", PolicyctlBinary.path,
                                                     "plan", "--policy", work.root + "/p.yaml", "--root", tree.root, "--format", "json"])
        #expect(r.status == 0, "\(r.stderr)")
        let plan = try PlanJSON(r.stdoutData)
        #expect(plan.lines == ["delete tmp/old"])
        #expect(plan.skippedLines == ["tmp/locked: cannot read directory: Permission denied (EACCES)"])
    }

    @Test("a scope behind a directory nobody may open (run as nobody) is a violation naming that directory and the errno",
          .enabled(if: PlanCommandTests.canRunAsNobody))
    func unreadableScopeAsNobody() throws {
        let tree = try Tree {
            Dir("locked", mode: 0o000) { Dir("tmp") { File("old", age: .days(2)) } }
            Dir("open") { File("old", age: .days(2)) }
        }
        defer { tree.remove() }
        chmod(tree.root, 0o755)
        let work = try Self.workspace(["p.yaml": "version: 1\nname: p\nrules:\n  - name: locked-expiry\n    path: locked/tmp\n    expire: 24h\n  - name: open-expiry\n    path: open\n    expire: 24h\n"])
        defer { work.remove() }
        let r = try ChildProcess.run("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", PolicyctlBinary.path,
                                                     "plan", "--policy", work.root + "/p.yaml", "--root", tree.root, "--format", "json"])
        #expect(r.status == 0, "\(r.stderr)")
        let plan = try PlanJSON(r.stdoutData)
        #expect(plan.lines == ["delete open/old"])
        let violations = plan.violations.map { "\($0["rule"]!): \($0["path"]!): \($0["message"]!)" }
        #expect(violations == ["locked-expiry: locked: locked, on the way to the scope locked/tmp, is a directory that cannot be opened: Permission denied (EACCES); the rule judged nothing there"])
    }

    @Test("faults injected into the binary: a stat that finds the entry gone, a directory that cannot be opened")
    func injectedFaults() throws {
        let tree = try Tree {
            Dir("tmp") {
                File("a.dat", age: .days(2))
                File("b.dat", age: .days(2))
                Dir("sub") { File("c.dat", age: .days(2)) }
            }
        }
        defer { tree.remove() }
        let work = try Self.workspace(["p.yaml": "version: 1\nname: p\nrules:\n  - name: tmp-expiry\n    path: tmp\n    expire: 24h\n"])
        defer { work.remove() }
        let args = ["plan", "--policy", work.root + "/p.yaml", "--root", tree.root, "--format", "json"]
        let all = ["tmp/a.dat", "tmp/b.dat", "tmp/sub/c.dat"]
        var sawVanished = false, sawUnreadable = false
        for (kind, errno) in [("stat", "ENOENT"), ("open", "EACCES")] {
            // The policy's trust walk and the scope check come first: one stat and open per folder on their way.
            for n in 1...40 {
                let r = try PolicyctlBinary.run(args, environment: ["POLICYCTL_FAULTS": "\(kind):\(n):\(errno)"])
                // A fault on the policy file or the root itself is an I/O error; anywhere else the walk goes on.
                #expect(r.status == 0 || r.status == 74, "\(kind):\(n): \(r.stderr)")
                guard r.status == 0 else { continue }
                let plan = try PlanJSON(r.stdoutData)
                let deleted = plan.lines.map { String($0.dropFirst("delete ".count)) }
                let skipped = plan.skipped.map { $0["path"] as! String }
                // Every old file is either planned for deletion or reported; none is silently lost.
                let covered = Set(deleted).union(skipped.flatMap { s in all.filter { $0 == s || $0.hasPrefix(s + "/") } })
                #expect(covered == Set(all), "\(kind):\(n): \(plan.lines) \(plan.skippedLines)")
                if plan.skippedLines.contains(where: { $0.hasSuffix(".dat: vanished during the walk") }) && deleted.count == 2 { sawVanished = true }
                if plan.skippedLines == ["tmp/sub: cannot read directory: Permission denied (EACCES)"]
                    && deleted == ["tmp/a.dat", "tmp/b.dat"] { sawUnreadable = true }
            }
        }
        #expect(sawVanished)
        #expect(sawUnreadable)
    }

    @Test("a descriptor limit far below the tree's depth changes nothing in the plan")
    func descriptorLimit() throws {
        let tree = try Tree {
            Dir("tmp") {
                Nest("chain", depth: 300) { File("leaf", age: .days(2)) }
                for i in 0..<40 { Dir("wide\(i)") { Dir("x") { File("f", age: .days(2)) } } }
            }
        }
        defer { tree.remove() }
        let work = try Self.workspace(["p.yaml": "version: 1\nname: p\nrules:\n  - name: tmp-expiry\n    path: tmp\n    expire: 24h\n"])
        defer { work.remove() }
        let args = ["plan", "--policy", work.root + "/p.yaml", "--root", tree.root, "--format", "json"]
        let normal = try PolicyctlBinary.run(args)
        let limited = try ChildProcess.run("/bin/sh", ["-c", "ulimit -n 20 && exec \"$0\" \"$@\"", PolicyctlBinary.path] + args)
        #expect(limited.status == 0, "\(limited.stderr)")
        let plan = try PlanJSON(limited.stdoutData)
        #expect(plan.lines.count == 41)
        #expect(plan.skipped.isEmpty)
        #expect(plan.lines == (try PlanJSON(normal.stdoutData)).lines)
    }
}

@Suite("policyctl explain") struct ExplainCommandTests {
    @Test("says, rule by rule, whether the scope holds the path, what the globs say and the verdict")
    func explain() throws {
        let tree = try Tree {
            Dir("tmp") { File("old.dat", age: .hours(25)) }
            Dir("Documents") { File("A.txt"); File("x.tmp", age: .minutes(5)) }
        }
        defer { tree.remove() }
        let work = try PlanCommandTests.workspace(["p.yaml": """
            version: 1
            name: p
            rules:
              - name: tmp-expiry
                path: tmp
                expire: 24h
              - name: residue
                path: Documents
                match: ["**/*.tmp"]
                expire: 1h
              - name: lower
                path: Documents
                naming: { case: lower }

            """])
        defer { work.remove() }
        let r = try PolicyctlBinary.run(["explain", "--policy", work.root + "/p.yaml", "--root", tree.root, "tmp/old.dat"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("""
            tmp-expiry (expire)
              inside the scope 'tmp' as 'old.dat'
              selected (no match globs: every entry in the scope)
              mtime 1d1h ago > 1d: delete

            residue (expire)
              outside the scope 'Documents'
            """))
        #expect(r.stdout.contains("Plan:\n  - delete    tmp/old.dat"))

        let tmp = try PolicyctlBinary.run(["explain", "--policy", work.root + "/p.yaml", "--root", tree.root, tree.root + "/Documents/x.tmp"])
        #expect(tmp.stdout.contains("selected by match '**/*.tmp'\n  mtime 5m ago <= 1h: keep"), "\(tmp.stdout)")
        #expect(tmp.stdout.contains("lower (naming)\n  inside the scope 'Documents' as 'x.tmp'\n  selected (no match globs: every entry in the scope)\n  name is lowercase"))

        let outside = try PolicyctlBinary.run(["explain", "--policy", work.root + "/p.yaml", "--root", tree.root, "/etc/passwd"])
        #expect(outside.status == 64)
        #expect(try PolicyctlBinary.run(["explain", "--policy", work.root + "/p.yaml", "--root", tree.root, "../x"]).status == 64)
    }
}
