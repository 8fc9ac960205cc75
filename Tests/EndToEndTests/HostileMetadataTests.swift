// What a co-tenant can put in a file's own metadata, against the built binary: timestamps at ±2^63 seconds
// (kept by tmpfs) and names with C1 or bidi controls. Every command completes; such an item is kept and
// reported; a name never reaches a terminal unescaped. Scratch trees and mounts are removed on every path.
import TreeFixture
import Foundation
import StoragePolicy
import Testing

@Suite("Hostile metadata: extreme timestamps, bidi and C1 names (binary)")
struct HostileMetadataTests {
    static let expiry = "version: 1\nname: p\nrules:\n  - name: tmp-expiry\n    path: tmp\n    expire: 24h\n"
    static let outOfRange = "a timestamp is out of range (before 1677 or after 2262); kept, not judged"

    /// Sets both atime and mtime of `path` to `seconds` with utimensat, as any owner of the file can.
    static func setTimes(_ path: String, seconds: Int) {
        var times = [timespec(tv_sec: seconds, tv_nsec: 0), timespec(tv_sec: seconds, tv_nsec: 0)]
        #expect(utimensat(AT_FDCWD, path, &times, AT_SYMLINK_NOFOLLOW) == 0, "utimensat \(path): \(String(cString: strerror(errno)))")
        var s = stat()
        #expect(lstat(path, &s) == 0 && s.st_mtim.tv_sec == seconds, "the file system kept mtime \(seconds)")
    }

    @Test("mtimes of 2^63-1 s and -2^63 s on a tmpfs: plan, apply and audit complete, those items are kept and reported, expired files still go",
          .enabled(if: ScratchDirectory.canMountTmpfs))
    func extremeTimestamps() throws {
        let scratch = ScratchDirectory("times")
        let fs = try scratch.tmpfs("fs", kilobytes: 2048)
        let root = fs + "/root"
        mkdir(root, 0o755)
        try buildTree(at: root, [
            .dir("tmp"), .file("tmp/old.dat", ageHours: 48), .file("tmp/new.dat", ageHours: 1),
            .file("tmp/far-future", ageHours: 48), .file("tmp/far-past", ageHours: 48),
            .dir("tmp/odd-dir", ageHours: 48), .file("tmp/odd-dir/stale", ageHours: 48),
        ])
        Self.setTimes(root + "/tmp/far-future", seconds: Int.max)
        Self.setTimes(root + "/tmp/far-past", seconds: Int.min)
        Self.setTimes(root + "/tmp/odd-dir", seconds: Int.min)
        let policy = scratch.path + "/p.yaml"
        try writePolicy(policy, Self.expiry)

        let plan = try policyctl(["plan", "--policy", policy, "--root", root, "--format", "json"])
        #expect(plan.status == 0 && plan.signal == nil, "\(plan)")
        let json = try PlanJSON(Data(plan.stdout.utf8))
        #expect(json.lines.sorted() == ["delete tmp/odd-dir/stale", "delete tmp/old.dat"])
        #expect(json.skippedLines.sorted() == [
            "tmp/far-future: \(Self.outOfRange)", "tmp/far-past: \(Self.outOfRange)", "tmp/odd-dir: \(Self.outOfRange)",
        ])
        let text = try policyctl(["plan", "--policy", policy, "--root", root])
        #expect(text.signal == nil && text.stdout.contains("tmp/far-future: \(Self.outOfRange)"), "\(text)")

        let audit = try policyctl(["audit", "--policy", policy, "--root", root])
        #expect(audit.signal == nil && (audit.status == 0 || audit.status == 1), "\(audit)")

        let apply = try policyctl(["apply", "--policy", policy, "--root", root, "--yes"])
        #expect(apply.signal == nil && (apply.status == 0 || apply.status == 1), "\(apply)")
        let fm = FileManager.default
        #expect(!fm.fileExists(atPath: root + "/tmp/old.dat"))
        #expect(!fm.fileExists(atPath: root + "/tmp/odd-dir/stale"))
        for kept in ["tmp/new.dat", "tmp/far-future", "tmp/far-past", "tmp/odd-dir"] {
            #expect(fm.fileExists(atPath: root + "/" + kept), "\(kept) kept")
        }
        let again = try policyctl(["audit", "--policy", policy, "--root", root])
        #expect(again.signal == nil, "\(again)")
    }

    /// One name per class of control: C0 (ESC), C1 (NEL), a bidi override (RLO), a bidi isolate (LRI), a
    /// bidi mark (RLM); and how people see each.
    static let names: [(raw: String, shown: String)] = [
        ("esc\u{1B}[31m", "esc\\x1b[31m"),
        ("nel\u{85}line", "nel\\u{85}line"),
        ("\u{202E}fdp.exe", "\\u{202E}fdp.exe"),
        ("iso\u{2066}late\u{2069}", "iso\\u{2066}late\\u{2069}"),
        ("mark\u{200F}", "mark\\u{200F}"),
    ]
    static let rawControls: [Unicode.Scalar] = ["\u{1B}", "\u{85}", "\u{202E}", "\u{2066}", "\u{2069}", "\u{200F}"]

    static func hasRawControl(_ text: String) -> Bool { text.unicodeScalars.contains { rawControls.contains($0) } }

    @Test("names with C0, C1 and bidi controls: escaped exactly in text plans, audits (text, github); exact in JSON")
    func escapedNames() throws {
        let scratch = ScratchDirectory("names")
        let root = scratch.sub("root")
        try buildTree(at: root, [.dir("tmp")] + Self.names.map { .file("tmp/" + $0.raw, ageHours: 48) })
        let policy = scratch.path + "/p.yaml"
        try writePolicy(policy, Self.expiry)
        let auditPolicy = scratch.path + "/audit.yaml"
        try writePolicy(auditPolicy, Self.expiry + "    mode: audit\n")

        let text = try policyctl(["plan", "--policy", policy, "--root", root])
        #expect(text.status == 0, "\(text)")
        for name in Self.names {
            #expect(text.stdout.contains("tmp/" + name.shown), "text plan shows \(name.shown)")
        }
        #expect(!Self.hasRawControl(text.stdout + text.stderr), "\(text)")

        let json = try policyctl(["plan", "--policy", policy, "--root", root, "--format", "json"])
        let plan = try Plan.decode(json: Data(json.stdout.utf8))
        #expect(plan.actions.map { $0.path.bytes }.sorted { $0.lexicographicallyPrecedes($1) }
                == Self.names.map { Array(("tmp/" + $0.raw).utf8) }.sorted { $0.lexicographicallyPrecedes($1) })

        for format in ["text", "github"] {
            let audit = try policyctl(["audit", "--policy", auditPolicy, "--root", root, "--format", format])
            #expect(audit.signal == nil && audit.status == 1, "\(format): \(audit)")
            for name in Self.names {
                #expect(audit.stdout.contains("tmp/" + name.shown), "\(format) audit shows \(name.shown): \(audit.stdout)")
            }
            #expect(!Self.hasRawControl(audit.stdout + audit.stderr), "\(format): \(audit)")
        }
        let apply = try policyctl(["apply", "--policy", policy, "--root", root, "--yes", "--verbose"])
        #expect(apply.status == 0, "\(apply)")
        #expect(!Self.hasRawControl(apply.stdout + apply.stderr), "\(apply)")
        for name in Self.names { #expect(apply.stdout.contains("tmp/" + name.shown), "apply shows \(name.shown)") }
        let journal = try policyctl(["journal", "--root", root])
        #expect(!Self.hasRawControl(journal.stdout + journal.stderr), "\(journal)")
    }
}
