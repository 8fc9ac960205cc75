import Foundation
import Testing
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyModel
@testable import StoragePolicyReports

/// The SARIF 2.1.0 object model's required properties (and those code scanning needs) as non-optional
/// fields, so decoding fails when one is missing.
private struct SarifLog: Decodable {
    var version: String
    var schema: String
    var runs: [Run]
    enum CodingKeys: String, CodingKey { case version, schema = "$schema", runs }

    struct Run: Decodable {
        var tool: Tool
        var results: [Result]
        var originalUriBaseIds: [String: ArtifactLocation]
        var automationDetails: AutomationDetails
        var invocations: [Invocation]
    }
    struct Tool: Decodable { var driver: Driver }
    struct Driver: Decodable {
        var name: String
        var version: String
        var informationUri: String
        var rules: [Rule]
    }
    struct Rule: Decodable {
        var id: String
        var shortDescription: Message
        var fullDescription: Message
        var help: Message
        var defaultConfiguration: Configuration
    }
    struct Configuration: Decodable { var level: String }
    struct Message: Decodable { var text: String }
    struct AutomationDetails: Decodable { var id: String }
    struct Invocation: Decodable { var executionSuccessful: Bool }
    struct Result: Decodable {
        var ruleId: String
        var ruleIndex: Int
        var level: String
        var message: Message
        var locations: [Location]
        var partialFingerprints: [String: String]
        var relatedLocations: [Location]?
        var baselineState: String?
    }
    struct Location: Decodable {
        var id: Int?
        var physicalLocation: PhysicalLocation
        var message: Message?
    }
    struct PhysicalLocation: Decodable {
        var artifactLocation: ArtifactLocation
        var region: Region?
    }
    struct ArtifactLocation: Decodable { var uri: String; var uriBaseId: String? }
    struct Region: Decodable { var startLine: Int; var startColumn: Int? }
}

@Suite("SARIF report") struct SARIFReportTests {
    private func decode(_ report: AuditReport, workingDirectory: String? = nil) throws -> SarifLog {
        let text = try SARIFReport(workingDirectory: workingDirectory).render(report)
        return try JSONDecoder().decode(SarifLog.self, from: Data(text.utf8))
    }

    @Test("a SARIF 2.1.0 log with every required field, and a rule entry per policy rule")
    func requiredFields() throws {
        let log = try decode(ReportFixture.report())
        #expect(log.version == "2.1.0")
        #expect(log.schema == SARIFReport.schema)
        #expect(log.runs.count == 1)
        let run = log.runs[0]
        #expect(run.tool.driver.name == "policyctl")
        #expect(run.tool.driver.version == StoragePolicyVersion.tool)
        #expect(run.tool.driver.informationUri.hasPrefix("https://"))
        #expect(run.tool.driver.rules.map(\.id) == ["layout", "tmp-expiry", "no-private-data", "lowercase-names", "snake-case"])
        #expect(run.tool.driver.rules.map(\.defaultConfiguration.level) == ["error", "warning", "error", "warning", "note"])
        #expect(run.tool.driver.rules.allSatisfy { !$0.shortDescription.text.isEmpty && !$0.help.text.isEmpty })
        #expect(run.automationDetails.id == "policyctl/app-sandbox/")
        #expect(run.invocations.map(\.executionSuccessful) == [true])
        #expect(run.originalUriBaseIds["ROOT"]?.uri == "file:///srv/snapshots/app%20data/")
        #expect(run.results.count == 7)
        for result in run.results {
            #expect(run.tool.driver.rules[result.ruleIndex].id == result.ruleId)
            #expect(["error", "warning", "note"].contains(result.level))
            #expect(result.locations.count == 1)
            #expect(result.locations[0].physicalLocation.artifactLocation.uriBaseId == "ROOT")
            #expect(result.locations[0].physicalLocation.region?.startLine == 1)
            #expect(result.partialFingerprints.keys.sorted() == [SARIFReport.fingerprintKey])
            #expect(result.baselineState == nil)
        }
    }

