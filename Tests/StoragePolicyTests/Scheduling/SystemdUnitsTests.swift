import Foundation
import Testing
@testable import StoragePolicy
@testable import StoragePolicyReports

@Suite("systemd units") struct SystemdUnitsTests {
    private func lines(_ text: String) -> [String] { text.split(separator: "\n").map(String.init) }

    @Test("the service: oneshot apply, idle priority, nothing writable but the root")
    func service() throws {
        let units = SystemdUnits(try SchedulingFixture.job(.every(.days(1))))
        #expect(units.serviceName == "policyctl-app-sandbox.service")
        let service = lines(units.service)
        for expected in [
            "[Unit]", "Description=policyctl: apply policy app-sandbox to /srv/data", "RequiresMountsFor=/srv/data",
            "[Service]", "Type=oneshot",
            "ExecStart=/usr/local/bin/policyctl apply --policy /etc/policyctl/app-sandbox.yaml --root /srv/data --yes --no-wait --log-format plain",
            "Nice=19", "IOSchedulingClass=idle", "CPUSchedulingPolicy=idle",
            "ProtectSystem=strict", "ReadWritePaths=/srv/data", "ProtectHome=read-only", "NoNewPrivileges=yes", "PrivateTmp=yes",
            "PrivateDevices=yes", "PrivateNetwork=yes", "SystemCallFilter=@system-service", "SystemCallFilter=~process_vm_readv process_vm_writev", "SystemCallErrorNumber=EPERM",
            // CAP_SYS_PTRACE: without it root cannot read other users' /proc/PID/fd and the in-use check is blind.
            "CapabilityBoundingSet=CAP_DAC_OVERRIDE CAP_DAC_READ_SEARCH CAP_FOWNER CAP_SYS_PTRACE",
        ] {
            #expect(service.contains(expected), "missing \(expected)")
        }
        #expect(!service.contains { $0.hasPrefix("[Install]") })
    }

    @Test("no PrivateTmp when the root, the policy or the binary is under /tmp or /var/tmp", arguments: [
        ("/tmp/scratch", "/etc/p.yaml", "/usr/bin/policyctl", "/tmp/scratch"),
        ("/srv", "/var/tmp/p.yaml", "/usr/bin/policyctl", "/var/tmp/p.yaml"),
        ("/srv", "/etc/p.yaml", "/tmp/build/policyctl", "/tmp/build/policyctl"),
        ("/tmp", "/etc/p.yaml", "/usr/bin/policyctl", "/tmp"),
    ])
    func privateTmp(root: String, policy: String, binary: String, hidden: String) throws {
        let service = SystemdUnits(try SchedulingFixture.job(.every(.days(1)), root: root, policy: policy, executable: binary)).service
        #expect(!service.contains("PrivateTmp=yes"))
        #expect(service.contains("# No PrivateTmp=: it would hide \(hidden).\n"))
        #expect(SystemdUnits(try SchedulingFixture.job(.every(.days(1)), root: "/tmpfoo")).service.contains("\nPrivateTmp=yes\n"))
    }

    @Test("words are quoted as systemd splits them", arguments: [
        ("/srv/data", "/srv/data"), ("/srv/my data", "\"/srv/my data\""), ("/srv/100%", "/srv/100%%"),
        ("/srv/$HOME", "/srv/$$HOME"), ("/srv/a\"b", "\"/srv/a\\\"b\""), ("/srv/a\\b", "\"/srv/a\\\\b\""),
        ("/srv/it's", "\"/srv/it's\""), ("/srv/a;b", "\"/srv/a;b\""), ("", "\"\""),
    ])
    func quoting(word: String, quoted: String) {
        #expect(SystemdUnits.quote(word, environment: true) == quoted)
    }

    @Test("outside ExecStart= a dollar is not a variable")
    func dollar() {
        #expect(SystemdUnits.quote("/srv/$HOME", environment: false) == "/srv/$HOME")
    }

