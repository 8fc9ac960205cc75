// Every path a command opens by name (not from a descriptor it holds) must be one Docs/safety.md lists under
// "Inputs": each command runs as root under strace in a root uid 12345 prepared, and an open the inventory does
// not match fails the test, naming it. The list is read from the doc itself, so doc and binary cannot drift.
import TreeFixture
import Foundation
import Testing

@Suite("what each command opens by path is in Docs/safety.md's inventory (binary, strace)")
struct InputInventoryTests {
    static let strace = "/usr/bin/strace"
    static var isAvailable: Bool { CoTenant.isAvailable && FileManager.default.isExecutableFile(atPath: strace) }

    /// The `inventory` block of Docs/safety.md: one pattern per line, before the first run of spaces.
    static func inventory() throws -> [String] {
        let doc = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Docs/safety.md")
        let text = try String(contentsOf: doc, encoding: .utf8)
        guard let start = text.range(of: "```inventory\n"), let end = text.range(of: "```", range: start.upperBound..<text.endIndex) else {
            Issue.record("Docs/safety.md has no ```inventory block")
            return []
        }
        return text[start.upperBound..<end.lowerBound].split(separator: "\n").compactMap { line in
            line.split(separator: " ", maxSplits: 1).first.map(String.init)
        }
    }

    /// A pattern as an anchored regular expression: `**` any run of characters, `*` any within one component.
    static func matches(_ path: String, _ pattern: String) -> Bool {
        var regex = "^"
        var chars = Array(pattern)[...]
        while let c = chars.first {
            chars = chars.dropFirst()
            if c == "*" && chars.first == "*" { chars = chars.dropFirst(); regex += ".*" }
            else if c == "*" { regex += "[^/]*" }
            else { regex += NSRegularExpression.escapedPattern(for: String(c)) }
        }
        return path.range(of: regex + "$", options: .regularExpression) != nil
    }

    /// The paths opened by name (open, or openat/openat2 relative to the working directory) in a trace.
    static func openedByPath(_ trace: String) -> [String] {
        trace.split(separator: "\n").compactMap { line -> String? in
            for prefix in ["open(\"", "openat(AT_FDCWD, \"", "openat2(AT_FDCWD, \""] {
                guard let r = line.range(of: prefix) else { continue }
                let rest = line[r.upperBound...]
                guard let close = rest.firstIndex(of: "\"") else { return nil }
                return String(rest[..<close])
            }
            return nil
        }
    }

    @Test("plan, apply, audit, explain, journal, recover, trash and validate open only what the inventory lists",
          .enabled(if: InputInventoryTests.isAvailable))
    func everyOpenListed() throws {
        let scratch = ScratchDirectory("inventory")
        chmod(scratch.path, 0o755)
        let root = scratch.sub("root")
        chmod(root, 0o1777)
        let policy = scratch.path + "/policy.yaml"
        try writePolicy(policy, """
            version: 1
            name: inventory
            rules:
              - name: tmp-expiry
                path: tmp
                expire: 24h
              - name: no-tmp
                path: .
                forbid: ["**/*.part"]
                mode: audit
              - name: trash
                path: .Trash
                trash: 30d

            """)
        // The co-tenant's preparation: old files, a symlink to /etc, a FIFO, a link to its own policy.
        let prepared = try CoTenant.sh("""
            cd '\(root)' && mkdir -p tmp/sub && touch -d '3 days ago' tmp/old tmp/sub/older && ln -s /etc tmp/etc \
            && mkfifo tmp/fifo && printf 'version: 1\\nname: x\\n' > mine.yaml && ln -s /etc/shadow tmp/shadow \
            && touch a.part
            """)
        #expect(prepared.status == 0, "\(prepared)")
        // Root's own discovered policy, for audit without --policy.
        try writePolicy(root + "/.policyctl.yaml", "version: 1\nname: found\nrules:\n  - {name: no-part, path: ., forbid: [\"**/*.part\"], mode: audit}\n")
        let planFile = scratch.path + "/plan.json"
        let trace = scratch.path + "/trace.txt"
        let commands: [[String]] = [
            ["validate", policy],
            ["plan", "--policy", policy, "--root", root, "--out", planFile],
            ["apply", planFile, "--yes"],
            ["apply", "--policy", policy, "--root", root, "--yes"],
            ["audit", "--root", root],
            ["audit", "--policy", policy, "--root", root, "--format", "sarif"],
            ["explain", "--policy", policy, "--root", root, "tmp/old"],
            ["journal", "--root", root],
            ["recover", "--root", root],
            ["trash", "--root", root, "--policy", policy, "a.part"],
        ]
        let patterns = try Self.inventory()
            .map { $0.replacingOccurrences(of: "{ROOT}", with: root).replacingOccurrences(of: "{POLICY}", with: policy)
                .replacingOccurrences(of: "{PLAN}", with: planFile).replacingOccurrences(of: "{OUT}", with: planFile)
                .replacingOccurrences(of: "{CWD}", with: FileManager.default.currentDirectoryPath) }
        #expect(patterns.count >= 10)
        for command in commands {
            let run = try ChildProcess.run(Self.strace, ["-f", "-qq", "-e", "trace=open,openat,openat2", "-o", trace,
                                                         PolicyctlBinary.path] + command)
            #expect(run.status == 0 || run.status == 1 || run.status == 2, "\(command): \(run)")
            let opened = Self.openedByPath(try String(contentsOfFile: trace, encoding: .utf8))
            #expect(!opened.isEmpty, "\(command): the trace saw no open at all")
            let unlisted = Set(opened.filter { path in !patterns.contains { Self.matches(path, $0) } })
            #expect(unlisted.isEmpty, "\(command) opened paths Docs/safety.md does not list: \(unlisted.sorted())")
        }
    }

    @Test("the pattern matcher: * stays in one component, ** crosses them")
    func patterns() {
        #expect(Self.matches("/proc/123/fd", "/proc/*/fd"))
        #expect(!Self.matches("/proc/1/2/fd", "/proc/*/fd"))
        #expect(Self.matches("/opt/swift/usr/lib/libc.so.6", "**/*.so.*"))
        #expect(!Self.matches("/etc/shadow", "**/*.so"))
        #expect(Self.matches("/", "/"))
        #expect(!Self.matches("/etc", "/"))
    }
}
