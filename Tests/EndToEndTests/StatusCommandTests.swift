// `policyctl status` end to end on the demo container: every rule's bar line exactly, its JSON decoded, its
// Prometheus output by the exposition grammar (always) and by promtool (when installed), the last apply after
// one, and a co-tenant's planted .policyctl refused as `journal` refuses it, with the tree left as it was.
import TreeFixture
import Foundation
import StoragePolicy
import Testing

@Suite("policyctl status (binary)")
struct StatusCommandTests {
    /// The demo container, before any apply (`demo --step --keep`).
    final class Demo {
        let base: String
        var root: String { base + "/container" }
        var policy: String { base + "/ios-app-sandbox.yaml" }
        init(_ name: String) throws {
            base = TestScratch.path(name)
            try? FileManager.default.removeItem(atPath: base)
            let r = try PolicyctlBinary.run(["demo", "--step", "--keep", base])
            #expect(r.status == 0, "\(r.stderr)")
        }
        deinit { try? FileManager.default.removeItem(atPath: base) }
        func status(_ extra: [String] = []) throws -> PolicyctlBinary.Result {
            try PolicyctlBinary.run(["status", "--policy", policy, "--root", root] + extra)
        }
    }

    /// The rule lines of the demo before its first apply: the quota over its limit, the rest size and count.
    static let demoRuleLines = [
        "  tmp-expiry               tmp                         324.0 KiB  3 files  (expire after 1d)",
        "  download-residue         Documents                   864.0 KiB  12 files  (expire after 1h)",
        "  export-staging           Documents/ExportTemp        64.0 KiB  1 file  (expire after 1w)",
        "  trash-retention          Documents/UserFiles/.Trash  8.0 KiB  2 items  (retain 4w2d)",
        "  thumbnail-quota          Library/Caches/Thumbnails   544.0 MiB / 512.0 MiB  ##########  106 %  34 files",
        "  stale-partial-downloads  Library/Caches/Downloading  256.0 KiB  1 file  (expire after 2w)",
    ]

    @Test("text: every limited rule's line exactly, what the next apply frees, no last apply, no timer installed")
    func text() throws {
        let demo = try Demo("status-text")
        let r = try demo.status()
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let rules = Array(lines.drop { $0 != "Rules:" }.dropFirst().prefix { !$0.isEmpty })
        #expect(rules == Self.demoRuleLines, "\(r.stdout)")
        #expect(lines.contains("Last apply: none"), "\(r.stdout)")
        #expect(lines.contains("Next timer run: none installed (/etc/systemd/system/policyctl-ios-app-sandbox.timer is absent)"), "\(r.stdout)")
        #expect(lines.contains("  thumbnail-quota          96.0 MiB"), "the quota evicts down to 90 % of 512 MiB: \(r.stdout)")
        #expect(lines.contains { $0.hasPrefix("Volume: ") && $0.hasSuffix("; no pressure rules") }, "\(r.stdout)")
        #expect(!FileManager.default.fileExists(atPath: demo.root + "/.policyctl"), "status creates no state")
        #expect(FileManager.default.fileExists(atPath: demo.root + "/tmp/upload-staging-1.dat"), "status changes nothing")
    }

