import Foundation
import TreeFixture
import Testing

@Suite("policyctl validate") struct ValidateTests {
    static let packageRoot = String(#filePath).components(separatedBy: "/Tests/")[0]

    static func write(_ text: String) throws -> String {
        let path = TestScratch.path("policy") + ".yaml"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test("every reference policy is valid (exit 0)") func reference() throws {
        let files = ["ios-app-sandbox", "download-manager", "linux-user-cache", "ci-layout-audit"].map { "\(Self.packageRoot)/Policies/\($0).yaml" }
        let r = try PolicyctlBinary.run(["validate"] + files)
        #expect(r.status == 0)
        #expect(r.stdout.split(separator: "\n").count == 4)
        #expect(r.stderr.isEmpty)
    }

    @Test("an invalid policy exits 65 with file:line:col, the source line and a caret") func invalid() throws {
        let path = try Self.write("version: 1\nname: t\nrules:\n  - name: tmp-expiry\n    path: tmp\n    expire: { afer: 24h }\n")
        let r = try PolicyctlBinary.run(["validate", path])
        #expect(r.status == 65)
        #expect(r.stderr.contains("\(path):6:15: error: rule 'tmp-expiry': 'expire': unknown key 'afer' (did you mean 'after'?)\n      expire: { afer: 24h }\n                ^\n"))
    }

    @Test("a missing file is an I/O error (74), a missing argument a usage error (64)") func exitCodes() throws {
        #expect(try PolicyctlBinary.run(["validate", "/nonexistent/p.yaml"]).status == 74)
        let usage = try PolicyctlBinary.run(["validate"])
        #expect(usage.status == 64)
        #expect(usage.stderr.hasPrefix("Error: Missing expected argument '<policy>'\nUsage: policyctl validate"))
    }

    @Test("--format json reports every diagnostic with its location") func json() throws {
        let path = try Self.write("version: 1\nname: t\nbogus: 1\n")
        let r = try PolicyctlBinary.run(["validate", "--format", "json", path])
        #expect(r.status == 65)
        let report = try #require(try JSONSerialization.jsonObject(with: r.stdoutData) as? [[String: Any]])
        #expect(report.count == 1)
        #expect(report[0]["valid"] as? Bool == false)
        let d = try #require((report[0]["diagnostics"] as? [[String: Any]])?.first)
        #expect(d["line"] as? Int == 3)
        #expect(d["column"] as? Int == 1)
        #expect(d["severity"] as? String == "error")
    }

    @Test("--strict turns warnings into a failure") func strict() throws {
        let path = try Self.write("version: 1\nname: t\nrules:\n  - {name: n, path: D, naming: {case: lower}}\n  - {name: e, path: D/x, expire: 7d}\n")
        #expect(try PolicyctlBinary.run(["validate", path]).status == 0)
        #expect(try PolicyctlBinary.run(["validate", "--strict", path]).status == 65)
    }

    @Test("validate --help is shaped like swift-argument-parser's") func help() throws {
        let r = try PolicyctlBinary.run(["validate", "--help"])
        #expect(r.status == 0)
        #expect(r.stdout.hasPrefix("OVERVIEW: Check policies for errors, printing each at file:line:col.\n"))
        #expect(r.stdout.contains("\nUSAGE: policyctl validate [--strict] [--quiet] [--effective] [--format <format>] [--cache-dir <dir>] <policy> ...\n"))
        #expect(r.stdout.contains("\n  --format <format>       Output format. (values: text, json) (default: text)\n"))
        #expect(r.stdout.hasSuffix("  -h, --help              Show help information.\n"))
    }
}
