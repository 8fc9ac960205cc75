// `roots:` and `trash: { discover: true }` through the built binary: one policy planned and applied over two roots,
// each with its own journal (ROOT/.policyctl, or a per-root folder of --state-dir); a root that fails named while
// the other is applied; the list's errors at file:line:col; `~/` roots for --user runs; --root selecting a listed
// root. Discovery on fixture volumes (POLICYCTL_MOUNTINFO): a retained item goes from a discovered trash, and
// what a co-tenant (uid 12345) plants (a non-sticky or symlinked `.Trash`, a `.Trash-12346` it owns) is never
// entered, with a note.
import TreeFixture
import Foundation
import Testing

@Suite("roots: and trash discover (binary)", .serialized)
struct RootsEndToEndTests {
    /// Two roots, `a` and `b`, each with an old file in tmp/ and a new one; the policy names both.
    final class TwoRoots {
        let scratch = ScratchDirectory("roots")
        let a: String, b: String, policy: String

        init(extra: String = "") throws {
            a = scratch.sub("a"); b = scratch.sub("b")
            for root in [a, b] { try buildTree(at: root, [.dir("tmp"), .file("tmp/old", ageHours: 72), .file("tmp/new", ageHours: 1)]) }
            policy = scratch.path + "/p.yaml"
            try writePolicy(policy, """
                version: 1
                name: multi
                rules:
                  - name: tmp-expiry
                    path: tmp
                    expire: { after: 1d }
                  - name: residue
                    path: tmp
                    forbid: ["*.part"]
                    mode: audit
                roots:
                  - { path: \(a), rules: [tmp-expiry] }
                  - { path: \(b), rules: [tmp-expiry, residue] }
                \(extra)
                """)
        }
    }

    @Test("plan shows a section per root (JSON a member per root); apply applies both, each under its own journal")
    func twoRoots() throws {
        let t = try TwoRoots()
        let plan = try policyctl(["plan", "--policy", t.policy, "--detailed-exitcode"])
        #expect(plan.status == 2, "\(plan)")
        #expect(plan.stdout.contains("== root \(t.a) [1/2] ==\nPlan for policy 'multi' on \(t.a)\n"), "\(plan)")
        #expect(plan.stdout.contains("== root \(t.b) [2/2] ==\nPlan for policy 'multi' on \(t.b)\n"), "\(plan)")
        #expect(plan.stdout.components(separatedBy: "  - delete    tmp/old").count == 3, "\(plan)")

        let json = try policyctl(["plan", "--policy", t.policy, "--format", "json"])
        #expect(json.status == 0, "\(json)")
        let decoded = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        let roots = decoded?["roots"] as? [[String: Any]] ?? []
        #expect(decoded?["policy"] as? String == "multi")
        #expect(roots.map { $0["root"] as? String } == [t.a, t.b])
        #expect(roots.map { $0["outcome"] as? String } == ["planned", "planned"])
        let actions = roots.map { (($0["plan"] as? [String: Any])?["actions"] as? [[String: Any]])?.map { $0["path"] as? String } ?? [] }
        #expect(actions == [["tmp/old"], ["tmp/old"]], "\(json.stdout)")

        let apply = try policyctl(["apply", "--policy", t.policy, "--yes"])
        #expect(apply.status == 0, "\(apply)")
        #expect(apply.stdout.contains("== root \(t.a) [1/2] ==\napplied: 1 delete; 4.0 KiB freed; transaction "), "\(apply)")
        #expect(apply.stdout.contains("== root \(t.b) [2/2] ==\napplied: 1 delete; 4.0 KiB freed; transaction "), "\(apply)")
        for root in [t.a, t.b] {
            #expect(!FileManager.default.fileExists(atPath: root + "/tmp/old"))
            #expect(FileManager.default.fileExists(atPath: root + "/tmp/new"))
        }
        // Each root's own journal, each with its own transaction.
        let first = try journalLines(t.a).first { $0.contains("\"begin\"") }
        let second = try journalLines(t.b).first { $0.contains("\"begin\"") }
        #expect(first != nil && second != nil && first != second)
    }

