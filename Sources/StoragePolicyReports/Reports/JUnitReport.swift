// The audit as JUnit XML for GitLab and other test viewers: a test suite per rule, a failing test case per
// finding that fails the audit, a passing one for a clean rule. Everything is escaped; never ill-formed XML.

@_spi(Layers) import StoragePolicyFileSystem

package struct JUnitReport: Sendable {
    package init() {}

    /// Findings that fail the audit are `<failure>`s. Known findings (in the baseline) and those below
    /// `--fail-on` are `<skipped>` with the reason, so the test report agrees with the exit code.
    package func render(_ report: AuditReport) -> String {
        let counts = report.counts
        let byRule = Dictionary(grouping: report.findings, by: \.rule)
        let cases = report.rules.map { max(1, byRule[$0.id]?.count ?? 0) }.reduce(0, +)
        var out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        out += "<testsuites name=\"\(attr("policyctl audit: " + report.policy))\" tests=\"\(cases)\""
        out += " failures=\"\(counts.failing)\" errors=\"0\" skipped=\"\(counts.total - counts.failing)\" time=\"0\">\n"
        for rule in report.rules {
            let findings = byRule[rule.id] ?? []
            let failing = findings.filter { !$0.isKnown && $0.severity >= report.failOn }.count
            let classname = attr("\(report.policy).\(rule.id)")
            out += "  <testsuite name=\"\(attr(rule.id))\" tests=\"\(max(1, findings.count))\" failures=\"\(failing)\""
            out += " errors=\"0\" skipped=\"\(findings.count - failing)\" time=\"0\" timestamp=\"\(attr(report.createdAt))\">\n"
            out += "    <properties>\n"
            out += "      <property name=\"kind\" value=\"\(attr(rule.kind))\"/>\n"
            out += "      <property name=\"mode\" value=\"\(rule.mode.rawValue)\"/>\n"
            out += "      <property name=\"severity\" value=\"\(rule.severity.rawValue)\"/>\n"
            if let l = rule.location { out += "      <property name=\"definedAt\" value=\"\(attr(l.description))\"/>\n" }
            out += "    </properties>\n"
            if findings.isEmpty {
                out += "    <testcase classname=\"\(classname)\" name=\"\(attr(rule.summary))\" time=\"0\"/>\n"
            }
            for f in findings {
                let path = f.path.isRoot ? "." : f.path.escaped
                out += "    <testcase classname=\"\(classname)\" name=\"\(attr(path))\" file=\"\(attr(path))\" time=\"0\">\n"
                let message = PrintableText.escapingControls(f.message)
                if f.isKnown {
                    out += "      <skipped message=\"\(attr("known (in the baseline): " + message))\"/>\n"
                } else if f.severity < report.failOn {
                    out += "      <skipped message=\"\(attr("\(f.severity.rawValue) below --fail-on \(report.failOn.rawValue): " + message))\"/>\n"
                } else {
                    var body = "\(path): \(f.severity.rawValue): \(message) [\(f.rule)]"
                    if let l = f.ruleLocation { body += "\nrule '\(f.rule)' (\(rule.kind)) is defined at \(l)" }
                    body += "\n" + rule.help
                    out += "      <failure type=\"\(f.severity.rawValue)\" message=\"\(attr(message))\">\(XMLText.content(body))</failure>\n"
                }
                out += "    </testcase>\n"
            }
            out += "  </testsuite>\n"
        }
        out += "</testsuites>\n"
        return out
    }

    private func attr(_ text: String) -> String { XMLText.attribute(text) }
}
