import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Testing
@testable import StoragePolicy
@_spi(Layers) @testable import StoragePolicyFileSystem
@testable import StoragePolicyModel
@testable import StoragePolicyPlan
@testable import StoragePolicyReports

/// A small element tree built by Foundation's XMLParser: if the document is not well-formed, parsing fails.
private final class XMLTree: NSObject, XMLParserDelegate {
    final class Element {
        let name: String
        let attributes: [String: String]
        var text = ""
        var children: [Element] = []
        init(name: String, attributes: [String: String]) { self.name = name; self.attributes = attributes }
        func all(_ name: String) -> [Element] { children.filter { $0.name == name } }
        func first(_ name: String) -> Element? { children.first { $0.name == name } }
    }

    private var stack: [Element] = []
    private(set) var root: Element?
    private(set) var error: Error?

    static func parse(_ text: String) throws -> Element {
        let tree = XMLTree()
        let parser = XMLParser(data: Data(text.utf8))
        parser.delegate = tree
        let ok = parser.parse()
        guard ok, let root = tree.root else {
            throw tree.error ?? parser.parserError ?? CocoaError(.coderReadCorrupt)
        }
        return root
    }

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                attributes: [String: String] = [:]) {
        let element = Element(name: name, attributes: attributes)
        stack.last?.children.append(element)
        stack.append(element)
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) { stack.last?.text += string }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        let element = stack.removeLast()
        if stack.isEmpty { root = element }
    }

    func parser(_ parser: XMLParser, parseErrorOccurred parseError: Error) { error = parseError }
}

@Suite("JUnit report") struct JUnitReportTests {
    @Test("a test suite per rule, a failing case per failing finding, a passing case for a clean rule")
    func structure() throws {
        let root = try XMLTree.parse(JUnitReport().render(ReportFixture.report(baseline: ReportFixture.baseline)))
        #expect(root.name == "testsuites")
        #expect(root.attributes["tests"] == "8")
        #expect(root.attributes["failures"] == "5")
        #expect(root.attributes["skipped"] == "2")
        let suites = root.all("testsuite")
        #expect(suites.map { $0.attributes["name"] } == ["layout", "tmp-expiry", "no-private-data", "lowercase-names", "snake-case"])
        #expect(suites.map { $0.all("testcase").count } == [2, 3, 1, 1, 1])
        #expect(suites.map { $0.attributes["failures"] } == ["2", "2", "1", "0", "0"])

        let clean = suites[3].all("testcase")[0]
        #expect(clean.children.isEmpty)
        #expect(clean.attributes["name"] == "Names under 'Documents/UserFiles' are lowercase.")

        let known = suites[1].all("testcase")[0]
        #expect(known.attributes["name"] == "tmp/a.dat")
        #expect(known.first("skipped")?.attributes["message"] == "known (in the baseline): would delete: mtime 2d3h ago > 24h")
        let belowThreshold = suites[4].all("testcase")[0].first("skipped")
        #expect(belowThreshold?.attributes["message"] == "note below --fail-on warning: name does not match /^[a-z0-9_]+\\.txt$/")

        let failure = try #require(suites[2].all("testcase")[0].first("failure"))
        #expect(failure.attributes["type"] == "error")
        #expect(failure.attributes["message"] == "forbidden: matches '**/*.sqlite'")
        #expect(failure.text.hasPrefix("Documents/UserFiles/Notes.sqlite: error: forbidden: matches '**/*.sqlite' [no-private-data]\nrule 'no-private-data' (forbid) is defined at policies/app-sandbox.yaml:12:5\n"))
        #expect(suites[2].all("properties").first?.all("property").map { $0.attributes["value"] } == ["forbid", "audit", "error", "policies/app-sandbox.yaml:12:5"])
    }

    @Test("hostile names (newline, markup, invalid UTF-8) give well-formed XML with the names visible")
    func hostilePaths() throws {
        let root = try XMLTree.parse(JUnitReport().render(ReportFixture.report()))
        let names = root.all("testsuite")[1].all("testcase").map { $0.attributes["name"] }
        #expect(names == ["tmp/a.dat", "tmp/we\"ird <&> name\\n.dat", "tmp/\\xff\\x01%:,#.bin"])
    }

    @Test("control characters, markup and CR in rule names and messages survive as visible text")
    func hostileText() throws {
        let rule = "r<&>\"'\u{1}"
        let plan = Plan(policy: "p&<\u{0}>", root: "/r", createdAt: "t", evaluatedAtNs: 0, violations: [
            Violation(rule: rule, path: RelativePath([0x61, 0x0D, 0x0A, 0x1B, 0xC3])!,
                      message: "bad\u{0}\u{1B}[31m\r\nred\u{FFFE}]]>", severity: .error),
        ])
        let xml = JUnitReport().render(AuditReport(plan: plan, policy: Policy(name: "p")))
        #expect(!xml.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" })
        let root = try XMLTree.parse(xml)
        #expect(root.attributes["name"] == "policyctl audit: p&<\\x00>")
        let suite = try #require(root.first("testsuite"))
        #expect(suite.attributes["name"] == "r<&>\"'\\x01")
        let testcase = try #require(suite.first("testcase"))
        #expect(testcase.attributes["name"] == "a\\r\\n\\x1b\\xc3")
        let failure = try #require(testcase.first("failure"))
        #expect(failure.attributes["message"] == "bad\\x00\\x1b[31m\\x0d\\x0ared\\u{FFFE}]]>")
    }

    @Test("a clean audit still lists every rule, each passing")
    func clean() throws {
        let root = try XMLTree.parse(JUnitReport().render(ReportFixture.cleanReport))
        #expect(root.attributes["tests"] == "5")
        #expect(root.attributes["failures"] == "0")
        #expect(root.all("testsuite").allSatisfy { $0.all("testcase").count == 1 && $0.all("testcase")[0].children.isEmpty })
    }
}
