// Layout `type: file` and `type: symlink` through the built binary: apply creates them (a file with its content,
// mode and owner set before it has its name), audit reports a wrong type, target or content and nothing is
// replaced, recover removes a creation cut short, and a co-tenant's symlink where a layout file goes is named
// and never written through.
import TreeFixture
import Foundation
import Testing

@Suite("layout files and symlinks (end to end)")
struct LayoutTypesEndToEndTests {
    static let layout = """
      - { path: etc/motd, type: file, content: "hello\\n", mode: "0640", owner: 12345 }
      - { path: current, type: symlink, target: etc/motd }

    """

    static func contents(_ path: String) -> String? { try? String(contentsOfFile: path, encoding: .utf8) }

    static func link(_ path: String) -> String? { try? FileManager.default.destinationOfSymbolicLink(atPath: path) }

    @Test("apply creates the file with its content, mode and owner, and the symlink; then nothing is left to do")
    func creates() throws {
        let s = try LayoutAttributesEndToEndTests.Setup(Self.layout)
        let plan = try policyctl(["plan", "--policy", s.policy, "--root", s.root])
        #expect(plan.stdout.contains("+ mkfile    etc/motd  6 bytes mode 0640 owner 12345  layout file is missing"), "\(plan)")
        #expect(plan.stdout.contains("+ symlink   current -> etc/motd  layout symlink is missing"), "\(plan)")
        #expect(plan.stdout.contains(", 1 file and 1 symlink to create;"), "\(plan)")
        let run = try policyctl(["apply", "--policy", s.policy, "--root", s.root, "--yes"])
        #expect(run.status == 0, "\(run)")
        #expect(Self.contents(s.root + "/etc/motd") == "hello\n")
        let made = try #require(LayoutAttributesEndToEndTests.attributes(s.root + "/etc/motd"))
        #expect(made.mode == 0o640 && made.uid == 12345)
        #expect(Self.link(s.root + "/current") == "etc/motd")
        let again = try policyctl(["plan", "--policy", s.policy, "--root", s.root])
        #expect(again.stdout.contains("No changes."), "\(again)")
    }

    @Test("a wrong target, other content and a directory where the file goes are violations; nothing is replaced")
    func drift() throws {
        let s = try LayoutAttributesEndToEndTests.Setup(Self.layout)
        mkdir(s.root + "/etc", 0o755)
        mkdir(s.root + "/etc/motd", 0o755)
        #expect(symlink("elsewhere", s.root + "/current") == 0)
        let audit = try policyctl(["audit", "--policy", s.policy, "--root", s.root])
        #expect(audit.status == 1, "\(audit)")
        #expect(audit.stdout.contains("etc/motd: error: a directory is where layout file 'etc/motd' must be; it is never replaced [layout]"), "\(audit)")
        #expect(audit.stdout.contains("current: error: layout symlink 'current' points to 'elsewhere', not 'etc/motd'; it is never replaced (remove it and apply makes it again) [layout]"), "\(audit)")
        let run = try policyctl(["apply", "--policy", s.policy, "--root", s.root, "--yes"])
        #expect(run.status == 0, "\(run)")
        #expect(Self.link(s.root + "/current") == "elsewhere")
        rmdir(s.root + "/etc/motd")
        try Data("changed\n".utf8).write(to: URL(fileURLWithPath: s.root + "/etc/motd"))
        chown(s.root + "/etc/motd", 12345, 0)
        chmod(s.root + "/etc/motd", 0o640)
        let content = try policyctl(["audit", "--policy", s.policy, "--root", s.root])
        #expect(content.stdout.contains("etc/motd: error: layout file 'etc/motd' holds other content than the policy's; it is never rewritten (remove it and apply makes it again) [layout]"), "\(content)")
        _ = try policyctl(["apply", "--policy", s.policy, "--root", s.root, "--yes"])
        #expect(Self.contents(s.root + "/etc/motd") == "changed\n")
    }

    @Test("killed after the folder's mkdir, or after the file is made, recover removes what the run made")
    func recoverAfterCrash() throws {
        let s = try LayoutAttributesEndToEndTests.Setup("  - { path: etc/motd, type: file, content: \"hello\\n\", mode: \"0600\" }\n")
        for n in [1, 2] {
            let crashed = try policyctl(["apply", "--policy", s.policy, "--root", s.root, "--yes"],
                                        environment: ["POLICYCTL_CRASH_AFTER_CHANGES": "\(n)"])
            #expect(crashed.signal == SIGKILL, "\(crashed)")
            #expect(access(s.root + "/etc", F_OK) == 0)
            #expect((access(s.root + "/etc/motd", F_OK) == 0) == (n == 2))
            let recovered = try policyctl(["recover", "--root", s.root])
            #expect(recovered.status == 0, "\(recovered)")
            #expect(access(s.root + "/etc", F_OK) != 0, "after change \(n): \(recovered)")
        }
        #expect(try policyctl(["apply", "--policy", s.policy, "--root", s.root, "--yes"]).status == 0)
        #expect(LayoutAttributesEndToEndTests.attributes(s.root + "/etc/motd")?.mode == 0o600)
    }

    @Test("a co-tenant's symlink where a layout file goes is named; the victim it points at is never written",
          .enabled(if: CoTenant.isAvailable))
    func plantedSymlink() throws {
        let s = try LayoutAttributesEndToEndTests.Setup("  - { path: motd, type: file, content: \"hello\\n\", mode: \"0644\" }\n")
        chmod(s.root, 0o1777)
        let victim = s.scratch.sub("victim") + "/secret"
        try Data("victim's".utf8).write(to: URL(fileURLWithPath: victim))
        #expect(chown(victim, 12346, 12346) == 0 && chmod(victim, 0o600) == 0)
        #expect(try CoTenant.sh("ln -s '\(victim)' '\(s.root)/motd'").status == 0)
        let plan = try policyctl(["plan", "--policy", s.policy, "--root", s.root])
        #expect(plan.stdout.contains("error   layout  motd: a symlink is where layout file 'motd' must be; it is never replaced"), "\(plan)")
        let run = try policyctl(["apply", "--policy", s.policy, "--root", s.root, "--yes"])
        #expect(run.status == 0, "\(run)")
        #expect(Self.contents(victim) == "victim's")
        let after = try #require(LayoutAttributesEndToEndTests.attributes(victim))
        #expect(after.mode == 0o600 && after.uid == 12346)
    }
}
