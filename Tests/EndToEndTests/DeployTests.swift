// The fleet files in deploy/ checked with the tools operators run them with: ansible-lint (production
// profile), ansible-playbook (a syntax check, then real local runs into throwaway folders: twice for
// idempotence, with the bundled policy, with an invalid policy) and kubernetes-validate for a stated version.
// The tools come from the venv .ci/install-deploy-tools.sh fills (or PATH); where they are absent (PyPI was
// not reachable) each test is skipped with a message naming that script, never passed silently.
import Foundation
import TreeFixture
import Testing

enum DeployTools {
    static let packageRoot = String(#filePath).components(separatedBy: "/Tests/")[0]
    static var ansibleDirectory: String { packageRoot + "/deploy/ansible" }
    static var kubernetesDirectory: String { packageRoot + "/deploy/kubernetes" }
    /// The Kubernetes version the manifests are validated against (Docs/fleet.md states it too).
    static let kubernetesVersion = "1.34.0"

    /// Where .ci/install-deploy-tools.sh puts its venv.
    static let venvBin: String = {
        let env = ProcessInfo.processInfo.environment
        let cache = env["XDG_CACHE_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? (env["HOME"] ?? "/root") + "/.cache"
        return cache + "/policyctl-ci/venv/bin"
    }()

    /// The tool from the venv, else from PATH; nil when neither has it.
    static func find(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        for dir in [venvBin] + path.split(separator: ":").map(String.init) {
            let candidate = dir + "/" + name
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    static let ansiblePlaybook = find("ansible-playbook")
    static let ansibleLint = find("ansible-lint")
    static let kubernetesValidate = find("kubernetes-validate")
    static let missing = "not installed: run .ci/install-deploy-tools.sh (it needs PyPI)"

    /// Runs a tool with stdout and stderr together in one file (never a pipe that could fill); waits for it.
    static func run(_ executable: String, _ arguments: [String], cwd: String,
                    environment: [String: String] = [:]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: cwd)
        var env = ProcessInfo.processInfo.environment
        // The tool's own interpreter and console scripts first; no colour codes in what the tests read.
        env["PATH"] = URL(fileURLWithPath: executable).deletingLastPathComponent().path + ":" + (env["PATH"] ?? "/usr/bin:/bin")
        env["NO_COLOR"] = "1"
        env["ANSIBLE_NOCOLOR"] = "1"
        env["ANSIBLE_FORCE_COLOR"] = "0"
        for (k, v) in environment { env[k] = v }
        process.environment = env
        let log = TestScratch.path("deploy") + ".log"
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        defer { try? FileManager.default.removeItem(atPath: log) }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        try handle.close()
        return (process.terminationStatus, String(decoding: try Data(contentsOf: URL(fileURLWithPath: log)), as: UTF8.self))
    }
}

/// A throwaway host layout for one role run: prefix, policy folder, unit folder, state folder and a root,
/// all under one temporary folder that is removed however the test ends.
final class AnsibleHost {
    let directory: String
    var prefix: String { directory + "/prefix" }
    var config: String { directory + "/etc/policyctl" }
    var units: String { directory + "/units" }
    var state: String { directory + "/state" }
    var root: String { directory + "/root" }

    init() throws {
        // Resolved: the units name paths without symlinks, and the test compares them.
        directory = URL(fileURLWithPath: TestScratch.path("ansible")).resolvingSymlinksInPath().path
        try FileManager.default.createDirectory(atPath: root + "/tmp", withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }

    /// The role's variables pointing everything into this folder; `extra` adds or overrides.
    func variables(_ extra: [String: Any] = [:]) -> [String: Any] {
        var vars: [String: Any] = [
            "policyctl_binary": PolicyctlBinary.path,
            "policyctl_prefix": prefix,
            "policyctl_config_dir": config,
            "policyctl_unit_dir": units,
            "policyctl_state_dir": state,
            "policyctl_root": root,
            // Nothing runs systemd here, and the package manager is not the test's to drive.
            "policyctl_enable_timers": false,
            "policyctl_install_dependencies": false,
            "policyctl_become": false,
            "policyctl_report_dir": directory + "/reports",
        ]
        for (k, v) in extra { vars[k] = v }
        return vars
    }

    /// `ansible-playbook -c local -i localhost, deploy/ansible/PLAYBOOK -e @vars.json`.
    func play(_ extra: [String: Any] = [:], playbook name: String = "site.yml", check: Bool = false) throws -> (status: Int32, output: String) {
        let varsFile = directory + "/vars.json"
        try JSONSerialization.data(withJSONObject: variables(extra), options: [.sortedKeys]).write(to: URL(fileURLWithPath: varsFile))
        let playbook = try #require(DeployTools.ansiblePlaybook)
        let python = URL(fileURLWithPath: playbook).deletingLastPathComponent().path + "/python3"
        var arguments = ["-c", "local", "-i", "localhost,", name, "-e", "@" + varsFile] + (check ? ["--check"] : [])
        if FileManager.default.isExecutableFile(atPath: python) {
            arguments += ["-e", "ansible_python_interpreter=" + python]
        }
        // Ansible's own temporary files and caches stay in the throwaway folder too.
        return try DeployTools.run(playbook, arguments, cwd: DeployTools.ansibleDirectory, environment: [
            "ANSIBLE_HOME": directory + "/ansible-home",
            "ANSIBLE_LOCAL_TEMP": directory + "/ansible-tmp",
            "ANSIBLE_REMOTE_TEMP": directory + "/ansible-tmp",
        ])
    }

    func read(_ path: String) -> String? {
        FileManager.default.contents(atPath: path).map { String(decoding: $0, as: UTF8.self) }
    }

    func mode(_ path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path))?[.posixPermissions] as? Int
    }
}

/// The numbers in the play recap line for localhost (`ok=12 changed=0 ... failed=0`).
func recap(_ output: String) -> [String: Int] {
    guard let line = output.split(separator: "\n").last(where: { $0.hasPrefix("localhost") && $0.contains(" changed=") }) else { return [:] }
    var counts: [String: Int] = [:]
    for field in line.split(separator: " ") where field.contains("=") {
        let parts = field.split(separator: "=")
        if parts.count == 2, let n = Int(parts[1]) { counts[String(parts[0])] = n }
    }
    return counts
}

@Suite("Ansible role") struct AnsibleRoleTests {
    static let policy = """
        version: 1
        name: app-cache
        description: Test policy placed by the role from a file.
        rules:
          - name: tmp-expiry
            path: tmp
            expire: { after: 2d, by: newest }

        """

    @Test("ansible-lint passes the playbook and the role with the production profile",
          .enabled(if: DeployTools.ansibleLint != nil, "ansible-lint \(DeployTools.missing)"))
    func lint() throws {
        let lint = try #require(DeployTools.ansibleLint)
        let home = TestScratch.path("lint")
        defer { try? FileManager.default.removeItem(atPath: home) }
        let r = try DeployTools.run(lint, ["-c", ".ansible-lint", "--offline", "site.yml", "audit.yml", "roles/policyctl"],
                                    cwd: DeployTools.ansibleDirectory, environment: ["ANSIBLE_HOME": home])
        #expect(r.status == 0, "\(r.output)")
        #expect(r.output.contains("0 failure(s), 0 warning(s)"), "\(r.output)")
        #expect(r.output.contains("Profile 'production' was required, and it passed."), "\(r.output)")
    }

    @Test("ansible-playbook --syntax-check passes site.yml and audit.yml",
          .enabled(if: DeployTools.ansiblePlaybook != nil, "ansible-playbook \(DeployTools.missing)"), arguments: ["site.yml", "audit.yml"])
    func syntax(playbookFile: String) throws {
        let playbook = try #require(DeployTools.ansiblePlaybook)
        let home = TestScratch.path("syntax")
        defer { try? FileManager.default.removeItem(atPath: home) }
        let r = try DeployTools.run(playbook, ["--syntax-check", "-i", "localhost,", playbookFile],
                                    cwd: DeployTools.ansibleDirectory, environment: ["ANSIBLE_HOME": home])
        #expect(r.status == 0, "\(r.output)")
        #expect(r.output.contains("playbook: \(playbookFile)"), "\(r.output)")
    }

    @Test("a local run installs the binary, the validated policies and the units with --state-dir; a second run changes nothing",
          .enabled(if: DeployTools.ansiblePlaybook != nil, "ansible-playbook \(DeployTools.missing)"))
    func installsAndIsIdempotent() throws {
        let host = try AnsibleHost()
        let source = host.directory + "/app-cache.yaml"
        try Self.policy.write(toFile: source, atomically: true, encoding: .utf8)
        let inline = "version: 1\nname: uploads\nrules:\n  - name: stale-parts\n    path: incoming\n    match: [\"**/*.part\"]\n    expire: 2d\n"
        let uploads = host.directory + "/uploads"
        try FileManager.default.createDirectory(atPath: uploads, withIntermediateDirectories: true)
        let policies: [[String: Any]] = [
            ["name": "app-cache", "src": source, "calendar": "Mon..Fri 02:30"],
            ["name": "uploads", "content": inline, "root": uploads, "every": "6h"],
        ]

        let first = try host.play(["policyctl_policies": policies])
        #expect(first.status == 0, "\(first.output)")
        #expect(recap(first.output)["failed"] == 0, "\(first.output)")
        #expect((recap(first.output)["changed"] ?? 0) > 0, "\(first.output)")

        // The binary: the one the test suite built, executable.
        let binary = host.prefix + "/bin/policyctl"
        #expect(FileManager.default.contents(atPath: binary) == FileManager.default.contents(atPath: PolicyctlBinary.path))
        #expect(host.mode(binary) == 0o755)
        // The policies, byte for byte.
        #expect(host.read(host.config + "/app-cache.yaml") == Self.policy)
        #expect(host.read(host.config + "/uploads.yaml") == inline)
        // The validation step ran on both placed files and its verdict is shown.
        #expect(first.output.contains("TASK [policyctl : Validate the placed policies with policyctl validate]"), "\(first.output)")
        #expect(first.output.contains("\(host.config)/app-cache.yaml: valid"), "\(first.output)")
        #expect(first.output.contains("\(host.config)/uploads.yaml: valid"), "\(first.output)")
        // The state folders: outside the roots, root-only.
        #expect(host.mode(host.state + "/app-cache") == 0o700)
        #expect(host.mode(host.state + "/uploads") == 0o700)
        // The units are policyctl schedule's, with --state-dir passed to apply and the state folder writable.
        let service = try #require(host.read(host.units + "/policyctl-app-cache.service"))
        let lines = service.split(separator: "\n").map(String.init)
        #expect(lines.contains("ExecStart=\(binary) apply --policy \(host.config)/app-cache.yaml --root \(host.root) --state-dir \(host.state)/app-cache --yes --no-wait --log-format plain"), "\(service)")
        #expect(lines.contains("ReadWritePaths=\(host.state)/app-cache"), "\(service)")
        let timer = try #require(host.read(host.units + "/policyctl-app-cache.timer"))
        #expect(timer.contains("\nOnCalendar=Mon..Fri 02:30\n"), "\(timer)")
        let uploadsService = try #require(host.read(host.units + "/policyctl-uploads.service"))
        #expect(uploadsService.contains("\nExecStart=\(binary) apply --policy \(host.config)/uploads.yaml --root \(uploads) --state-dir \(host.state)/uploads --yes --no-wait --log-format plain\n"), "\(uploadsService)")
        #expect(host.read(host.units + "/policyctl-uploads.timer")?.contains("\nOnUnitActiveSec=6h\n") == true)
        // The unit folder holds exactly the two policies' units.
        #expect(try FileManager.default.contentsOfDirectory(atPath: host.units).sorted() == [
            "policyctl-app-cache.service", "policyctl-app-cache.timer", "policyctl-uploads.service", "policyctl-uploads.timer"])
        // The installed service is what the installed binary generates by itself.
        let direct = try DeployTools.run(binary, ["schedule", "--systemd", "--policy", host.config + "/app-cache.yaml", "--root", host.root,
                                                  "--name", "app-cache", "--state-dir", host.state + "/app-cache", "--on", "Mon..Fri 02:30"],
                                         cwd: host.directory)
        #expect(direct.status == 0)
        #expect(direct.output == service + "\n" + timer, "\(direct.output)")

        let second = try host.play(["policyctl_policies": policies])
        #expect(second.status == 0, "\(second.output)")
        #expect(recap(second.output)["changed"] == 0, "\(second.output)")
        #expect(recap(second.output)["failed"] == 0, "\(second.output)")
        #expect((recap(second.output)["ok"] ?? 0) > 0, "\(second.output)")

        // audit.yml: a stale .part file under the uploads root is drift; app-cache's root is clean.
        // Both reports land on the controller, and the host fails naming the policy that drifted.
        try FileManager.default.createDirectory(atPath: uploads + "/incoming", withIntermediateDirectories: true)
        let stale = uploads + "/incoming/movie.part"
        try Data("x".utf8).write(to: URL(fileURLWithPath: stale))
        let old = Date().addingTimeInterval(-3 * 86_400)
        try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: stale)
        let audit = try host.play(["policyctl_policies": policies], playbook: "audit.yml")
        #expect(audit.status == 2, "\(audit.output)")
        #expect(recap(audit.output)["failed"] == 1, "\(audit.output)")
        #expect(audit.output.contains("localhost drifted from uploads; reports in \(host.directory)/reports/localhost/"), "\(audit.output)")
        let report = try #require(FileManager.default.contents(atPath: host.directory + "/reports/localhost/uploads.json"))
        let json = try #require(try JSONSerialization.jsonObject(with: report) as? [String: Any])
        #expect(json["passed"] as? Bool == false)
        let paths = (json["findings"] as? [[String: Any]])?.compactMap { $0["path"] as? String }
        #expect(paths == ["incoming/movie.part"], "\(json)")
        let clean = try #require(FileManager.default.contents(atPath: host.directory + "/reports/localhost/app-cache.json"))
        #expect((try JSONSerialization.jsonObject(with: clean) as? [String: Any])?["passed"] as? Bool == true)
        // Audit changed nothing under the root.
        #expect(FileManager.default.fileExists(atPath: stale))
    }

    @Test("with no policy given the role places the bundled one, and it is valid and scheduled daily; --check on the new host first writes nothing",
          .enabled(if: DeployTools.ansiblePlaybook != nil, "ansible-playbook \(DeployTools.missing)"))
    func bundledPolicy() throws {
        let host = try AnsibleHost()
        let check = try host.play(check: true)
        #expect(check.status == 0, "\(check.output)")
        #expect(recap(check.output)["failed"] == 0, "\(check.output)")
        #expect((recap(check.output)["changed"] ?? 0) > 0, "\(check.output)")
        for path in [host.prefix, host.config, host.units, host.state] {
            #expect(!FileManager.default.fileExists(atPath: path), "--check wrote \(path)")
        }
        let r = try host.play()
        #expect(r.status == 0, "\(r.output)")
        #expect(recap(r.output)["failed"] == 0, "\(r.output)")
        let placed = try #require(host.read(host.config + "/scratch-expiry.yaml"))
        #expect(placed.contains("\nname: scratch-expiry\n"), "\(placed)")
        #expect(placed.contains("\n    expire: { after: 30d, by: newest }\n"), "\(placed)")
        let valid = try PolicyctlBinary.run(["validate", host.config + "/scratch-expiry.yaml"])
        #expect(valid.status == 0, "\(valid.stdout)\(valid.stderr)")
        let service = try #require(host.read(host.units + "/policyctl-scratch-expiry.service"))
        #expect(service.contains(" --state-dir \(host.state)/scratch-expiry --yes "), "\(service)")
        #expect(host.read(host.units + "/policyctl-scratch-expiry.timer")?.contains("\nOnCalendar=daily\n") == true)
    }

    @Test("an invalid policy fails the play with policyctl's diagnostic, and is neither placed nor scheduled",
          .enabled(if: DeployTools.ansiblePlaybook != nil, "ansible-playbook \(DeployTools.missing)"))
    func invalidPolicyFails() throws {
        let host = try AnsibleHost()
        let broken = "version: 1\nname: broken\nrules:\n  - name: tmp-expiry\n    path: tmp\n    expire: { afer: 2d }\n"
        let r = try host.play(["policyctl_policies": [["name": "broken", "content": broken]]])
        #expect(r.status != 0, "\(r.output)")
        #expect(recap(r.output)["failed"] == 1, "\(r.output)")
        #expect(r.output.contains("failed to validate"), "\(r.output)")
        #expect(r.output.contains("unknown key 'afer' (did you mean 'after'?)"), "\(r.output)")
        #expect(!FileManager.default.fileExists(atPath: host.config + "/broken.yaml"))
        #expect(!FileManager.default.fileExists(atPath: host.units + "/policyctl-broken.service"))
    }

    static var canBecomeCoTenant: Bool {
        getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")
    }

    @Test("the installed unit's command, run as its timer would, ignores a .policyctl a co-tenant (uid 12345) planted in the root",
          .enabled(if: DeployTools.ansiblePlaybook != nil, "ansible-playbook \(DeployTools.missing)"),
          .enabled(if: canBecomeCoTenant, "needs root and setpriv"))
    func unitIgnoresForgedState() throws {
        let host = try AnsibleHost()
        let inline = "version: 1\nname: uploads\nrules:\n  - name: stale-parts\n    path: incoming\n    match: [\"**/*.part\"]\n    expire: 2d\n"
        let r = try host.play(["policyctl_policies": [["name": "uploads", "content": inline]]])
        #expect(r.status == 0, "\(r.output)")
        // A root other users can write, as shared scratch and upload folders are.
        try FileManager.default.createDirectory(atPath: host.root + "/incoming", withIntermediateDirectories: true)
        #expect(chmod(host.root, 0o1777) == 0)
        let stale = host.root + "/incoming/movie.part"
        try Data("x".utf8).write(to: URL(fileURLWithPath: stale))
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-3 * 86_400)], ofItemAtPath: stale)
        // The co-tenant plants state in the root: a journal and a lock symlinked to a system file.
        let forge = try DeployTools.run("/usr/bin/setpriv", ["--reuid=12345", "--regid=12345", "--clear-groups", "/bin/sh", "-c",
            "mkdir \"$1/.policyctl\" && echo junk > \"$1/.policyctl/journal.jsonl\" && ln -s /etc/passwd \"$1/.policyctl/lock\"", "sh", host.root],
            cwd: host.directory)
        #expect(forge.status == 0, "\(forge.output)")
        let passwd = FileManager.default.contents(atPath: "/etc/passwd")
        // ExecStart= of the installed service, word by word (no path here holds a space).
        let service = try #require(host.read(host.units + "/policyctl-uploads.service"))
        let exec = try #require(service.split(separator: "\n").first { $0.hasPrefix("ExecStart=") })
        let words = exec.dropFirst("ExecStart=".count).split(separator: " ").map(String.init)
        #expect(words.contains("--state-dir"))
        let run = try DeployTools.run(words[0], Array(words.dropFirst()), cwd: "/")
        #expect(run.status == 0, "\(run.output)")
        #expect(run.output.contains("warning: .policyctl (owned by uid 12345) in the root is ignored: state is kept in \(host.state)/uploads (--state-dir)"), "\(run.output)")
        #expect(run.output.contains("delete incoming/movie.part"), "\(run.output)")
        #expect(!FileManager.default.fileExists(atPath: stale))
        // The journal went to the state folder; the planted files are untouched, and so is what the link names.
        #expect(FileManager.default.fileExists(atPath: host.state + "/uploads/journal.jsonl"))
        #expect(host.read(host.root + "/.policyctl/journal.jsonl") == "junk\n")
        #expect(FileManager.default.contents(atPath: "/etc/passwd") == passwd)
    }

    @Test("a state folder inside the root, or the root itself, is refused before anything is installed",
          .enabled(if: DeployTools.ansiblePlaybook != nil, "ansible-playbook \(DeployTools.missing)"),
          arguments: ["inside", "the root", "inside, root given with a trailing slash"])
    func stateInsideRootRefused(placement: String) throws {
        let host = try AnsibleHost()
        let variables: [String: Any] = switch placement {
        case "inside": ["policyctl_state_dir": host.root + "/.state"]
        case "the root": ["policyctl_state_dir": host.root]
        default: ["policyctl_state_dir": host.root + "/.state", "policyctl_root": host.root + "/"]
        }
        let r = try host.play(variables)
        #expect(r.status != 0, "\(r.output)")
        #expect(r.output.contains("must lie outside the root"), "\(r.output)")
        #expect(!FileManager.default.fileExists(atPath: host.prefix + "/bin/policyctl"))
    }
}