    @Test("results carry the finding's rule, level, message and root-relative location")
    func results() throws {
        let run = try decode(ReportFixture.report()).runs[0]
        let sqlite = try #require(run.results.first { $0.ruleId == "no-private-data" })
        #expect(sqlite.level == "error")
        #expect(sqlite.message.text == "Documents/UserFiles/Notes.sqlite: forbidden: matches '**/*.sqlite'")
        #expect(sqlite.locations[0].physicalLocation.artifactLocation.uri == "Documents/UserFiles/Notes.sqlite")
        let related = try #require(sqlite.relatedLocations?.first)
        #expect(related.physicalLocation.artifactLocation.uri == "policies/app-sandbox.yaml")
        #expect(related.physicalLocation.region?.startLine == 12)
        #expect(related.physicalLocation.region?.startColumn == 5)
        #expect(related.message?.text == "rule 'no-private-data' is defined here")
    }

    @Test("fingerprints are the findings' and the same on every run")
    func fingerprints() throws {
        let first = try decode(ReportFixture.report()).runs[0].results.map { $0.partialFingerprints[SARIFReport.fingerprintKey] }
        let second = try decode(ReportFixture.report()).runs[0].results.map { $0.partialFingerprints[SARIFReport.fingerprintKey] }
        #expect(first == second)
        #expect(first == ReportFixture.report().findings.map(\.fingerprint))
    }

    @Test("paths become relative URI references, percent-encoded byte by byte", arguments: [
        ("tmp/a.dat", "tmp/a.dat"),
        ("Documents/My Notes.txt", "Documents/My%20Notes.txt"),
        ("a#b?c%d", "a%23b%3Fc%25d"),
        ("c:weird,name", "c%3Aweird%2Cname"),
        ("~unreserved-._", "~unreserved-._"),
        ("Café", "Caf%C3%A9"),
        ("[x]", "%5Bx%5D"),
    ])
    func uris(path: String, uri: String) {
        #expect(SARIFReport.uri(for: RelativePath(path)!) == uri)
    }

    @Test("a name that is not UTF-8 keeps its exact bytes in the URI")
    func nonUTF8URI() throws {
        let uri = SARIFReport.uri(for: ReportFixture.invalidUTF8)
        #expect(uri == "tmp/%FF%01%25%3A%2C%23.bin")
        #expect(percentDecode(uri) == ReportFixture.invalidUTF8.bytes)
        #expect(SARIFReport.uri(for: ReportFixture.hostile) == "tmp/we%22ird%20%3C%26%3E%20name%0A.dat")
    }

    @Test("a baseline sets baselineState: unchanged for known findings, new for the rest")
    func baselineState() throws {
        let results = try decode(ReportFixture.report(baseline: ReportFixture.baseline)).runs[0].results
        #expect(results.filter { $0.baselineState == "unchanged" }.map(\.locations[0].physicalLocation.artifactLocation.uri) == ["tmp/a.dat"])
        #expect(results.filter { $0.baselineState == "new" }.count == 6)
    }

    @Test("an absolute policy path under the working directory is written relative, elsewhere as a file URI")
    func policyURIs() {
        let sarif = SARIFReport(workingDirectory: "/home/ci/checkout")
        #expect(sarif.policyURI("/home/ci/checkout/policies/a b.yaml") == "policies/a%20b.yaml")
        #expect(sarif.policyURI("/etc/policyctl/a.yaml") == "file:///etc/policyctl/a.yaml")
        #expect(sarif.policyURI("policies/a.yaml") == "policies/a.yaml")
    }

    @Test("skipped entries are tool notifications, not results")
    func notifications() throws {
        let text = try SARIFReport().render(ReportFixture.report())
        let json = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let run = try #require((json["runs"] as? [[String: Any]])?.first)
        let invocation = try #require((run["invocations"] as? [[String: Any]])?.first)
        let notifications = try #require(invocation["toolExecutionNotifications"] as? [[String: Any]])
        #expect(notifications.count == 1)
        #expect((notifications[0]["message"] as? [String: Any])?["text"] as? String == "tmp/fifo: skipped: not a regular file (FIFO)")
    }

    private func percentDecode(_ text: String) -> [UInt8] {
        var out: [UInt8] = []
        var bytes = Array(text.utf8)[...]
        while let b = bytes.popFirst() {
            if b == 0x25, bytes.count >= 2, let v = UInt8(String(decoding: bytes.prefix(2), as: UTF8.self), radix: 16) {
                out.append(v)
                bytes = bytes.dropFirst(2)
            } else {
                out.append(b)
            }
        }
        return out
    }
}
