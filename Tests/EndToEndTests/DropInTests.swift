// Policy drop-ins (issue 30): /etc/policyctl.d over /run/policyctl.d over /usr/lib/policyctl.d, a same-named file
// overriding, a /dev/null symlink masking, the set merged in the order of the names; `--policy NAME`; cat-config;
// and a drop-in folder other users can write refused before anything of it is read. The debug binary reads the
// folders under POLICYCTL_CONFIG_ROOT (a release build ignores it).
import TreeFixture
import Foundation
import Testing

@Suite("policy drop-ins: precedence, masking, --policy NAME, cat-config (binary)")
struct DropInTests {
    struct Setup {
        let scratch = ScratchDirectory("dropins")
        let config: String
        let root: String

        init() throws {
            chmod(scratch.path, 0o755)
            config = scratch.sub("config")
            for folder in ["etc", "run", "usr", "usr/lib", "etc/policyctl.d", "run/policyctl.d", "usr/lib/policyctl.d"] {
                mkdir(config + "/" + folder, 0o755)
            }
            root = scratch.sub("root")
            try buildTree(at: root, [.dir("tmp", ageHours: 1), .file("tmp/a.tmp", ageHours: 3), .file("tmp/b.log", ageHours: 3),
                                     .file("tmp/c.bak", ageHours: 3)])
        }

        var environment: [String: String] { ["POLICYCTL_CONFIG_ROOT": config] }

        /// A drop-in with one rule expiring `glob` under tmp after an hour.
        func dropIn(_ folder: String, _ name: String, rule: String, glob: String) throws {
            try writePolicy(config + "/" + folder + "/policyctl.d/" + name,
                            "version: 1\nname: \(rule)\nrules:\n  - name: \(rule)\n    path: tmp\n    match: ['\(glob)']\n    expire: 1h\n")
        }

        func run(_ arguments: [String]) throws -> RunResult { try policyctl(arguments, environment: environment) }

        /// The rules a JSON plan of the drop-in set names, in the plan's order.
        func plannedRules() throws -> [String] {
            let r = try run(["plan", "--root", root, "--format", "json"])
            #expect(r.status == 0, "\(r)")
            return r.stdout.split(separator: "\n").compactMap { line in
                let text = line.trimmingCharacters(in: .whitespaces)
                guard text.hasPrefix("\"rule\" : \"") else { return nil }
                return String(text.dropFirst(10).dropLast(text.hasSuffix(",") ? 2 : 1))
            }
        }
    }

