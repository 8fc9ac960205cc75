import Foundation
import TreeFixture
import Testing

@Suite("policyctl init") struct InitTests {
    static let packageRoot = String(#filePath).components(separatedBy: "/Tests/")[0]
    static let templates = ["ci-layout-audit", "download-manager", "ios-app-sandbox", "ios-photo-app", "linux-user-cache"]

    @Test("every embedded template is the file in Policies/ byte for byte but its modeline (embedded at build time by Plugins/EmbedPolicies)", arguments: templates)
    func embeddedMatchesSource(name: String) throws {
        let r = try PolicyctlBinary.run(["init", "--template", name, "--output", "-"])
        #expect(r.status == 0)
        let source = try String(contentsOfFile: "\(Self.packageRoot)/Policies/\(name).yaml", encoding: .utf8)
        // All but the modeline, which init points at the schema on this machine (NewcomerPolicyTests).
        #expect(r.stdout.drop { $0 != "\n" } == source.drop { $0 != "\n" })
        #expect(r.stdout.hasPrefix("# yaml-language-server: $schema=/"))
    }

    @Test("--list names every template with its description") func list() throws {
        let r = try PolicyctlBinary.run(["init", "--list"])
        #expect(r.status == 0)
        #expect(r.stdout.split(separator: "\n").map { String($0.split(separator: " ")[0]) } == Self.templates)
    }

    @Test("init writes a policy that validates, and never overwrites one") func writes() throws {
        let dir = TestScratch.path("init")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let first = try PolicyctlBinary.run(["init", "--template", "download-manager"], cwd: dir)
        #expect(first.status == 0)
        #expect(try PolicyctlBinary.run(["validate", dir + "/policy.yaml"]).status == 0)
        let again = try PolicyctlBinary.run(["init"], cwd: dir)
        #expect(again.status == 64)
        #expect(again.stderr.contains("policy.yaml already exists"))
        let text = try String(contentsOfFile: dir + "/policy.yaml", encoding: .utf8)
        #expect(text.hasPrefix("# yaml-language-server: $schema="))
        #expect(text.contains("name: download-manager"))
    }
}