@Suite("Kubernetes manifests") struct KubernetesManifestTests {
    static let manifests = ["namespace.yaml", "configmap.yaml", "cronjob-apply.yaml", "cronjob-audit.yaml"]

    @Test("kubernetes-validate --strict accepts every manifest for Kubernetes 1.34.0, and refuses a misspelt field",
          .enabled(if: DeployTools.kubernetesValidate != nil, "kubernetes-validate \(DeployTools.missing)"))
    func validate() throws {
        let tool = try #require(DeployTools.kubernetesValidate)
        let r = try DeployTools.run(tool, ["-k", DeployTools.kubernetesVersion, "--strict"] + Self.manifests,
                                    cwd: DeployTools.kubernetesDirectory)
        #expect(r.status == 0, "\(r.output)")
        for (file, resource) in zip(Self.manifests, ["namespace/policyctl", "configmap/policyctl-policy", "cronjob/policyctl-apply", "cronjob/policyctl-audit"]) {
            #expect(r.output.contains("INFO \(file) passed for resource \(resource) against version 1.34"), "\(r.output)")
        }
        // The validator can fail: the same CronJob with one misspelt key is refused.
        let scratch = TestScratch.path("k8s") + ".yaml"
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let text = try String(contentsOfFile: DeployTools.kubernetesDirectory + "/cronjob-apply.yaml", encoding: .utf8)
        try text.replacingOccurrences(of: "readOnlyRootFilesystem:", with: "readOnlyRootFilesytem:").write(toFile: scratch, atomically: true, encoding: .utf8)
        let bad = try DeployTools.run(tool, ["-k", DeployTools.kubernetesVersion, "--strict", scratch], cwd: DeployTools.kubernetesDirectory)
        #expect(bad.status != 0)
        #expect(bad.output.contains("'readOnlyRootFilesytem' was unexpected"), "\(bad.output)")
    }

