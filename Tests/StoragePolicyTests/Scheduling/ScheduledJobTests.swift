import Testing
@testable import StoragePolicy
@testable import StoragePolicyReports

@Suite("Scheduled jobs") struct ScheduledJobTests {
    @Test("policy names become unit-safe names", arguments: [
        ("app-sandbox", "app-sandbox"), ("Linux user cache", "Linux-user-cache"), ("a.b/c", "a-b-c"),
        ("--x--", "x"), ("_x", "x"), ("日本", "policy"), ("ok_name-2", "ok_name-2"),
    ])
    func names(policy: String, name: String) {
        #expect(ScheduledJob.name(forPolicy: policy) == name)
    }

    @Test("the command is a non-interactive apply with absolute paths")
    func arguments() throws {
        let job = try SchedulingFixture.job(.every(.days(1)))
        #expect(job.arguments == ["/usr/local/bin/policyctl", "apply", "--policy", "/etc/policyctl/app-sandbox.yaml",
                                  "--root", "/srv/data", "--yes", "--no-wait", "--log-format", "plain"])
    }

    @Test("--force-root is passed on to apply")
    func forceRoot() throws {
        let job = try ScheduledJob(name: "home", policyName: "p", executable: "/usr/bin/policyctl", policyPath: "/etc/p.yaml",
                                   root: "/home/ana", trigger: .every(.days(1)), forceRoot: true)
        #expect(job.arguments == ["/usr/bin/policyctl", "apply", "--policy", "/etc/p.yaml", "--root", "/home/ana", "--force-root",
                                  "--yes", "--no-wait", "--log-format", "plain"])
    }

    @Test("--state-dir is passed on to apply, and the systemd sandbox lets the run write it")
    func stateDirectory() throws {
        let job = try ScheduledJob(name: "shared", policyName: "p", executable: "/usr/bin/policyctl", policyPath: "/etc/p.yaml",
                                   root: "/srv/shared", trigger: .every(.days(1)), stateDirectory: "/var/lib/policyctl/shared")
        #expect(job.arguments == ["/usr/bin/policyctl", "apply", "--policy", "/etc/p.yaml", "--root", "/srv/shared",
                                  "--state-dir", "/var/lib/policyctl/shared", "--yes", "--no-wait", "--log-format", "plain"])
        let service = SystemdUnits(job).service.split(separator: "\n").map(String.init)
        #expect(service.contains("ReadWritePaths=/srv/shared"))
        #expect(service.contains("ReadWritePaths=/var/lib/policyctl/shared"))
        #expect(service.contains { $0.hasPrefix("ExecStart=") && $0.contains(" --state-dir /var/lib/policyctl/shared ") })
        #expect(try CronLine(job).line().contains(" --state-dir /var/lib/policyctl/shared "))
        #expect(throws: ScheduleError("the state directory path 'state' is not absolute")) {
            try ScheduledJob(name: "s", policyName: "p", executable: "/p", policyPath: "/p", root: "/r", trigger: .every(.days(1)),
                             stateDirectory: "state")
        }
    }

    @Test("relative paths, control characters and bad names are refused")
    func refusals() {
        #expect(throws: ScheduleError("the root path 'srv/data' is not absolute")) {
            try SchedulingFixture.job(.every(.days(1)), root: "srv/data")
        }
        #expect(throws: ScheduleError("the policy path '/etc/a\\x0ab.yaml' holds a control character, which unit files and crontabs cannot carry")) {
            try SchedulingFixture.job(.every(.days(1)), policy: "/etc/a\nb.yaml")
        }
        #expect(throws: ScheduleError("invalid name 'a b': use letters, digits, '-' and '_' (at most 100), starting with a letter or digit")) {
            try ScheduledJob(name: "a b", policyName: "p", executable: "/p", policyPath: "/p", root: "/r", trigger: .every(.days(1)))
        }
    }
}
