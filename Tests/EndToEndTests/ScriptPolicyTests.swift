// Swift policies through the built binary (`policyctl plan --policy cleanup.swift`): compiled once against
// libPolicyctlScripting and cached, then plan, apply (journaled, recoverable), audit, validate and schedule
// run the command code with the compiled-in policy; its plan equals the same policy planned in process.
// Compile errors are located in the user's file (65), no toolchain is 69, a saved plan goes stale when
// the script changes, and a cache or script another user can write is refused. Compiles take seconds:
// one test shares one compiled script across all its steps.
import TreeFixture
import Foundation
import StoragePolicy
import Testing

/// The custom rule the script declares, for the in-process plan: empty `.log` files are deleted.
struct EmptyLogs: CustomRule {
    var summary: String { "Empty log files are deleted." }
    func evaluate(_ entry: CustomRuleEntry) -> [CustomRuleVerdict] {
        guard entry.type == .regular, entry.size == 0 else { return [] }
        return [.delete(reason: "empty log")]
    }
}

@Suite("Swift policies (binary)", .serialized)
struct ScriptPolicyTests {
    static let script = """
        import StoragePolicy

        /// A rule YAML cannot say: a log file is deleted when it is empty.
        struct EmptyLogs: CustomRule {
            var summary: String { "Empty log files are deleted." }
            func evaluate(_ entry: CustomRuleEntry) -> [CustomRuleVerdict] {
                guard entry.type == .regular, entry.size == 0 else { return [] }
                return [.delete(reason: "empty log")]
            }
        }

        let policy = try Policy("media") {
            LayoutDirectory("logs")
            Rule.custom("empty-logs", in: "logs", EmptyLogs()).matching("**/*.log")
        }

        """

    /// The same policy built in this process.
    static func inProcessPolicy() throws -> Policy {
        try Policy("media") {
            LayoutDirectory("logs")
            Rule.custom("empty-logs", in: "logs", EmptyLogs()).matching("**/*.log")
        }
    }

