// Colour by the environment, through the built binary (whose output here is no TTY): NO_COLOR counts only when
// it is not empty (no-color.org); FORCE_COLOR and CLICOLOR_FORCE force colour for CI logs; NO_COLOR wins.
import Foundation
import Testing

@Suite("colour from the environment (end to end)")
struct ColorEnvironmentTests {
    static let escape = "\u{1B}["

    /// `plan` text over a small tree with `environment`; the helper's own NO_COLOR=1 is replaced by what is given.
    static func plan(_ environment: [String: String]) throws -> RunResult {
        let scratch = ScratchDirectory("colour")
        let root = scratch.sub("tree")
        try buildTree(at: root, [.dir("tmp"), .file("tmp/old\nname", ageHours: 48)])
        let policy = scratch.path + "/p.yaml"
        try writePolicy(policy, "version: 1\nname: p\nrules:\n  - name: e\n    path: tmp\n    expire: 1d\n")
        return try policyctl(["plan", "--policy", policy, "--root", root], environment: environment)
    }

    @Test("no TTY: plain, however NO_COLOR is set, unless colour is forced")
    func plainWithoutTTY() throws {
        for env in [["NO_COLOR": ""], ["NO_COLOR": "1"], ["NO_COLOR": "", "FORCE_COLOR": "0"], ["NO_COLOR": "", "CLICOLOR_FORCE": ""],
                    ["NO_COLOR": "", "FORCE_COLOR": "false"]] {
            let r = try Self.plan(env)
            #expect(r.status == 0, "\(env): \(r)")
            #expect(r.stdout.contains("tmp/old\\nname"), "\(env): \(r)")
            #expect(!r.stdout.contains(Self.escape), "\(env): \(r.stdout)")
        }
    }

    @Test("FORCE_COLOR or CLICOLOR_FORCE colour output that is no TTY, TERM=dumb too; a non-empty NO_COLOR wins")
    func forced() throws {
        for env in [["NO_COLOR": "", "FORCE_COLOR": "1"], ["NO_COLOR": "", "CLICOLOR_FORCE": "1", "TERM": "dumb"],
                    ["NO_COLOR": "", "FORCE_COLOR": "3"]] {
            let r = try Self.plan(env)
            #expect(r.status == 0, "\(env): \(r)")
            #expect(r.stdout.contains(Self.escape), "\(env): \(r.stdout)")
            // Colour never reaches inside a path: the escaped name is whole.
            #expect(r.stdout.contains("tmp/old\\nname"), "\(env): \(r.stdout)")
        }
        let both = try Self.plan(["NO_COLOR": "1", "FORCE_COLOR": "1"])
        #expect(!both.stdout.contains(Self.escape), "\(both.stdout)")
    }
}
