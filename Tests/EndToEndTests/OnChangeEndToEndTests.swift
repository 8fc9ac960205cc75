// `schedule --on-change` (issue 30): a systemd .path unit (PathChanged= for the root or each --watch folder, a
// trigger limit so a busy folder cannot start the run back to back) or launchd WatchPaths, besides the timer.
import Foundation
import Testing

@Suite("policyctl schedule --on-change (binary)") struct OnChangeEndToEndTests {
    private static let systemdAnalyze = "/usr/bin/systemd-analyze"
    private static var hasSystemdAnalyze: Bool { FileManager.default.isExecutableFile(atPath: systemdAnalyze) }

    private func setUp() throws -> (AuditTree, String) {
        let tree = try AuditTree()
        try FileManager.default.createDirectory(atPath: tree.root + "/inbox", withIntermediateDirectories: true)
        return (tree, try tree.policy(AuditSupport.policy))
    }

    @Test("--install writes a .path unit beside the service and timer that systemd-analyze verify accepts",
          .enabled(if: hasSystemdAnalyze))
    func systemdPathUnit() throws {
        let (tree, policy) = try setUp()
        let dir = tree.directory + "/units"
        let root = try #require(realpath(tree.root, nil).map { String(cString: $0) })
        let r = try PolicyctlBinary.run(["schedule", "--policy", policy, "--root", tree.root, "--every", "1d", "--on-change",
                                         "--watch", "inbox", "--watch", root, "--install", dir])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("Wrote \(dir)/policyctl-app-sandbox.path\n"))
        #expect(r.stdout.contains("link \(dir)/policyctl-app-sandbox.service \(dir)/policyctl-app-sandbox.timer \(dir)/policyctl-app-sandbox.path`, then systemctl enable --now policyctl-app-sandbox.timer policyctl-app-sandbox.path\n"), "\(r.stdout)")
        let unit = try String(contentsOfFile: dir + "/policyctl-app-sandbox.path", encoding: .utf8)
        let lines = unit.split(separator: "\n").map(String.init)
        let expected: [String] = [
            "[Unit]", "Description=policyctl: apply policy app-sandbox to \(root) when it changes",
            "[Path]", "PathChanged=\(root)/inbox", "PathChanged=\(root)", "Unit=policyctl-app-sandbox.service",
            "TriggerLimitIntervalSec=1min", "TriggerLimitBurst=10", "[Install]", "WantedBy=paths.target",
        ]
        let settings: [String] = lines.filter { !$0.hasPrefix("#") && !$0.isEmpty }
        #expect(settings == expected)
        #expect(unit.contains("\n\n[Path]\n") && unit.contains("\n\n[Install]\n"))
        let runtime = tree.directory + "/runtime"
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.systemdAnalyze)
        process.arguments = ["verify", "--man=no"] + ["service", "timer", "path"].map { "\(dir)/policyctl-app-sandbox.\($0)" }
        process.environment = ["XDG_RUNTIME_DIR": runtime, "PATH": "/usr/bin:/bin"]
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(stderr == "")
    }

    @Test("without --on-change nothing changes: no .path unit, the enable step names the timer only")
    func withoutOnChange() throws {
        let (tree, policy) = try setUp()
        let r = try PolicyctlBinary.run(["schedule", "--policy", policy, "--root", tree.root, "--every", "1d"])
        #expect(r.status == 0 && !r.stdout.contains("[Path]") && !r.stdout.contains("PathChanged="))
    }

    @Test("launchd watches the root with WatchPaths")
    func launchd() throws {
        let (tree, policy) = try setUp()
        let root = try #require(realpath(tree.root, nil).map { String(cString: $0) })
        let r = try PolicyctlBinary.run(["schedule", "--policy", policy, "--root", tree.root, "--every", "6h", "--launchd", "--on-change"])
        #expect(r.status == 0, "\(r.stderr)")
        let plist = try #require(try PropertyListSerialization.propertyList(from: r.stdoutData, options: [], format: nil) as? [String: Any])
        #expect(plist["WatchPaths"] as? [String] == [root])
        #expect(plist["StartInterval"] as? Int == 21600)
    }

    @Test("cron cannot watch; --watch needs --on-change; a watched folder must exist", arguments: [
        (["--cron", "--on-change"], 64, "Error: cron cannot watch a folder: --on-change needs --systemd (a .path unit) or --launchd (WatchPaths)"),
        (["--watch", "inbox"], 64, "Error: --watch names what --on-change watches: add --on-change"),
        (["--on-change", "--watch", "absent"], 74, "Error: cannot resolve the watched folder "),
    ])
    func refused(arguments: [String], status: Int32, message: String) throws {
        let (tree, policy) = try setUp()
        let r = try PolicyctlBinary.run(["schedule", "--policy", policy, "--root", tree.root, "--every", "1d"] + arguments)
        #expect(r.status == status, "\(r)")
        #expect(r.stderr.hasPrefix(message), "\(r.stderr)")
    }
}
