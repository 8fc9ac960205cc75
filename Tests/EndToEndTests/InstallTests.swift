import Foundation
import TreeFixture
import Testing

/// `make install` into a staging folder, then the installed binary run from elsewhere, without the source
/// tree; `make uninstall` leaves nothing. A release build, so it takes a minute or two.
@Suite("make install") struct InstallTests {
    static let packageRoot = String(#filePath).components(separatedBy: "/Tests/")[0]

    static func sh(_ command: String, cwd: String) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["-c", command + " 2>&1"]
        process.currentDirectoryURL = URL(fileURLWithPath: cwd)
        let log = TestScratch.path("install") + ".log"
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        process.standardOutput = handle
        try process.run()
        process.waitUntilExit()
        try handle.close()
        return (process.terminationStatus, (try? String(contentsOfFile: log, encoding: .utf8)) ?? "")
    }

    @Test("the installed policyctl works without the source tree, and uninstall removes every file")
    func installAndUninstall() throws {
        let stage = TestScratch.path("install-stage")
        // A scratch folder of its own: the test run holds the package's .build.
        let flags = "SWIFTFLAGS='--scratch-path \(TestScratch.directory)install-build' PREFIX=/usr DESTDIR=\(stage)"
        // TMPDIR too: the build's own lock and temporary files stay in the run's scratch folder.
        let install = try Self.sh("TMPDIR=\(TestScratch.directory) make install \(flags)", cwd: Self.packageRoot)
        #expect(install.status == 0, "\(install.output)")
        let bin = "\(stage)/usr/bin/policyctl"
        let elsewhere = TestScratch.directory
        let version = try Self.sh("'\(bin)' --version", cwd: elsewhere)
        #expect(version.status == 0)
        #expect(version.output.hasPrefix("policyctl "))
        #expect(version.output.range(of: #"^policyctl \S+ \(([0-9a-f]{12}(-dirty)?|unknown)\)\n$"#, options: .regularExpression) != nil, "\(version.output)")
        let validate = try Self.sh("'\(bin)' validate \(stage)/usr/share/policyctl/policies/*.yaml", cwd: elsewhere)
        #expect(validate.status == 0, "\(validate.output)")
        let demo = try Self.sh("'\(bin)' demo", cwd: elsewhere)
        #expect(demo.status == 0, "\(demo.output)")
        #expect(demo.output.contains("[5/5] audit"))
        // What ships carries no test seam at all: not one of their environment names is in the binary.
        let seams = try Self.sh("strings '\(bin)' | grep -E 'POLICYCTL_(CRASH_AFTER|DELAY_PER_CHANGE|FAULTS|SLOW_CALLS|FREE_SPACE|PAUSE_AT)' || true", cwd: elsewhere)
        #expect(seams.status == 0 && seams.output.isEmpty, "the release binary names test seams: \(seams.output)")
        // What ships carries no fault-injection seam: the variable the test builds obey is ignored.
        let faulty = try Self.sh("POLICYCTL_FAULTS=open:0:EIO,stat:0:EIO,rename:0:EIO '\(bin)' demo", cwd: elsewhere)
        #expect(faulty.status == 0, "\(faulty.output)")
        #expect(faulty.output.contains("[5/5] audit"))
        for file in ["usr/share/man/man1/policyctl.1", "usr/share/man/man5/policyctl-policy.5",
                     "usr/share/bash-completion/completions/policyctl", "usr/share/zsh/site-functions/_policyctl",
                     "usr/share/fish/vendor_completions.d/policyctl.fish", "usr/share/policyctl/policy.schema.json",
                     "usr/share/policyctl/systemd/policyctl-linux-user-cache.timer"] {
            #expect(FileManager.default.fileExists(atPath: "\(stage)/\(file)"), "\(file) not installed")
        }
        // A Swift policy compiles against the installed library (PREFIX/lib/policyctl), not the build folder.
        if let swiftc = ScriptPolicyTests.swiftc {
            let cache = TestScratch.path("install-cache")
            let script = "\(stage)/usr/share/policyctl/policies/media-library.swift"
            let compiled = try Self.sh("POLICYCTL_SWIFTC='\(swiftc)' '\(bin)' validate '\(script)' --cache-dir '\(cache)'", cwd: elsewhere)
            #expect(compiled.status == 0, "\(compiled.output)")
            #expect(compiled.output.hasSuffix("\(script): valid\n"), "\(compiled.output)")
            _ = try Self.sh("rm -rf '\(cache)'", cwd: elsewhere)
        }
        let uninstall = try Self.sh("make uninstall \(flags)", cwd: Self.packageRoot)
        #expect(uninstall.status == 0, "\(uninstall.output)")
        let left = try Self.sh("find '\(stage)' -type f", cwd: elsewhere)
        #expect(left.output == "")
    }
}
