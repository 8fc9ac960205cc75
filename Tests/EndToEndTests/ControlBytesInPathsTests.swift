// Issue 49, item 5: a root, a mount point or a state folder whose path holds control bytes is printed escaped by
// every command's text and plain-log output (through PrintableText, the escaper diagnostics use): every C0 byte
// but NUL, DEL, ESC sequences (a colour, a terminal title), C1 controls and the bidi controls. A co-tenant names
// the folders (its own under a shared root, its own volume's mount point); root runs each command over them.
// JSON output carries the exact bytes and is not looked at here.
import TreeFixture
import Foundation
import Testing

@Suite("control bytes in root, mount and state paths are escaped in text output (binary)", .enabled(if: CoTenant.isAvailable))
struct ControlBytesInPathsTests {
    /// Every C0 byte but NUL (and '/', which is no C0 byte), DEL, two ESC sequences, C1 controls and bidi controls.
    static let hostile: String = {
        var s = "r"
        for byte in UInt8(1)...UInt8(0x1F) { s.unicodeScalars.append(Unicode.Scalar(byte)) }
        s += "\u{7F}\u{1B}[31mred\u{1B}[0m\u{1B}]0;title\u{07}\u{202E}evil\u{202C}\u{2066}x\u{2069}\u{200E}\u{200F}\u{061C}\u{85}\u{9B}z"
        return s
    }()

    /// The scalars of `text` a terminal or a log reader would act on: C0 but newline (and tab where the format
    /// separates fields with it), DEL, C1, the bidi controls.
    static func raw(_ text: String, tabs: Bool = false) -> [String] {
        var found: [String] = []
        for scalar in text.unicodeScalars {
            let v = scalar.value
            let bad = (v < 0x20 && v != 0x0A && !(tabs && v == 0x09)) || v == 0x7F || (0x80...0x9F).contains(v)
                || (0x202A...0x202E).contains(v) || (0x2066...0x2069).contains(v) || v == 0x200E || v == 0x200F || v == 0x061C
            if bad { found.append(String(format: "U+%04X", v)) }
        }
        return found
    }

    func check(_ name: String, _ run: RunResult, tabs: Bool = false, mustName: Bool = true) {
        let text = run.stdout + run.stderr
        #expect(Self.raw(text, tabs: tabs).isEmpty, "[\(name)] printed raw controls \(Set(Self.raw(text, tabs: tabs)).sorted()): \(run)")
        if mustName {
            #expect(text.contains("r\\x01\\x02"), "\(name) does not name the path (escaped): \(run)")
        }
    }