    /// The manifests as JSON, through the venv's Python (PyYAML comes with ansible-core).
    static func load(_ file: String) throws -> [String: Any] {
        let python = DeployTools.venvBin + "/python3"
        let r = try DeployTools.run(python, ["-c", "import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))", file],
                                    cwd: DeployTools.kubernetesDirectory)
        try #require(r.status == 0, "\(r.output)")
        return try #require(try JSONSerialization.jsonObject(with: Data(r.output.utf8)) as? [String: Any])
    }

    static var hasPython: Bool { FileManager.default.isExecutableFile(atPath: DeployTools.venvBin + "/python3") }

    @Test("both CronJobs: Forbid, JSON output, read-only root filesystem, no privilege escalation, ALL dropped, requests set",
          .enabled(if: hasPython, "the deploy tools' venv \(DeployTools.missing)"))
    func cronJobs() throws {
        for (file, command) in [("cronjob-apply.yaml", "apply"), ("cronjob-audit.yaml", "audit")] {
            let job = try Self.load(file)
            let spec = try #require(job["spec"] as? [String: Any])
            #expect(spec["concurrencyPolicy"] as? String == "Forbid", "\(file)")
            let podSpec = try #require(((((spec["jobTemplate"] as? [String: Any])?["spec"] as? [String: Any])?["template"] as? [String: Any])?["spec"] as? [String: Any]))
            let container = try #require((podSpec["containers"] as? [[String: Any]])?.first)
            let args = try #require(container["args"] as? [String])
            #expect(args.first == command)
            let security = try #require(container["securityContext"] as? [String: Any])
            #expect(security["readOnlyRootFilesystem"] as? Bool == true, "\(file)")
            #expect(security["allowPrivilegeEscalation"] as? Bool == false, "\(file)")
            #expect((security["capabilities"] as? [String: Any])?["drop"] as? [String] == ["ALL"], "\(file)")
            let requests = try #require((container["resources"] as? [String: Any])?["requests"] as? [String: String])
            #expect(requests == ["cpu": "250m", "memory": "128Mi"], "\(file)")
            let mounts = try #require(container["volumeMounts"] as? [[String: Any]])
            #expect(mounts.contains { $0["mountPath"] as? String == "/etc/policyctl" && $0["readOnly"] as? Bool == true })
            if command == "apply" {
                #expect(args == ["apply", "--policy=/etc/policyctl/policy.yaml", "--root=/data", "--state-dir=/var/lib/policyctl/state",
                                 "--yes", "--no-wait", "--max-runtime=50m", "--log-format=json"])
                // The in-use check sees the node's processes and can read their descriptors.
                #expect(podSpec["hostPID"] as? Bool == true)
                #expect((security["capabilities"] as? [String: Any])?["add"] as? [String] == ["DAC_OVERRIDE", "DAC_READ_SEARCH", "FOWNER", "SYS_PTRACE"])
                // The state volume is its own, not a folder under the cleaned root's volume.
                #expect(mounts.contains { $0["name"] as? String == "state" && $0["mountPath"] as? String == "/var/lib/policyctl/state" })
            } else {
                #expect(args == ["audit", "--policy=/etc/policyctl/policy.yaml", "--root=/data", "--format=json"])
                #expect(mounts.contains { $0["name"] as? String == "root" && $0["readOnly"] as? Bool == true })
            }
        }
    }

    @Test("the ConfigMap's policy is one policyctl validate accepts",
          .enabled(if: hasPython, "the deploy tools' venv \(DeployTools.missing)"))
    func configMapPolicy() throws {
        let map = try Self.load("configmap.yaml")
        let policy = try #require((map["data"] as? [String: String])?["policy.yaml"])
        let scratch = TestScratch.path("configmap") + ".yaml"
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        try policy.write(toFile: scratch, atomically: true, encoding: .utf8)
        let r = try PolicyctlBinary.run(["validate", "--strict", scratch])
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        #expect(r.stdout == "\(scratch): valid\n", "\(r.stdout)")
    }
}