    @Test("the timer: --every counts from the last run, catches up after boot, spreads, installs into timers.target")
    func everyTimer() throws {
        let timer = lines(SystemdUnits(try SchedulingFixture.job(.every(.days(1)))).timer)
        #expect(Array(timer.drop { $0 != "[Timer]" }) == [
            "[Timer]", "OnBootSec=15m", "OnUnitActiveSec=1d",
            "# Catch up on a run missed while the machine was off (for OnCalendar=).", "Persistent=true",
            "# Spread the runs of many hosts; coalesce wake-ups.", "RandomizedDelaySec=1h", "AccuracySec=1m",
            "[Install]", "WantedBy=timers.target",
        ])
        #expect(timer.contains("# + 1d (the longest gap between runs) + 1h (the randomized delay) before a run removes it."))
    }

    @Test("the timer: --on writes OnCalendar=")
    func calendarTimer() throws {
        let timer = lines(SystemdUnits(try SchedulingFixture.job(SchedulingFixture.on("Mon..Fri 02:30"))).timer)
        #expect(timer.contains("OnCalendar=Mon..Fri 02:30"))
        #expect(!timer.contains { $0.hasPrefix("OnUnitActiveSec=") || $0.hasPrefix("OnBootSec=") })
        #expect(timer.contains("# + 3d (the longest gap between runs) + 1h (the randomized delay) before a run removes it."))
    }

    @Test("user units keep the seccomp hardening and leave the namespace sandbox commented out")
    func userUnits() throws {
        let units = SystemdUnits(try SchedulingFixture.job(.every(.hours(6)), scope: .user))
        let service = lines(units.service)
        #expect(service.contains("NoNewPrivileges=yes"))
        #expect(service.contains("#ProtectSystem=strict"))
        #expect(service.contains("#ReadWritePaths=/srv/data"))
        #expect(!service.contains { $0.hasPrefix("ProtectSystem=") || $0.hasPrefix("CapabilityBoundingSet=") })
        #expect(units.enableCommand == "systemctl --user enable --now policyctl-app-sandbox.timer")
        #expect(SystemdUnits(try SchedulingFixture.job(.every(.hours(6)))).enableCommand == "systemctl enable --now policyctl-app-sandbox.timer")
    }

    @Test("systemd-analyze verify accepts the units, for awkward paths too",
          .enabled(if: SchedulingFixture.hasSystemdAnalyze), arguments: [
            (ScheduledJob.Scope.system, "every 1d"), (.system, "on Mon..Fri 02:30"), (.user, "every 15m"), (.user, "on *:0/15"),
          ])
    func verify(scope: ScheduledJob.Scope, when: String) throws {
        let binary = SchedulingFixture.builtBinary
        try #require(FileManager.default.isExecutableFile(atPath: binary), "build policyctl first: \(binary)")
        let dir = try SchedulingFixture.temporaryDirectory("verify")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // A binary path with a space, a root with a space, a percent sign and a dollar: quoting must hold.
        try FileManager.default.createDirectory(atPath: dir + "/bin dir", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: dir + "/bin dir/policyctl", withDestinationPath: binary)
        let root = dir + "/my root/100% $HOME"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let trigger = when.hasPrefix("every ") ? try SchedulingFixture.every(String(when.dropFirst(6)))
                                               : try SchedulingFixture.on(String(when.dropFirst(3)))
        let job = try SchedulingFixture.job(trigger, root: root, executable: dir + "/bin dir/policyctl", scope: scope)
        let units = SystemdUnits(job)
        for file in units.files { try file.contents.write(toFile: dir + "/" + file.name, atomically: true, encoding: .utf8) }
        // A user manager needs a runtime directory, which a CI container may not have.
        let runtime = dir + "/runtime"
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let outcome = try SchedulingFixture.run("/usr/bin/env", ["XDG_RUNTIME_DIR=\(runtime)", SchedulingFixture.systemdAnalyze]
            + (scope == .user ? ["--user"] : []) + ["verify", "--man=no", dir + "/" + units.serviceName, dir + "/" + units.timerName])
        #expect(outcome.status == 0)
        // verify reports unknown keys and bad values on stderr but still exits 0: nothing may be said.
        #expect(outcome.stderr == "")
    }

    @Test("verify catches a broken unit, so the check above means something", .enabled(if: SchedulingFixture.hasSystemdAnalyze))
    func verifyCatches() throws {
        let dir = try SchedulingFixture.temporaryDirectory("verify-bad")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let units = SystemdUnits(try SchedulingFixture.job(.every(.days(1)), executable: dir + "/missing/policyctl"))
        for file in units.files { try file.contents.write(toFile: dir + "/" + file.name, atomically: true, encoding: .utf8) }
        let outcome = try SchedulingFixture.run(SchedulingFixture.systemdAnalyze, ["verify", "--man=no", dir + "/" + units.serviceName])
        #expect(outcome.status != 0)
        #expect(outcome.stderr.contains("is not executable"))
    }
}