    @Test("plan, apply (human and plain), audit, explain, status, journal, recover, trash and its list, restore and errors escape the root's path")
    func rootPaths() throws {
        let scratch = ScratchDirectory("controls")
        chmod(scratch.path, 0o755)
        let shared = scratch.sub("shared")
        chmod(shared, 0o1777)
        let root = shared + "/" + Self.hostile
        #expect(try CoTenant.run("/bin/sh", ["-c", "mkdir -m 0777 \"$0\" && mkdir \"$0/tmp\" && touch -d '3 days ago' \"$0/tmp/old\" \"$0/tmp/old2\" \"$0/tmp/old3\"", root]).status == 0)
        let policy = scratch.path + "/p.yaml"
        try writePolicy(policy, "version: 1\nname: controls\nrules:\n  - { name: tmp-expiry, path: tmp, expire: 1d }\n  - { name: trash, path: .Trash, trash: 30d }\n")
        check("plan", try policyctl(["plan", "--policy", policy, "--root", root]))
        check("audit", try policyctl(["audit", "--policy", policy, "--root", root]), mustName: false)
        check("explain", try policyctl(["explain", "--policy", policy, "--root", root, "tmp/old"]), mustName: false)
        check("status", try policyctl(["status", "--policy", policy, "--root", root]))
        check("trash", try policyctl(["trash", "--root", root, "--policy", policy, "tmp/old3"]), mustName: false)
        check("trash --list", try policyctl(["trash", "--root", root, "--policy", policy, "--list"]), tabs: true, mustName: false)
        check("trash --restore", try policyctl(["trash", "--root", root, "--policy", policy, "--restore", "old3"]), mustName: false)
        check("apply --log-format plain", try policyctl(["apply", "--policy", policy, "--root", root, "--yes", "--log-format", "plain"]), mustName: false)
        check("apply", try policyctl(["apply", "--policy", policy, "--root", root, "--yes"]), mustName: false)
        check("apply, nothing to do", try policyctl(["apply", "--policy", policy, "--root", root, "--yes"]))
        check("apply plain, nothing to do", try policyctl(["apply", "--policy", policy, "--root", root, "--yes", "--log-format", "plain"]))
        check("journal", try policyctl(["journal", "--root", root]), mustName: false)
        check("recover", try policyctl(["recover", "--root", root]))
        check("journal, another root", try policyctl(["journal", "--root", root + "/tmp"]))
        check("missing root", try policyctl(["plan", "--policy", policy, "--root", root + "/missing"]))
        check("metrics into a missing folder", try policyctl(["apply", "--policy", policy, "--root", root, "--yes",
                                                               "--metrics-file", root + "/no/such/m.prom"]))
        let listed = scratch.path + "/roots.yaml"
        try writePolicy(listed, "version: 1\nname: controls\nroots:\n  - { path: \"\(Self.yamlEscaped(root))\", rules: [tmp-expiry] }\nrules:\n  - { name: tmp-expiry, path: tmp, expire: 1d }\n")
        check("plan over roots:", try policyctl(["plan", "--policy", listed]))
        check("apply over roots:", try policyctl(["apply", "--policy", listed, "--yes"]))
        check("apply plain over roots:", try policyctl(["apply", "--policy", listed, "--yes", "--log-format", "plain"]))
        check("status over roots:", try policyctl(["status", "--policy", listed]))
        check("state folder", try policyctl(["apply", "--policy", policy, "--root", scratch.sub("plain"), "--yes",
                                             "--state-dir", root + "/no/state"]))
    }

    @Test("trash --discover and a discovering trash rule escape a mount point's path (its mountinfo escapes undone)")
    func mountPoints() throws {
        let scratch = ScratchDirectory("controls-mount")
        chmod(scratch.path, 0o755)
        let shared = scratch.sub("media")
        chmod(shared, 0o1777)
        let point = shared + "/" + Self.hostile
        #expect(try CoTenant.run("/bin/sh", ["-c", "mkdir -m 0755 \"$0\" && mkdir -m 0700 \"$0/.Trash-12345\"", point]).status == 0)
        mkdir(point + "/.Trash-0", 0o700)
        // mountinfo escapes space, tab, newline and backslash as octal; every other byte is written as it is.
        var field = ""
        for scalar in point.unicodeScalars {
            switch scalar {
            case " ": field += "\\040"
            case "\t": field += "\\011"
            case "\n": field += "\\012"
            case "\\": field += "\\134"
            default: field.unicodeScalars.append(scalar)
            }
        }
        let mountinfo = scratch.path + "/mountinfo"
        try Data("36 35 98:0 / \(field) rw - tmpfs tmpfs rw\n".utf8).write(to: URL(fileURLWithPath: mountinfo))
        let env = ["POLICYCTL_MOUNTINFO": mountinfo, "HOME": scratch.path + "/nohome"]
        let discover = try policyctl(["trash", "--discover"], environment: env)
        #expect(discover.status == 0)
        check("trash --discover", discover, tabs: true)
        let policy = scratch.path + "/bins.yaml"
        try writePolicy(policy, RootsEndToEndTests.trashPolicy)
        check("plan of discovered trash", try policyctl(["plan", "--policy", policy], environment: env))
        check("apply of discovered trash", try policyctl(["apply", "--policy", policy, "--yes", "--state-dir", scratch.path + "/state"], environment: env))
        check("apply plain of discovered trash", try policyctl(["apply", "--policy", policy, "--yes", "--log-format", "plain",
                                                               "--state-dir", scratch.path + "/state"], environment: env))
    }

    /// `text` as a double-quoted YAML scalar: every control as `\xNN` or `\uNNNN`, quotes and backslashes escaped.
    static func yamlEscaped(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x22: out += "\\\""
            case 0x5C: out += "\\\\"
            case 0..<0x20, 0x7F...0x9F: out += String(format: "\\x%02x", scalar.value)
            case 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069, 0x061C: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