    /// swiftc for the binary to use (POLICYCTL_SWIFTC): this process's PATH, else the usual toolchain places.
    static let swiftc: String? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let candidates = path.split(separator: ":").map { "\($0)/swiftc" } + ["/opt/swift/usr/bin/swiftc", "/usr/bin/swiftc"]
        return candidates.first { $0.hasPrefix("/") && FileManager.default.isExecutableFile(atPath: $0) }
    }()

    static var environment: [String: String] { ["POLICYCTL_SWIFTC": swiftc ?? "/nonexistent"] }

    /// A scratch folder with the script (0644), a root with logs, and a private cache folder.
    struct Fixture {
        let scratch = ScratchDirectory("script")
        var script: String { scratch.path + "/cleanup.swift" }
        var root: String { scratch.path + "/root" }
        var cache: String { scratch.path + "/cache" }

        init(script text: String = ScriptPolicyTests.script) throws {
            try Data(text.utf8).write(to: URL(fileURLWithPath: script))
            chmod(script, 0o644)
            mkdir(root, 0o755)
            try buildTree(at: root, [.dir("logs"), .file("logs/a.log", size: 0), .file("logs/b.log", size: 5),
                                     .file("logs/c.txt", size: 0), .file("logs/d.log", size: 0)])
        }

        func run(_ arguments: [String], environment: [String: String] = ScriptPolicyTests.environment) throws -> RunResult {
            try policyctl(arguments + ["--cache-dir", cache], environment: environment)
        }

        func exists(_ relative: String) -> Bool { FileManager.default.fileExists(atPath: root + "/" + relative) }
    }

    /// A plan's JSON without the two fields that say when it was made.
    static func timeless(_ json: Data) throws -> NSDictionary {
        let object = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
        return object.filter { $0.key != "createdAt" && $0.key != "evaluatedAtNs" } as NSDictionary
    }

    @Test("a .swift policy with a custom rule plans like in process, is compiled once, applies (journaled, recoverable), audits, validates, schedules, and a saved plan goes stale when it changes",
          .enabled(if: swiftc != nil))
    func lifecycle() throws {
        let f = try Fixture()

        // First run: compiled (the one line saying so), then planned by the compiled program.
        let first = try f.run(["plan", "--policy", f.script, "--root", f.root, "--format", "json"])
        #expect(first.status == 0, "\(first)")
        #expect(first.stderr.hasPrefix("policyctl: compiling \(f.script) (cached in \(f.cache)/"), "\(first)")

        // The same policy planned in process, fingerprinted by the script's bytes: the same plan.
        var policy = try Self.inProcessPolicy()
        let bytes = Array(Self.script.utf8)
        policy.source = PolicyLocation(file: f.script, line: 1, column: 1)
        policy.sourceBytes = bytes
        let plan = try StorageEngine(policy: policy, root: f.root).plan()
        var json: [UInt8] = []
        var writer = PlanJSONWriter { json += $0 }
        try writer.write(plan)
        #expect(try Self.timeless(Data(first.stdout.utf8)) == Self.timeless(Data(json)))
        #expect(plan.actions.map(\.path.string) == ["logs/a.log", "logs/d.log"])
        #expect(plan.fingerprint?.policySHA256 == SHA256.hex(bytes))
        #expect(plan.fingerprint?.policyPath == f.script)

        // Second run: the cache is used (nothing compiled), the same plan.
        let second = try f.run(["plan", "--policy", f.script, "--root", f.root, "--format", "json"])
        #expect(second.status == 0, "\(second)")
        #expect(second.stderr == "", "\(second)")
        #expect(try Self.timeless(Data(second.stdout.utf8)) == Self.timeless(Data(first.stdout.utf8)))
        let builds = try FileManager.default.contentsOfDirectory(atPath: f.cache)
        #expect(builds.count == 1 && builds[0].count == 64, "\(builds)")

        // validate and audit through the compiled program.
        let validate = try f.run(["validate", f.script])
        #expect(validate.status == 0 && validate.stdout == "\(f.script): valid\n", "\(validate)")
        let explain = try f.run(["explain", "--policy", f.script, "--root", f.root, "logs/a.log"])
        #expect(explain.status == 0 && explain.stdout.contains("empty-logs"), "\(explain)")
        let two = try f.run(["validate", f.script, f.script + ".copy.swift"])
        #expect(two.status == 64 && two.stderr.hasPrefix("Error: validate one .swift policy per call"), "\(two)")
        let audit = try f.run(["audit", "--policy", f.script, "--root", f.root])
        #expect(audit.status == 1, "\(audit)")
        #expect(audit.stdout.contains("empty-logs") && audit.stdout.contains("logs/a.log") && audit.stdout.contains("logs/d.log"), "\(audit)")

        // A saved plan, then the script edited (one comment line): the plan is stale, nothing changes.
        let planFile = f.scratch.path + "/plan.json"
        let saved = try f.run(["plan", "--policy", f.script, "--root", f.root, "--out", planFile])
        #expect(saved.status == 0, "\(saved)")
        let original = try Data(contentsOf: URL(fileURLWithPath: f.script))
        try (original + Data("// edited\n".utf8)).write(to: URL(fileURLWithPath: f.script))
        let stale = try f.run(["apply", planFile, "--yes"])
        #expect(stale.status == 3, "\(stale)")
        #expect(stale.stderr.contains("Error: plan is stale: policy changed since the plan was made; plan again"), "\(stale)")
        #expect(f.exists("logs/a.log") && f.exists("logs/d.log"))

        // Back to the original bytes (the first build is used again): an apply killed after its first change
        // is journaled and recovered by the plain binary.
        try original.write(to: URL(fileURLWithPath: f.script))
        let crashed = try f.run(["apply", "--policy", f.script, "--root", f.root, "--yes"],
                                environment: Self.environment.merging(["POLICYCTL_CRASH_AFTER_CHANGES": "1"]) { $1 })
        #expect(crashed.signal == SIGKILL, "\(crashed)")
        #expect(!crashed.stderr.contains("compiling"), "\(crashed)")
        let recovered = try policyctl(["recover", "--root", f.root])
        #expect(recovered.status == 0, "\(recovered)")
        #expect(recovered.stdout.contains("recover: rolled back interrupted transaction"), "\(recovered)")

        // The saved plan applies with the script as it was; the journal names the script.
        try buildTree(at: f.root, [.file("logs/a.log", size: 0), .file("logs/d.log", size: 0)])
        let fresh = try f.run(["plan", "--policy", f.script, "--root", f.root, "--out", planFile])
        #expect(fresh.status == 0, "\(fresh)")
        let applied = try f.run(["apply", planFile, "--yes"])
        #expect(applied.status == 0, "\(applied)")
        #expect(applied.stdout.hasPrefix("applied: 2 delete; transaction "), "\(applied)")
        #expect(!f.exists("logs/a.log") && !f.exists("logs/d.log") && f.exists("logs/b.log") && f.exists("logs/c.txt"))
        let journal = try policyctl(["journal", "--root", f.root])
        #expect(journal.stdout.contains("  plan file \(planFile)\n  policy file \(f.script)\n"), "\(journal)")
        #expect(try journalLines(f.root).contains { $0.contains(SHA256.hex(bytes)) })
        let clean = try f.run(["audit", "--policy", f.script, "--root", f.root])
        #expect(clean.status == 0, "\(clean)")

        // schedule: the units run the .swift through policyctl, with the cache folder writable.
        let schedule = try f.run(["schedule", "--policy", f.script, "--root", f.root, "--every", "1h"])
        #expect(schedule.status == 0, "\(schedule)")
        #expect(schedule.stdout.contains("ExecStart=\(PolicyctlBinary.path) apply --policy \(f.script) --root \(f.root) --cache-dir \(f.cache) --yes"), "\(schedule)")
        #expect(schedule.stdout.contains("ReadWritePaths=\(f.cache)\n"), "\(schedule)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: f.cache).count == 2)
    }

    @Test("Policies/media-library.swift compiles and deletes only the sidecar whose photo is gone",
          .enabled(if: swiftc != nil))
    func mediaLibraryExample() throws {
        let f = try Fixture()
        let example = String(#filePath).components(separatedBy: "/Tests/")[0] + "/Policies/media-library.swift"
        try FileManager.default.removeItem(atPath: f.script)
        try FileManager.default.copyItem(atPath: example, toPath: f.script)
        chmod(f.script, 0o644)
        try buildTree(at: f.root, [.dir("Photos"), .file("Photos/IMG_1.jpg"), .file("Photos/IMG_1.xmp"),
                                   .file("Photos/IMG_2.HEIC"), .file("Photos/IMG_2.HEIC.xmp"),
                                   .file("Photos/IMG_3.xmp"), .file("Photos/IMG_4.thm", ageHours: 1),
                                   .dir("Imports"), .dir("Cache"), .dir("Cache/Thumbnails")])
        let r = try f.run(["plan", "--policy", f.script, "--root", f.root, "--format", "json"])
        #expect(r.status == 0, "\(r)")
        let plan = try Plan.decode(json: Data(r.stdout.utf8))
        #expect(plan.policy == "media-library")
        #expect(plan.actions.filter { $0.rule == "orphaned-sidecars" }.map(\.path.string) == ["Photos/IMG_3.xmp"], "\(r)")
    }

    @Test("a syntax error is shown as swiftc prints it, at the script's file:line:col, with exit 65 and nothing cached",
          .enabled(if: swiftc != nil))
    func syntaxError() throws {
        let f = try Fixture(script: "import StoragePolicy\nlet policy = try Policy(\"bad\") {\n    Rule.expire(\"t\", in: \"tmp\", after: .hours(24)))\n}\n")
        let r = try f.run(["plan", "--policy", f.script, "--root", f.root])
        #expect(r.status == 65, "\(r)")
        #expect(r.stderr.contains("\n\(f.script):3:51: error: consecutive statements on a line must be separated by ';'\n"), "\(r)")
        #expect(r.stderr.hasSuffix("Error: \(f.script) did not compile (swiftc exit 1); nothing was done\n"), "\(r)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: f.cache) == [])
    }

    @Test("without a Swift toolchain a .swift policy is exit 69 saying what to install; YAML policies still work")
    func noToolchain() throws {
        let f = try Fixture()
        let empty = f.scratch.path + "/empty-bin"
        mkdir(empty, 0o755)
        let r = try f.run(["plan", "--policy", f.script, "--root", f.root], environment: ["PATH": empty])
        #expect(r.status == 69, "\(r)")
        #expect(r.stderr == "Error: cannot compile \(f.script): no swiftc on PATH; install the Swift toolchain that built policyctl (swift.org/install, or the distribution's swiftlang package) and put its usr/bin on PATH, or set POLICYCTL_SWIFTC to its swiftc\n", "\(r)")
        let yaml = f.scratch.path + "/p.yaml"
        try writePolicy(yaml, "version: 1\nname: y\nrules:\n  - name: t\n    path: logs\n    expire: { after: 1h }\n")
        #expect(try f.run(["plan", "--policy", yaml, "--root", f.root], environment: ["PATH": empty]).status == 0)
    }

    @Test("a swiftc other than the one that built policyctl is exit 69 naming both versions, before compiling anything")
    func otherCompiler() throws {
        let f = try Fixture()
        let fake = f.scratch.path + "/swiftc"
        try Data("#!/bin/sh\necho 'Swift version 5.9 (swift-5.9-RELEASE)'\n".utf8).write(to: URL(fileURLWithPath: fake))
        chmod(fake, 0o755)
        let r = try f.run(["plan", "--policy", f.script, "--root", f.root], environment: ["POLICYCTL_SWIFTC": fake])
        #expect(r.status == 69, "\(r)")
        #expect(r.stderr.hasPrefix("Error: cannot compile \(f.script): policyctl's library was built by 'Swift version "), "\(r)")
        #expect(r.stderr.contains("', and \(fake) is 'Swift version 5.9 (swift-5.9-RELEASE)'; a Swift policy needs the very compiler that built policyctl"), "\(r)")
        #expect(!FileManager.default.fileExists(atPath: f.cache))
    }

    @Test("a cache folder the co-tenant made, or one anyone can write, is refused (74) before anything is compiled or run",
          .enabled(if: CoTenant.isAvailable && swiftc != nil))
    func coTenantCache() throws {
        let f = try Fixture()
        // A folder everyone may create in, like /tmp.
        chmod(f.scratch.path, 0o1777)
        // The co-tenant prepares the cache folder root will use, hoping to plant a program in it.
        let planted = try CoTenant.sh("mkdir -m 755 '\(f.cache)' && mkdir -m 755 '\(f.cache)/x'")
        #expect(planted.status == 0, "\(planted)")
        let r = try f.run(["plan", "--policy", f.script, "--root", f.root])
        #expect(r.status == 74, "\(r)")
        #expect(r.stderr.contains("Error: refusing the script cache \(f.cache): it is owned by uid 12345, not 0, so another user could plant the program that runs as uid 0"), "\(r)")
        #expect(!r.stderr.contains("compiling"), "\(r)")

        // Root's own folder, but writable by everyone: refused the same way.
        let open = f.scratch.path + "/open-cache"
        mkdir(open, 0o777)
        chmod(open, 0o777)
        let w = try policyctl(["plan", "--policy", f.script, "--root", f.root, "--cache-dir", open], environment: Self.environment)
        #expect(w.status == 74, "\(w)")
        #expect(w.stderr.contains("Error: refusing the script cache \(open): it is writable by others"), "\(w)")
    }

    @Test("a script the co-tenant owns or can write is refused (65): root would run their code",
          .enabled(if: CoTenant.isAvailable))
    func coTenantScript() throws {
        let f = try Fixture()
        chmod(f.scratch.path, 0o1777)
        let theirs = f.scratch.path + "/theirs.swift"
        let made = try CoTenant.sh("printf 'import StoragePolicy\\n' > '\(theirs)' && chmod 644 '\(theirs)'")
        #expect(made.status == 0, "\(made)")
        let r = try f.run(["plan", "--policy", theirs, "--root", f.root])
        #expect(r.status == 65, "\(r)")
        #expect(r.stderr.hasPrefix("Error: \(theirs): refused: it is owned by uid 12345, not by root or uid 0 that runs policyctl; a Swift policy (a program run as uid 0) is read only when"), "\(r)")
        chmod(f.script, 0o666)
        let w = try f.run(["plan", "--policy", f.script, "--root", f.root])
        #expect(w.status == 65, "\(w)")
        #expect(w.stderr.hasPrefix("Error: \(f.script): refused: it is writable by others (mode 0666); a Swift policy (a program run as uid 0) is read only when"), "\(w)")
        #expect(!FileManager.default.fileExists(atPath: f.cache))
    }
}
