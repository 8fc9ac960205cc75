// Living beside systemd-tmpfiles (issue 30): plan notes an age line that covers the root or a rule's scope, in
// tmpfiles.d's precedence (/etc over /run over /usr/lib, /dev/null masking); an x line silences it, and
// `schedule --tmpfiles-exclude` writes that line. The debug binary reads the folders under POLICYCTL_CONFIG_ROOT.
import TreeFixture
import Foundation
import Testing

@Suite("tmpfiles.d beside policyctl: plan notes, schedule --tmpfiles-exclude (binary)")
struct TmpfilesEndToEndTests {
    struct Setup {
        let scratch = ScratchDirectory("tmpfiles")
        let config: String
        let root: String
        let policy: String

        init() throws {
            config = scratch.sub("config")
            for folder in ["etc", "run", "usr", "usr/lib", "etc/tmpfiles.d", "run/tmpfiles.d", "usr/lib/tmpfiles.d"] {
                mkdir(config + "/" + folder, 0o755)
            }
            root = scratch.sub("drop")
            try buildTree(at: root, [.dir("up", ageHours: 1), .file("up/a.tmp", ageHours: 3)])
            policy = scratch.path + "/drop.yaml"
            try writePolicy(policy, "version: 1\nname: drop\nrules:\n  - name: up-expiry\n    path: up\n    expire: { after: 30d, keep: 3 }\n")
        }

        func conf(_ folder: String, _ name: String, _ text: String) throws {
            try writePolicy(config + "/" + folder + "/tmpfiles.d/" + name, text)
        }

        func run(_ arguments: [String]) throws -> RunResult {
            try policyctl(arguments, environment: ["POLICYCTL_CONFIG_ROOT": config])
        }

        func notes() throws -> [String] {
            let r = try run(["plan", "--policy", policy, "--root", root])
            #expect(r.status == 0, "\(r)")
            guard let range = r.stdout.range(of: "\nNotes:\n") else { return [] }
            return r.stdout[range.upperBound...].split(separator: "\n").prefix { $0.hasPrefix("  ") }.map { String($0.dropFirst(2)) }
        }
    }

    @Test("an age line for the root's folder is noted with its file, line and age; one inside the root names the rule")
    func notes() throws {
        let s = try Setup()
        let parent = String(s.root[..<s.root.lastIndex(of: "/")!])
        try s.conf("usr/lib", "tmp.conf", "# Debian 13\nq \(parent) 1777 root root 10d\nd /var/cache/x 0755 - - -\n")
        try s.conf("run", "inner.conf", "d \"\(s.root)/up\" 0755 - - 1d\n")
        #expect(try s.notes() == [
            "rule 'up-expiry' (\(s.root)/up): also aged by \(s.config)/run/tmpfiles.d/inner.conf:1 (1d), which ignores keep and minAge",
            "the root \(s.root): also aged by \(s.config)/usr/lib/tmpfiles.d/tmp.conf:2 (10d), which ignores keep and minAge",
        ])
        let json = try s.run(["plan", "--policy", s.policy, "--root", s.root, "--format", "json"])
        #expect(json.stdout.contains("\"the root \(s.root): also aged by \(s.config)/usr/lib/tmpfiles.d/tmp.conf:2 (10d), which ignores keep and minAge\""), "\(json.stdout)")
        // Masked in /etc: gone; an x line for the root silences the other.
        #expect(symlink("/dev/null", s.config + "/etc/tmpfiles.d/inner.conf") == 0)
        try s.conf("etc", "zz.conf", "x \(s.root)\n")
        #expect(try s.notes().isEmpty)
    }

    @Test("schedule --tmpfiles-exclude prints the x line, --install writes it where tmpfiles reads it, and the note goes")
    func exclude() throws {
        let s = try Setup()
        try s.conf("usr/lib", "tmp.conf", "D \(s.root) 1777 root root 10d\n")
        #expect(try s.notes().count == 1)
        let printed = try s.run(["schedule", "--policy", s.policy, "--root", s.root, "--every", "1d", "--tmpfiles-exclude"])
        #expect(printed.status == 0, "\(printed)")
        #expect(printed.stdout.hasSuffix("""

            # \(s.config)/etc/tmpfiles.d/policyctl-drop.conf
            # Written by policyctl schedule --tmpfiles-exclude: \(s.root) is cleaned by policyctl (job drop),
            # so systemd-tmpfiles leaves it alone (tmpfiles.d(5), type x).
            x \(s.root)

            """), "\(printed.stdout)")
        #expect(!FileManager.default.fileExists(atPath: s.config + "/etc/tmpfiles.d/policyctl-drop.conf"))
        let units = s.scratch.path + "/units"
        let installed = try s.run(["schedule", "--policy", s.policy, "--root", s.root, "--every", "1d", "--tmpfiles-exclude", "--install", units])
        #expect(installed.status == 0, "\(installed)")
        #expect(installed.stdout.contains("Wrote \(s.config)/etc/tmpfiles.d/policyctl-drop.conf (systemd-tmpfiles reads it on its next run)\n"))
        #expect(FileManager.default.fileExists(atPath: units + "/policyctl-drop.timer"))
        #expect(try s.notes().isEmpty)
        let user = try s.run(["schedule", "--policy", s.policy, "--root", s.root, "--every", "1d", "--tmpfiles-exclude", "--user"])
        #expect(user.status == 64 && user.stderr.contains("--tmpfiles-exclude writes /etc/tmpfiles.d"), "\(user)")
    }
}