    @Test("a same-named file in a higher folder overrides; the set is merged in the order of the names")
    func precedenceAndOrder() throws {
        let s = try Setup()
        try s.dropIn("usr/lib", "20-logs.yaml", rule: "vendor-logs", glob: "*.nothing")
        try s.dropIn("etc", "20-logs.yaml", rule: "logs", glob: "*.log")
        try s.dropIn("run", "30-bak.yaml", rule: "bak", glob: "*.bak")
        try s.dropIn("usr/lib", "10-tmp.yaml", rule: "tmp", glob: "*.tmp")
        let cat = try s.run(["cat-config"])
        #expect(cat.status == 0, "\(cat)")
        let headers = cat.stdout.split(separator: "\n").filter { $0.hasPrefix("# ") }
        #expect(headers == ["# \(s.config)/usr/lib/policyctl.d/10-tmp.yaml", "# \(s.config)/etc/policyctl.d/20-logs.yaml",
                            "# \(s.config)/run/policyctl.d/30-bak.yaml"], "\(cat.stdout)")
        #expect(cat.stdout.hasPrefix("# \(s.config)/usr/lib/policyctl.d/10-tmp.yaml\nversion: 1\nname: tmp\n"), "\(cat.stdout)")
        #expect(!cat.stdout.contains("vendor-logs"))
        #expect(try s.plannedRules() == ["tmp", "logs", "bak"])
        // --policy NAME is the drop-in of that name, the highest folder's.
        let named = try s.run(["plan", "--root", s.root, "--policy", "20-logs", "--format", "json"])
        #expect(named.status == 0, "\(named)")
        #expect(named.stdout.contains("\"rule\" : \"logs\"") && !named.stdout.contains("vendor-logs") && !named.stdout.contains("\"tmp\""), "\(named.stdout)")
    }

    @Test("a symlink to /dev/null masks the name in every lower folder")
    func masking() throws {
        let s = try Setup()
        try s.dropIn("usr/lib", "10-tmp.yaml", rule: "tmp", glob: "*.tmp")
        try s.dropIn("usr/lib", "20-logs.yaml", rule: "logs", glob: "*.log")
        #expect(symlink("/dev/null", s.config + "/etc/policyctl.d/10-tmp.yaml") == 0)
        let cat = try s.run(["cat-config"])
        #expect(cat.status == 0, "\(cat)")
        #expect(cat.stdout == "# \(s.config)/usr/lib/policyctl.d/20-logs.yaml\n"
                + "version: 1\nname: logs\nrules:\n  - name: logs\n    path: tmp\n    match: ['*.log']\n    expire: 1h\n"
                + "\n# \(s.config)/etc/policyctl.d/10-tmp.yaml -> /dev/null (masks 10-tmp.yaml)\n", "\(cat.stdout)")
        #expect(try s.plannedRules() == ["logs"])
        let named = try s.run(["plan", "--root", s.root, "--policy", "10-tmp"])
        #expect(named.status == 74, "\(named)")
        #expect(named.stderr.contains("cannot read policy '10-tmp': no drop-in 10-tmp.yaml in \(s.config)/etc/policyctl.d"), "\(named.stderr)")
    }

    @Test("without drop-ins, plan without --policy says what it always said (64); --policy FILE is unchanged")
    func noDropIns() throws {
        let s = try Setup()
        let r = try s.run(["plan", "--root", s.root])
        #expect(r.status == 64, "\(r)")
        #expect(r.stderr.contains("Missing expected option '--policy <file>'"), "\(r.stderr)")
        let apply = try s.run(["apply", "--root", s.root, "--yes"])
        #expect(apply.status == 64, "\(apply)")
        #expect(apply.stderr.contains("Missing --policy <file> and --root <dir> (or a plan file)"), "\(apply.stderr)")
        let file = s.scratch.path + "/p.yaml"
        try writePolicy(file, "version: 1\nname: file\nrules:\n  - name: file-rule\n    path: tmp\n    expire: 1h\n")
        try s.dropIn("etc", "10-tmp.yaml", rule: "tmp", glob: "*.tmp")
        let given = try s.run(["plan", "--root", s.root, "--policy", file, "--format", "json"])
        #expect(given.status == 0 && given.stdout.contains("\"rule\" : \"file-rule\"") && !given.stdout.contains("\"rule\" : \"tmp\""), "\(given)")
    }

    @Test("an invalid drop-in is reported in its own file (65); a drop-in that is no policy is never quoted")
    func invalidDropIn() throws {
        let s = try Setup()
        try s.dropIn("etc", "10-tmp.yaml", rule: "tmp", glob: "*.tmp")
        try writePolicy(s.config + "/run/policyctl.d/20-bad.yaml", "version: 1\nname: bad\nrules:\n  - name: x\n    path: tmp\n    expire: { after: banana }\n")
        let r = try s.run(["plan", "--root", s.root])
        #expect(r.status == 65, "\(r)")
        #expect(r.stderr.contains("\(s.config)/run/policyctl.d/20-bad.yaml:6:22: error: rule 'x': 'expire': 'after': invalid duration 'banana'"), "\(r.stderr)")
        #expect(r.stderr.contains("note: '\(s.config)/run/policyctl.d/20-bad.yaml' is a drop-in (policyctl cat-config lists the set)"), "\(r.stderr)")
        #expect(!r.stderr.contains("<policyctl.d>"), "\(r.stderr)")
        #expect(unlink(s.config + "/run/policyctl.d/20-bad.yaml") == 0)
        #expect(symlink("/etc/passwd", s.config + "/run/policyctl.d/20-passwd.yaml") == 0)
        let notPolicy = try s.run(["plan", "--root", s.root])
        #expect(notPolicy.status == 65, "\(notPolicy)")
        #expect(notPolicy.stderr.contains("20-passwd.yaml:1:1: error: "), "\(notPolicy.stderr)")
        #expect(!notPolicy.stderr.contains("root:") && !notPolicy.stderr.contains("version: 1\n"), "\(notPolicy.stderr)")
    }

    @Test("apply without --policy applies the merged set")
    func applyTheSet() throws {
        let s = try Setup()
        try s.dropIn("etc", "10-tmp.yaml", rule: "tmp", glob: "*.tmp")
        let r = try s.run(["apply", "--root", s.root, "--yes"])
        #expect(r.status == 0, "\(r)")
        #expect(!FileManager.default.fileExists(atPath: s.root + "/tmp/a.tmp"))
        #expect(FileManager.default.fileExists(atPath: s.root + "/tmp/b.log"))
    }

    @Test("a drop-in uid 12345 planted in a group-writable drop-in folder is refused before anything is read (65)",
          .enabled(if: CoTenant.isAvailable))
    func plantedInGroupWritableFolder() throws {
        let s = try Setup()
        try s.dropIn("etc", "10-tmp.yaml", rule: "tmp", glob: "*.tmp")
        let folder = s.config + "/etc/policyctl.d"
        #expect(chown(folder, 0, CoTenant.uid) == 0 && chmod(folder, 0o775) == 0)
        let planted = try CoTenant.sh("printf 'version: 1\\nname: x\\nrules:\\n  - name: all\\n    path: .\\n    expire: 1h\\n# MARKER-91c2\\n' > \(folder)/05-all.yaml")
        #expect(planted.status == 0, "\(planted)")
        for arguments in [["apply", "--root", s.root, "--yes"], ["plan", "--root", s.root], ["cat-config"],
                          ["plan", "--root", s.root, "--policy", "10-tmp"]] {
            let r = try s.run(arguments)
            #expect(r.status == 65, "\(arguments): \(r)")
            #expect(r.stderr.contains("its folder \(folder) is writable by its group (mode 0775)") || r.stderr.contains("\(folder): refused: it is writable by its group (mode 0775)"), "\(arguments): \(r.stderr)")
            #expect(r.stderr.contains("chmod go-w"), "\(arguments): \(r.stderr)")
            #expect(!(r.stdout + r.stderr).contains("MARKER-91c2"))
        }
        for name in ["a.tmp", "b.log", "c.bak"] { #expect(FileManager.default.fileExists(atPath: s.root + "/tmp/" + name)) }
    }

    @Test("a drop-in uid 12345 owns, in a sticky folder, is refused at the file (65); nothing is changed",
          .enabled(if: CoTenant.isAvailable))
    func plantedInStickyFolder() throws {
        let s = try Setup()
        let folder = s.config + "/run/policyctl.d"
        chmod(folder, 0o1777)
        let planted = try CoTenant.sh("printf 'version: 1\\nname: x\\nrules:\\n  - name: all\\n    path: .\\n    expire: 1h\\n' > \(folder)/05-all.yaml")
        #expect(planted.status == 0, "\(planted)")
        let r = try s.run(["apply", "--root", s.root, "--yes"])
        #expect(r.status == 65, "\(r)")
        #expect(r.stderr.contains("\(folder)/05-all.yaml: refused: it is owned by uid 12345, not by root or uid 0 that runs policyctl"), "\(r.stderr)")
        for name in ["a.tmp", "b.log", "c.bak"] { #expect(FileManager.default.fileExists(atPath: s.root + "/tmp/" + name)) }
    }
}
