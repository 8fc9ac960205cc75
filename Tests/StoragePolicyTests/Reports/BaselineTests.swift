import Foundation
import Testing
@testable import StoragePolicy
@testable import StoragePolicyReports

@Suite("Baselines") struct BaselineTests {
    @Test("a written baseline reads back the same, and writing twice gives the same bytes")
    func roundTrip() throws {
        let baseline = Baseline(policy: "app-sandbox", findings: ReportFixture.report().findings)
        let data = try baseline.jsonData()
        #expect(try Baseline(json: data) == baseline)
        #expect(try Baseline(policy: "app-sandbox", findings: ReportFixture.report().findings.reversed()).jsonData() == data)
        #expect(baseline.entries.map(\.rule) == ["layout", "layout", "no-private-data", "snake-case", "tmp-expiry", "tmp-expiry", "tmp-expiry"])
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.hasPrefix("{\n  \"findings\" : [\n"))
        #expect(text.contains("\"version\" : 1"))
        #expect(text.contains("\"path\" : \"tmp/\\\\xff\\\\x01%:,#.bin\""))
    }

    @Test("findings in the baseline are known and never fail; new ones still do")
    func known() {
        let all = Baseline(policy: nil, findings: ReportFixture.report().findings)
        let report = ReportFixture.report(baseline: all)
        #expect(report.findings.allSatisfy { $0.isKnown })
        #expect(report.passes)
        #expect(report.fixedSinceBaseline.isEmpty)

        let partial = ReportFixture.report(baseline: ReportFixture.baseline)
        #expect(partial.findings.filter(\.isKnown).map(\.path.string) == ["tmp/a.dat"])
        #expect(partial.fixedSinceBaseline.map(\.path) == ["tmp/gone.dat"])
        #expect(!partial.passes)
    }

    @Test("a file that is not a baseline is refused with what was expected", arguments: [
        ("[]", "not a policyctl baseline (expected JSON with \"version\": 1 and \"findings\": [{\"fingerprint\", \"rule\", \"path\"}])"),
        ("{\"version\": 2, \"findings\": []}", "baseline version 2 is not supported (this policyctl reads version 1)"),
        ("{\"version\": 1, \"findings\": [{\"fingerprint\": \"XYZ\", \"rule\": \"r\", \"path\": \"p\"}]}",
         "'XYZ' is not a fingerprint (64 lowercase hex digits)"),
    ])
    func malformed(json: String, message: String) {
        #expect(throws: BaselineError(message: message)) { try Baseline(json: Data(json.utf8)) }
    }

    @Test("duplicate fingerprints are kept once")
    func duplicates() {
        let e = Baseline.Entry(fingerprint: String(repeating: "0", count: 64), rule: "r", path: "p")
        #expect(Baseline(policy: nil, entries: [e, e]).entries == [e])
    }
}