    @Test("--state-dir DIR keeps each root's lock and journal in DIR/<root escaped as systemd-escape --path>")
    func stateDirPerRoot() throws {
        let t = try TwoRoots()
        let state = t.scratch.path + "/state"
        let apply = try policyctl(["apply", "--policy", t.policy, "--yes", "--state-dir", state])
        #expect(apply.status == 0, "\(apply)")
        let names = try FileManager.default.contentsOfDirectory(atPath: state).sorted()
        let escape = { (p: String) in p.dropFirst().replacingOccurrences(of: "-", with: "\\x2d").replacingOccurrences(of: "/", with: "-") }
        #expect(names == [escape(t.a), escape(t.b)].sorted(), "\(names)")
        for name in names { #expect(FileManager.default.fileExists(atPath: state + "/" + name + "/journal.jsonl")) }
        #expect(!FileManager.default.fileExists(atPath: t.a + "/.policyctl/journal.jsonl"))
    }

    @Test("a listed root's saved plan applied with --state-dir DIR takes DIR/NAME, the lock and journal a full run takes")
    func savedPlanStateDir() throws {
        let t = try TwoRoots()
        let state = t.scratch.path + "/state"
        let saved = t.scratch.path + "/b.json"
        let plan = try policyctl(["plan", "--policy", t.policy, "--root", t.b, "--out", saved])
        #expect(plan.status == 0, "\(plan)")
        let apply = try policyctl(["apply", saved, "--policy", t.policy, "--root", t.b, "--yes", "--state-dir", state])
        #expect(apply.status == 0, "\(apply)")
        let name = t.b.dropFirst().replacingOccurrences(of: "-", with: "\\x2d").replacingOccurrences(of: "/", with: "-")
        #expect(try FileManager.default.contentsOfDirectory(atPath: state) == [name])
        #expect(FileManager.default.fileExists(atPath: state + "/" + name + "/journal.jsonl"))
        #expect(!FileManager.default.fileExists(atPath: t.b + "/tmp/old"))
    }

    @Test("a root that cannot be opened is named, the other is applied, and the exit code is the worst (74)")
    func oneRootFails() throws {
        let t = try TwoRoots()
        try FileManager.default.removeItem(atPath: t.a)
        let apply = try policyctl(["apply", "--policy", t.policy, "--yes"])
        #expect(apply.status == 74, "\(apply)")
        #expect(apply.stderr.contains("error: root \(t.a) failed: \(t.a): cannot open the root: No such file or directory (ENOENT); the other roots still run"), "\(apply)")
        #expect(apply.stderr.contains("1 of 2 roots failed: \(t.a) (exit 74); the others were applied"), "\(apply)")
        #expect(!FileManager.default.fileExists(atPath: t.b + "/tmp/old"), "the other root is applied")
        let plan = try policyctl(["plan", "--policy", t.policy])
        #expect(plan.status == 74, "\(plan)")
        #expect(plan.stdout.contains("root \(t.a) failed: cannot plan: the root '\(t.a)': No such file or directory (ENOENT); the other roots still run"), "\(plan)")
        #expect(plan.stdout.contains("Plan for policy 'multi' on \(t.b)"), "\(plan)")
    }

    @Test("--root selects the one listed root it names (the single-root output); any other root is a usage error")
    func rootSelects() throws {
        let t = try TwoRoots()
        let one = try policyctl(["plan", "--policy", t.policy, "--root", t.b])
        #expect(one.status == 0, "\(one)")
        #expect(one.stdout.hasPrefix("Plan for policy 'multi' on \(t.b)\n"), "\(one)")
        let other = try policyctl(["plan", "--policy", t.policy, "--root", t.scratch.path])
        #expect(other.status == 64, "\(other)")
        #expect(other.stderr.hasPrefix("Error: --root '\(t.scratch.path)' is not one of the policy's roots (\(t.a), \(t.b))"), "\(other)")
        let out = try policyctl(["plan", "--policy", t.policy, "--out", t.scratch.path + "/plan.json"])
        #expect(out.status == 64, "\(out)")
    }

    @Test("schedule: without --root one unit runs every listed root (each writable, each handed over by its x line); with --root the unit applies that root")
    func schedule() throws {
        let t = try TwoRoots()
        let all = try policyctl(["schedule", "--policy", t.policy, "--every", "1d", "--systemd", "--tmpfiles-exclude"])
        #expect(all.status == 0, "\(all)")
        #expect(all.stdout.contains("apply --policy \(t.policy) --yes --no-wait"), "\(all)")
        #expect(!all.stdout.contains("--root"), "\(all)")
        #expect(all.stdout.contains("\nReadWritePaths=\(t.a) \(t.b)\n"), "\(all)")
        #expect(all.stdout.contains("\nRequiresMountsFor=\(t.a) \(t.b)\n"), "\(all)")
        #expect(all.stdout.contains("Description=policyctl: apply policy multi to \(t.a), \(t.b)\n"), "\(all)")
        #expect(all.stdout.hasSuffix("\nx \(t.a)\nx \(t.b)\n"), "\(all)")
        let watched = try policyctl(["schedule", "--policy", t.policy, "--every", "1d", "--systemd", "--on-change"])
        #expect(watched.status == 0, "\(watched)")
        #expect(watched.stdout.contains("PathChanged=\(t.a)\n") && watched.stdout.contains("PathChanged=\(t.b)\n"), "\(watched)")
        let relative = try policyctl(["schedule", "--policy", t.policy, "--every", "1d", "--systemd", "--on-change", "--watch", "tmp"])
        #expect(relative.status == 64, "\(relative)")
        let one = try policyctl(["schedule", "--policy", t.policy, "--root", t.b, "--every", "1d", "--systemd", "--name", "multi-b"])
        #expect(one.status == 0, "\(one)")
        #expect(one.stdout.contains("apply --policy \(t.policy) --root \(t.b) --yes"), "\(one)")
        #expect(one.stdout.contains("\nReadWritePaths=\(t.b)\n"), "\(one)")
    }

    @Test("schedule of a discovering trash rule: refused for a sandboxed systemd unit, a cron line without --root")
    func scheduleDiscovery() throws {
        let scratch = ScratchDirectory("roots-schedule")
        let policy = scratch.path + "/bins.yaml"
        try writePolicy(policy, """
            version: 1
            name: bins
            rules:
              - name: bins
                trash: { retain: 30d, discover: true }
            """)
        let unit = try policyctl(["schedule", "--policy", policy, "--every", "1d", "--systemd"])
        #expect(unit.status == 64, "\(unit)")
        #expect(unit.stderr.contains("has a trash: { discover: true } rule, whose folders are found when it runs"), "\(unit)")
        let cron = try policyctl(["schedule", "--policy", policy, "--every", "1d", "--cron"])
        #expect(cron.status == 0, "\(cron)")
        #expect(cron.stdout.contains("apply --policy \(policy) --yes --no-wait"), "\(cron)")
        #expect(!cron.stdout.contains("--root"), "\(cron)")
        #expect(cron.stdout.contains("to the trash folders it discovers"), "\(cron)")
    }

    @Test("explain and audit judge --root with the rules of the listed root it names; another root is 64")
    func explainAndAudit() throws {
        let t = try TwoRoots()
        try buildTree(at: t.a, [.file("tmp/x.part", ageHours: 1)])
        try buildTree(at: t.b, [.file("tmp/x.part", ageHours: 1)])
        // residue is b's rule only: a's x.part is nobody's business, b's is a finding.
        let a = try policyctl(["audit", "--policy", t.policy, "--root", t.a])
        #expect(!a.stdout.contains("residue"), "\(a)")
        let b = try policyctl(["audit", "--policy", t.policy, "--root", t.b])
        #expect(b.status == 1 && b.stdout.contains("residue"), "\(b)")
        let explained = try policyctl(["explain", "--policy", t.policy, "--root", t.a, "tmp/x.part"])
        #expect(explained.status == 0 && !explained.stdout.contains("residue"), "\(explained)")
        let other = try policyctl(["audit", "--policy", t.policy, "--root", t.scratch.path])
        #expect(other.status == 64, "\(other)")
    }

    @Test("a plan saved for one listed root applies there, judged by that root's rules; a forged action of another root's rule is refused")
    func savedPlan() throws {
        let t = try TwoRoots()
        // all-b would delete a's tmp/old too, were it a's rule: it is b's only.
        let policy = t.scratch.path + "/saved.yaml"
        try writePolicy(policy, """
            version: 1
            name: saved
            rules:
              - { name: tmp-expiry, path: tmp, expire: 1d }
              - { name: all-b, path: tmp, expire: 1h }
            roots:
              - { path: \(t.a), rules: [tmp-expiry] }
              - { path: \(t.b), rules: [all-b] }

            """)
        let saved = t.scratch.path + "/a.json"
        let plan = try policyctl(["plan", "--policy", policy, "--root", t.a, "--out", saved])
        #expect(plan.status == 0, "\(plan)")
        // The same plan with its action claimed by all-b.
        let forged = t.scratch.path + "/forged.json"
        let text = try String(contentsOfFile: saved, encoding: .utf8)
        #expect(text.contains("\"rule\" : \"tmp-expiry\""), "\(text)")
        try text.replacingOccurrences(of: "\"rule\" : \"tmp-expiry\"", with: "\"rule\" : \"all-b\"").write(toFile: forged, atomically: true, encoding: .utf8)
        let refused = try policyctl(["apply", forged, "--policy", policy, "--root", t.a, "--yes"])
        #expect(refused.status == 65, "\(refused)")
        #expect(refused.stderr.contains("plan refused"), "\(refused)")
        #expect(FileManager.default.fileExists(atPath: t.a + "/tmp/old"))
        let apply = try policyctl(["apply", saved, "--policy", policy, "--root", t.a, "--yes"])
        #expect(apply.status == 0, "\(apply)")
        #expect(!FileManager.default.fileExists(atPath: t.a + "/tmp/old"))
        #expect(FileManager.default.fileExists(atPath: t.b + "/tmp/old"), "only the plan's root")
    }

    @Test("the roots list's errors, each at file:line:col")
    func validation() throws {
        let scratch = ScratchDirectory("roots-bad")
        let policy = scratch.path + "/bad.yaml"
        try writePolicy(policy, """
            version: 1
            name: bad
            rules:
              - name: tmp-expiry
                path: .
                expire: { after: 10d }
              - name: orphan
                path: x
                expire: 5d
              - name: bins
                trash: { retain: 30d, discover: true }
                path: t
            roots:
              - { path: relative/dir, rules: [tmp-expiry] }
              - { path: /srv/a, rules: [tmp-expirx] }
              - { path: /srv/a, rules: [tmp-expiry] }
              - { path: /srv/a/b, rules: [tmp-expiry] }

            """)
        let run = try policyctl(["validate", policy])
        #expect(run.status == 65, "\(run)")
        let errors = run.stderr.split(separator: "\n").filter { $0.hasPrefix(policy) }.map { String($0.dropFirst(policy.count)) }
        #expect(errors == [
            ":7:5: error: rule 'orphan' is named by no root in 'roots:', so it would never run; add it to a root's rules (or write enabled: false)",
            ":12:5: error: rule 'bins': 'discover: true' runs the rule on every trash folder discovery finds, so it takes no 'path' (remove it, or remove discover)",
            ":14:13: error: root 'relative/dir': a root is an absolute path (or ~/... for --user runs); rule paths are relative to it",
            ":15:29: error: root '/srv/a': no rule is named 'tmp-expirx' (did you mean 'tmp-expiry'?)",
            ":16:13: error: root '/srv/a' is listed twice (first listed at 15:13); list each root once with all its rules",
            ":17:13: error: roots '/srv/a' and '/srv/a/b' nest: the walk of one would cover the other; list the outer root and give its rules paths below it",
        ], "\(run)")
    }

    @Test("validate --effective writes roots: back, and what it writes loads to the same roots")
    func effective() throws {
        let t = try TwoRoots()
        let run = try policyctl(["validate", "--effective", t.policy])
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.contains("roots:\n  # from \(t.policy):12\n  - path: \"\(t.a)\"\n    rules: [\"tmp-expiry\"]\n"), "\(run)")
        let again = t.scratch.path + "/effective.yaml"
        try writePolicy(again, run.stdout)
        let plan = try policyctl(["plan", "--policy", again])
        #expect(plan.status == 0 && plan.stdout.contains("== root \(t.b) [2/2] =="), "\(plan)")
    }

    @Test("~/ roots: expanded from HOME with --user; a root run without --user refuses them (64)")
    func homeRoots() throws {
        let scratch = ScratchDirectory("roots-home")
        let home = scratch.sub("home")
        let cache = home + "/.cache"
        mkdir(cache, 0o755)
        try buildTree(at: cache, [.file("x.tmp", ageHours: 72), .file("y.tmp", ageHours: 1)])
        let policy = scratch.path + "/home.yaml"
        try writePolicy(policy, "version: 1\nname: home\nrules:\n  - name: cache\n    path: .\n    match: [\"*.tmp\"]\n    expire: { after: 1d }\nroots:\n  - { path: ~/.cache, rules: [cache] }\n")
        let refused = try policyctl(["plan", "--policy", policy], environment: ["HOME": home])
        #expect(refused.status == 64, "\(refused)")
        #expect(refused.stderr.hasPrefix("Error: root '~/.cache' (\(policy):9:13) is under the running user's home: pass --user"), "\(refused)")
        let plan = try policyctl(["plan", "--policy", policy, "--user"], environment: ["HOME": home])
        #expect(plan.status == 0, "\(plan)")
        #expect(plan.stdout.contains("== root \(cache) (~/.cache) [1/1] =="), "\(plan)")
        let apply = try policyctl(["apply", "--policy", policy, "--user", "--yes"], environment: ["HOME": home])
        #expect(apply.status == 0, "\(apply)")
        #expect(!FileManager.default.fileExists(atPath: cache + "/x.tmp"))
        #expect(FileManager.default.fileExists(atPath: cache + "/y.tmp"))
        #expect(FileManager.default.fileExists(atPath: cache + "/.policyctl/journal.jsonl"))
    }

    // MARK: Discovered trash folders

    /// A trash in the FreeDesktop layout at `folder`: `old` trashed in 2020, `new` trashed a day ago.
    static func fillTrash(_ folder: String) throws {
        for sub in ["files", "info"] { mkdir(folder + "/" + sub, 0o700) }
        for (name, date) in [("old", "2020-01-01T00:00:00"), ("new", "2099-01-01T00:00:00")] {
            try Data("x\n".utf8).write(to: URL(fileURLWithPath: folder + "/files/" + name))
            try Data("[Trash Info]\nPath=/\(name)\nDeletionDate=\(date)\n".utf8).write(to: URL(fileURLWithPath: folder + "/info/\(name).trashinfo"))
        }
    }

    static let trashPolicy = "version: 1\nname: bins\nrules:\n  - name: old-trash\n    trash: { retain: 30d, discover: true }\n"

    @Test("trash discover: true empties a discovered trash of what is past retain, with its state in --state-dir")
    func discoverDeletes() throws {
        let scratch = ScratchDirectory("roots-discover")
        let volume = scratch.sub("vol")
        let trash = volume + "/.Trash-0"
        mkdir(trash, 0o700)
        try Self.fillTrash(trash)
        let mountinfo = scratch.path + "/mountinfo"
        try Data("36 35 98:0 / \(volume) rw - ext4 /dev/sdb1 rw\n".utf8).write(to: URL(fileURLWithPath: mountinfo))
        let policy = scratch.path + "/bins.yaml"
        try writePolicy(policy, Self.trashPolicy)
        let env = ["POLICYCTL_MOUNTINFO": mountinfo, "HOME": scratch.path + "/nohome"]
        let effective = try policyctl(["validate", "--effective", policy])
        #expect(effective.stdout.contains("  - name: \"old-trash\"\n    trash: { retain: 4w2d, layout: auto, discover: true }\n"), "\(effective)")
        let plan = try policyctl(["plan", "--policy", policy], environment: env)
        #expect(plan.status == 0, "\(plan)")
        #expect(plan.stdout.contains("== discovered trash \(trash) [1/1] =="), "\(plan)")
        #expect(plan.stdout.contains("  - delete    files/old"), "\(plan)")
        let state = scratch.path + "/state"
        let apply = try policyctl(["apply", "--policy", policy, "--yes", "--state-dir", state], environment: env)
        #expect(apply.status == 0, "\(apply)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: trash + "/files") == ["new"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: trash + "/info") == ["new.trashinfo"])
        #expect(!FileManager.default.fileExists(atPath: trash + "/.policyctl"), "no state inside the user's trash")
        let stateName = String(volume.dropFirst()).replacingOccurrences(of: "-", with: "\\x2d").replacingOccurrences(of: "/", with: "-") + "-.Trash\\x2d0"
        let stateNames = try FileManager.default.contentsOfDirectory(atPath: state)
        #expect(FileManager.default.fileExists(atPath: state + "/" + stateName + "/journal.jsonl"), "\(stateNames)")
    }

    @Test("a co-tenant's non-sticky, symlinked or misowned trash folder is never entered: nothing deleted there, a note printed",
          .enabled(if: CoTenant.isAvailable))
    func discoverCoTenant() throws {
        let scratch = ScratchDirectory("roots-discover-hostile")
        chmod(scratch.path, 0o755)
        var table = ""
        for name in ["nonsticky", "linked", "own"] {
            let v = scratch.sub(name)
            chmod(v, 0o1777)
            table += "36 35 98:0 / \(v) rw - ext4 /dev/sdb1 rw\n"
        }
        let mountinfo = scratch.path + "/mountinfo"
        try Data(table.utf8).write(to: URL(fileURLWithPath: mountinfo))
        // A victim folder of uid 12346 laid out as a trash, which a symlinked .Trash points at.
        let victim = scratch.sub("victim")
        mkdir(victim + "/12346", 0o700)
        try Self.fillTrash(victim + "/12346")
        let p = scratch.path
        let planted = try CoTenant.sh("""
            set -e
            mkdir -m 0777 '\(p)/nonsticky/.Trash' && chmod 0777 '\(p)/nonsticky/.Trash' && mkdir -m 0700 '\(p)/nonsticky/.Trash/12346'
            ln -s '\(victim)' '\(p)/linked/.Trash'
            mkdir -m 0700 '\(p)/own/.Trash-12346'
            """)
        #expect(planted.status == 0, "\(planted)")
        chown(p + "/nonsticky/.Trash", 0, 0)
        // What each planted folder holds, as root would find it if it entered: an old item, past retain.
        try Self.fillTrash(p + "/nonsticky/.Trash/12346")
        try Self.fillTrash(p + "/own/.Trash-12346")
        let policy = p + "/bins.yaml"
        try writePolicy(policy, Self.trashPolicy)
        let apply = try policyctl(["apply", "--policy", policy, "--yes", "--state-dir", p + "/state"],
                                  environment: ["POLICYCTL_MOUNTINFO": mountinfo, "HOME": p + "/nohome"])
        #expect(apply.status == 0, "\(apply)")
        #expect(apply.stdout == "No roots to apply: the policy lists none and discovery found no trash folder.\n", "\(apply)")
        let shared = "; ignored (the specification asks for a sticky folder owned by root)"
        #expect(apply.stderr == """
            note: \(p)/nonsticky/.Trash: is not sticky (mode 777)\(shared)
            note: \(p)/linked/.Trash: is a symlink\(shared)
            note: \(p)/own/.Trash-12346: is owned by uid 12345, not uid 12346 whose trash it would be; ignored

            """, "\(apply)")
        for folder in [victim + "/12346", p + "/nonsticky/.Trash/12346", p + "/own/.Trash-12346"] {
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder + "/files").sorted() == ["new", "old"], "\(folder)")
        }
    }
}