    @Test("on a UTF-8 terminal the bar is drawn in blocks; on any other terminal, as in a pipe, in # and .",
          .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script")))
    func terminalBars() throws {
        let demo = try Demo("status-tty")
        let command = "'\(PolicyctlBinary.path)' status --policy '\(demo.policy)' --root '\(demo.root)'"
        func line(_ locale: String) throws -> String {
            // script(1) gives the command a pseudo-terminal for stdout.
            let r = try ChildProcess.run("/usr/bin/script", ["-qec", command, "/dev/null"], environment: ["LC_ALL": locale])
            #expect(r.status == 0, "\(r)")
            return r.stdout.split(whereSeparator: { $0 == "\n" || $0 == "\r\n" }).map(String.init).first { $0.contains("thumbnail-quota  ") } ?? r.stdout
        }
        let utf8 = try line("C.UTF-8"), plain = try line("C")
        #expect(utf8.contains("544.0 MiB / 512.0 MiB  ██████████  106 %"), "\(utf8)")
        #expect(plain.contains("544.0 MiB / 512.0 MiB  ##########  106 %"), "\(plain)")
    }

    @Test("json: decoded, every rule with its scope, limit and next-apply bytes; after an apply, the last apply")
    func json() throws {
        let demo = try Demo("status-json")
        struct Rule: Decodable { var name: String; var kind: String; var path: String; var bytes: Int64; var entries: Int
            var limitBytes: Int64?; var limitAge: String?; var nextApplyBytes: Int64; var present: Bool }
        struct Last: Decodable { var outcome: String; var changes: Int; var skipped: Int; var bytesFreed: Int64; var timestampSeconds: Int64 }
        struct Volume: Decodable { var freeBytes: Int64; var sizeBytes: Int64 }
        struct Status: Decodable { var policy: String; var rules: [Rule]; var nextApplyBytes: Int64; var volume: Volume?
            var lastApply: Last?; var bytesFreedTotal: Int64; var nextTimerRun: String }
        let before = try JSONDecoder().decode(Status.self, from: try demo.status(["--format", "json"]).stdoutData)
        #expect(before.policy == "ios-app-sandbox")
        #expect(before.rules.map(\.name) == ["tmp-expiry", "download-residue", "export-staging", "trash-retention", "thumbnail-quota", "stale-partial-downloads"])
        let quota = try #require(before.rules.first { $0.name == "thumbnail-quota" })
        #expect(quota.kind == "quota" && quota.bytes == 34 << 24 && quota.entries == 34 && quota.limitBytes == 512 << 20)
        #expect(quota.nextApplyBytes == 6 << 24)
        #expect(before.lastApply == nil && before.bytesFreedTotal == 0 && before.nextTimerRun.hasPrefix("none installed ("))
        #expect((before.volume?.sizeBytes ?? 0) > 0)
        let apply = try PolicyctlBinary.run(["apply", "--policy", demo.policy, "--root", demo.root, "--yes"])
        #expect(apply.status == 0, "\(apply.stderr)")
        let after = try JSONDecoder().decode(Status.self, from: try demo.status(["--format", "json"]).stdoutData)
        let last = try #require(after.lastApply)
        #expect(last.outcome == "committed" && last.skipped == 0 && last.changes > 0)
        #expect(last.bytesFreed == before.nextApplyBytes && after.bytesFreedTotal == before.nextApplyBytes)
        #expect(abs(last.timestampSeconds - Int64(Date().timeIntervalSince1970)) < 120)
        let thumbnails = try #require(after.rules.first { $0.name == "thumbnail-quota" })
        let expected: Int64 = (28 << 24) + 4096
        #expect(thumbnails.bytes == expected && thumbnails.entries == 29, "28 thumbnails and the CACHEDIR.TAG apply wrote")
        let text = try demo.status()
        #expect(text.stdout.contains("  thumbnail-quota          Library/Caches/Thumbnails   448.0 MiB / 512.0 MiB  ########..  87 %  29 files\n"), "\(text.stdout)")
    }

    @Test("prometheus: every line a HELP, a TYPE or a sample of a typed family; label values escaped")
    func prometheusGrammar() throws {
        let demo = try Demo("status-prom")
        let r = try demo.status(["--format", "prometheus"])
        #expect(r.status == 0, "\(r.stderr)")
        try Self.checkGrammar(r.stdout)
        #expect(r.stdout.contains("policyctl_scope_bytes{policy=\"\(demo.policy)\",root=\"\(demo.root)\",rule=\"thumbnail-quota\"} \(34 << 24)\n"), "\(r.stdout)")
        #expect(r.stdout.contains("policyctl_scope_limit_bytes{policy=\"\(demo.policy)\",root=\"\(demo.root)\",rule=\"thumbnail-quota\"} \(512 << 20)\n"))
        #expect(r.stdout.contains("policyctl_next_apply_bytes{policy=\"\(demo.policy)\",root=\"\(demo.root)\",rule=\"thumbnail-quota\"} \(6 << 24)\n"))
        #expect(r.stdout.contains("# TYPE policyctl_bytes_freed_total counter\npolicyctl_bytes_freed_total{policy=\"\(demo.policy)\",root=\"\(demo.root)\"} 0\n"))
        // A root whose name holds a quote and a backslash: its label value is escaped as the format asks.
        let odd = demo.base + "/say \"hi\" \\ bye"
        try FileManager.default.createDirectory(atPath: odd + "/tmp", withIntermediateDirectories: true)
        let o = try PolicyctlBinary.run(["status", "--policy", demo.policy, "--root", odd, "--format", "prometheus"])
        #expect(o.status == 0, "\(o.stderr)")
        try Self.checkGrammar(o.stdout)
        #expect(o.stdout.contains(#"root="\#(demo.base)/say \"hi\" \\ bye",rule="tmp-expiry"} "#), "\(o.stdout)")
    }

    @Test("prometheus: promtool check metrics passes", .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/promtool")))
    func promtool() throws {
        let demo = try Demo("status-promtool")
        let metrics = demo.base + "/apply.prom"
        let apply = try PolicyctlBinary.run(["apply", "--policy", demo.policy, "--root", demo.root, "--yes", "--metrics-file", metrics])
        #expect(apply.status == 0, "\(apply.stderr)")
        let r = try demo.status(["--format", "prometheus"])
        let file = demo.base + "/status.prom"
        try r.stdoutData.write(to: URL(fileURLWithPath: file))
        let check = try ChildProcess.run("/bin/sh", ["-c", "/usr/bin/promtool check metrics < '\(file)'"])
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
        #expect(r.stdout.contains("policyctl_last_apply_timestamp_seconds{"), "\(r.stdout)")
        // apply --metrics-file writes the same counter, with the same labels and value as status.
        let total = try #require(r.stdout.split(separator: "\n").first { $0.hasPrefix("policyctl_bytes_freed_total{") })
        #expect(!total.hasSuffix(" 0"), "\(total)")
        let applied = try String(contentsOfFile: metrics, encoding: .utf8)
        #expect(applied.contains("# TYPE policyctl_bytes_freed_total counter\n\(total)\n"), "\(applied)")
        let both = try ChildProcess.run("/bin/sh", ["-c", "/usr/bin/promtool check metrics < '\(metrics)'"])
        #expect(both.status == 0, "\(both.stdout)\(both.stderr)")
    }

    @Test("markdown: a table row per rule for a CI step summary")
    func markdown() throws {
        let demo = try Demo("status-md")
        let r = try demo.status(["--format", "markdown"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("| Rule | Scope | Size | Limit | Use | Entries | Next apply frees |\n"), "\(r.stdout)")
        #expect(r.stdout.contains("| thumbnail-quota | Library/Caches/Thumbnails | 544.0 MiB | 512.0 MiB | 106 % | 34 files | 96.0 MiB |\n"), "\(r.stdout)")
        #expect(r.stdout.contains("- Last apply: none\n"), "\(r.stdout)")
    }

    @Test("a .policyctl planted by uid 12345 in a 1777 root: status refuses it as journal does, and changes nothing",
          .enabled(if: CoTenant.isAvailable))
    func plantedState() throws {
        let demo = try Demo("status-cotenant")
        chmod(demo.root, 0o1777)
        let planted = try CoTenant.sh("mkdir -m 0777 '\(demo.root)/.policyctl' && printf '' > '\(demo.root)/.policyctl/journal.jsonl'")
        #expect(planted.status == 0, "\(planted.stderr)")
        let listing = try Self.listing(demo.root)
        let journal = try PolicyctlBinary.run(["journal", "--root", demo.root])
        let status = try demo.status()
        #expect(journal.status == 74, "\(journal)")
        #expect(status.status == 74, "\(status)")
        #expect(status.stderr == journal.stderr, "the same refusal: \(status.stderr) vs \(journal.stderr)")
        #expect(status.stderr.contains("Error: \(demo.root)/.policyctl: is owned by uid 12345"), "\(status.stderr)")
        #expect(status.stdout.isEmpty, "\(status.stdout)")
        #expect(try Self.listing(demo.root) == listing, "the tree is as it was")
    }

    /// Every path under `root` with its size and mtime, sorted.
    static func listing(_ root: String) throws -> [String] {
        let e = FileManager.default.enumerator(atPath: root)!
        var out: [String] = []
        while let p = e.nextObject() as? String {
            let a = try FileManager.default.attributesOfItem(atPath: root + "/" + p)
            out.append("\(p) \(a[.size] ?? 0) \(a[.modificationDate] ?? 0)")
        }
        return out.sorted()
    }

    /// The text exposition format's lines: `# HELP name text`, `# TYPE name type`, or `name{labels} value`
    /// whose family was typed above it; names as `[a-zA-Z_:][a-zA-Z0-9_:]*`, label names without colons.
    static func checkGrammar(_ text: String) throws {
        #expect(text.hasSuffix("\n"))
        let name = try Regex("^[a-zA-Z_:][a-zA-Z0-9_:]*$")
        let sample = try Regex(#"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\["\\n])*")(,[a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\["\\n])*")*\})? (-?[0-9.eE+]+|NaN|[+-]Inf)$"#)
        var typed = Set<String>()
        for line in text.split(separator: "\n").map(String.init) {
            if line.hasPrefix("# HELP ") || line.hasPrefix("# TYPE ") {
                let parts = line.split(separator: " ", maxSplits: 3).map(String.init)
                #expect(parts.count >= 4 && (try? name.wholeMatch(in: parts[2])) != nil, "\(line)")
                if parts[1] == "TYPE" {
                    #expect(["counter", "gauge", "histogram", "summary", "untyped"].contains(parts[3]), "\(line)")
                    typed.insert(parts[2])
                }
                continue
            }
            let match = try #require(try sample.wholeMatch(in: line), "not a sample: \(line)")
            let family = String(line[match.range].prefix { $0 != "{" && $0 != " " })
            #expect(typed.contains(family), "no TYPE for \(family)")
        }
    }
}

@Suite("policyctl status with pressure rules (binary, debug free-space seam)")
struct StatusPressureTests {
    @Test("the volume against each pressure rule's thresholds, active below freeBelow; a FreeDesktop trash's items counted")
    func thresholds() throws {
        let t = try PressureKindsEndToEndTests.tree()
        let low = try PolicyctlBinary.run(["status", "--policy", t.policy, "--root", t.root], environment: ["POLICYCTL_FREE_SPACE": "1000/100000000"])
        #expect(low.status == 0, "\(low.stderr)")
        let lines = low.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains("Volume: 1000 B free of 95.4 MiB (0 %)"), "\(low.stdout)")
        #expect(lines.contains("  pressure low-disk: evicts below 9.5 MiB free, until 14.3 MiB (active now)"), "\(low.stdout)")
        #expect(lines.contains("  trash  Trash  48.0 KiB  2 items  (retain 4w2d)"), "\(low.stdout)")
        let high = try PolicyctlBinary.run(["status", "--policy", t.policy, "--root", t.root, "--format", "prometheus"],
                                           environment: ["POLICYCTL_FREE_SPACE": "50000000/100000000"])
        try StatusCommandTests.checkGrammar(high.stdout)
        #expect(high.stdout.contains("policyctl_volume_free_bytes{policy=\"\(t.policy)\",root=\"\(t.root)\"} 50000000\n"), "\(high.stdout)")
        #expect(high.stdout.contains("policyctl_pressure_free_below_bytes{policy=\"\(t.policy)\",root=\"\(t.root)\",pressure=\"low-disk\"} 10000000\n"), "\(high.stdout)")
        #expect(!high.stdout.contains("policyctl_next_apply_bytes{"), "nothing to free above freeBelow: \(high.stdout)")
    }
}
