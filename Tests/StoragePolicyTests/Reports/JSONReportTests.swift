import Foundation
import Testing
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyModel
@testable import StoragePolicyPlan
@testable import StoragePolicyReports

@Suite("JSON report") struct JSONReportTests {
    @Test("the documented fields, with exact bytes for names that are not UTF-8")
    func fields() throws {
        let text = try JSONReport().render(ReportFixture.report(baseline: ReportFixture.baseline))
        let json = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(json["version"] as? Int == 1)
        #expect((json["tool"] as? [String: Any])?["name"] as? String == "policyctl")
        #expect(json["policy"] as? String == "app-sandbox")
        #expect(json["policyFile"] as? String == "policies/app-sandbox.yaml")
        #expect(json["root"] as? String == "/srv/snapshots/app data")
        #expect(json["failOn"] as? String == "warning")
        #expect(json["passed"] as? Bool == false)
        let summary = try #require(json["summary"] as? [String: Int])
        #expect(summary == ["findings": 7, "errors": 3, "warnings": 3, "notes": 1, "known": 1, "failing": 5, "entriesScanned": 42, "skipped": 1])
        let findings = try #require(json["findings"] as? [[String: Any]])
        #expect(findings.count == 7)
        let odd = try #require(findings.first { $0["pathBase64"] != nil })
        #expect(Base64.decode(odd["pathBase64"] as! String) == ReportFixture.invalidUTF8.bytes)
        #expect(odd["finding"] as? String == "delete")
        #expect(findings.filter { $0["known"] as? Bool == true }.map { $0["path"] as? String } == ["tmp/a.dat"])
        #expect((findings[0]["ruleLocation"] as? [String: Any])?["line"] as? Int == 4)
        #expect((json["fixedSinceBaseline"] as? [[String: Any]])?.map { $0["path"] as? String } == ["tmp/gone.dat"])
        #expect((json["rules"] as? [[String: Any]])?.map { $0["id"] as? String } == ["layout", "tmp-expiry", "no-private-data", "lowercase-names", "snake-case"])
    }

    @Test("rename and trash findings carry their target")
    func targets() throws {
        let plan = Plan(policy: "p", root: "/r", createdAt: "t", evaluatedAtNs: 0, actions: [
            Action(kind: .rename(to: RelativePath("docs/note.txt")!), path: RelativePath("docs/Note.TXT")!, rule: "lower", reason: "uppercase"),
        ])
        let text = try JSONReport().render(AuditReport(plan: plan, policy: Policy(name: "p")))
        let json = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let finding = try #require((json["findings"] as? [[String: Any]])?.first)
        #expect(finding["to"] as? String == "docs/note.txt")
        #expect(finding["message"] as? String == "would rename to docs/note.txt: uppercase")
        #expect(json["fixedSinceBaseline"] == nil)
    }

    @Test("the same report renders to the same bytes")
    func stable() throws {
        #expect(try JSONReport().render(ReportFixture.report()) == JSONReport().render(ReportFixture.report()))
    }
}
