// `--quiet` on plan, apply and audit: nothing at all when there is nothing to do, and no policy warnings;
// changes are still said. The cron line `schedule` writes carries it, so cron mails nothing on a quiet night.
import Foundation
import Testing

@Suite("--quiet: timers and cron get no output when there is nothing to do (binary)")
struct QuietTests {
    /// A policy with a warning (forbid in enforce mode without a trash rule) and an expire rule.
    static let policy = """
        version: 1
        name: quiet
        rules:
          - name: no-db
            path: docs
            forbid: ["**/*.sqlite"]
          - name: tmp-expiry
            path: tmp
            expire: 24h

        """

    @Test("nothing to do: plan, apply and audit with --quiet print nothing and exit 0; without it they warn and say so")
    func nothingToDo() throws {
        let scratch = ScratchDirectory("quiet")
        let root = scratch.sub("root")
        let policy = scratch.path + "/policy.yaml"
        try writePolicy(policy, Self.policy)
        try buildTree(at: root, [.dir("docs"), .file("docs/a.txt"), .dir("tmp", ageHours: 0.1), .file("tmp/new.log", ageHours: 0.1)])

        let loud = try policyctl(["plan", "--policy", policy, "--root", root])
        #expect(loud.stderr.contains("forbid in enforce mode moves entries to the trash"), "\(loud.stderr)")
        #expect(!loud.stdout.isEmpty)
        for command in [["plan"], ["apply", "--yes"], ["apply", "--yes", "--log-format", "plain"], ["audit"]] {
            let quiet = try policyctl(command + ["--policy", policy, "--root", root, "--quiet"])
            #expect(quiet.status == 0, "\(command): \(quiet)")
            #expect(quiet.stdout == "" && quiet.stderr == "", "\(command): '\(quiet.stdout)' '\(quiet.stderr)'")
        }
        let applied = try policyctl(["apply", "--yes", "--policy", policy, "--root", root])
        #expect(applied.stdout.contains("Nothing to do: "), "\(applied.stdout)")
    }

    @Test("something to do: --quiet still prints what apply changed and what plan would change, without the warning")
    func changes() throws {
        let scratch = ScratchDirectory("quiet")
        let root = scratch.sub("root")
        let policy = scratch.path + "/policy.yaml"
        try writePolicy(policy, Self.policy)
        try buildTree(at: root, [.dir("docs"), .dir("tmp", ageHours: 0.1), .file("tmp/old.log", ageHours: 48)])
        let plan = try policyctl(["plan", "--policy", policy, "--root", root, "--quiet"])
        #expect(plan.stdout.contains("tmp/old.log"), "\(plan.stdout)")
        #expect(plan.stderr == "", "\(plan.stderr)")
        let applied = try policyctl(["apply", "--yes", "--policy", policy, "--root", root, "--quiet"])
        #expect(applied.status == 0, "\(applied)")
        #expect(applied.stdout.contains("1 delete"), "\(applied.stdout)")
        #expect(!FileManager.default.fileExists(atPath: root + "/tmp/old.log"))
    }

    @Test("the cron line schedule writes runs quietly: nothing to mail when there is nothing to do")
    func cronLine() throws {
        let scratch = ScratchDirectory("quiet")
        let root = scratch.sub("root")
        let policy = scratch.path + "/policy.yaml"
        try writePolicy(policy, Self.policy)
        try buildTree(at: root, [.dir("docs"), .dir("tmp", ageHours: 0.1)])
        let schedule = try policyctl(["schedule", "--policy", policy, "--root", root, "--every", "1d", "--cron", "--user"])
        #expect(schedule.status == 0, "\(schedule)")
        let line = try #require(schedule.stdout.split(separator: "\n").last)
        // The five time fields, then the command as cron's shell runs it.
        let command = line.split(separator: " ", maxSplits: 5).last.map(String.init) ?? ""
        #expect(command.hasSuffix(" --quiet"), "\(line)")
        let run = try ChildProcess.run("/bin/sh", ["-c", command])
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        #expect(run.stdout == "" && run.stderr == "", "cron would mail: '\(run.stdout)' '\(run.stderr)'")
    }
}
