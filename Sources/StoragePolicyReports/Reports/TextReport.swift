// The audit for people: one line per finding, compiler-style (`path: severity: message [rule]`), then skipped
// entries and a verdict. Paths are shown escaped and messages without control characters; never colour.

@_spi(Layers) import StoragePolicyFileSystem

package struct TextReport: Sendable {
    package init() {}

    package func render(_ report: AuditReport) -> String {
        var out = "Audit of \(PrintableText.escapingControls(report.root)) against policy '\(report.policy)'"
        out += " (\(AuditReport.Counts.plural(report.entriesScanned, "entry", "entries")) scanned)\n"
        for f in report.findings {
            out += "\(TextReport.line(f))\(f.isKnown ? " (known)" : "")\n"
        }
        for s in report.skipped {
            out += "skipped: \(s.path.isRoot ? "." : s.path.escaped): \(PrintableText.escapingControls(s.reason))\n"
        }
        for n in report.notes { out += "note: \(PrintableText.escapingControls(n))\n" }
        for e in report.fixedSinceBaseline {
            out += "fixed: \(e.path) [\(e.rule)] is in the baseline but no longer found\n"
        }
        out += "\n" + report.summaryLine + "\n"
        return out
    }

    /// `tmp/a.dat: warning: would delete: mtime 2d3h ago > 24h [tmp-expiry]`
    static func line(_ f: Finding) -> String {
        "\(f.path.isRoot ? "." : f.path.escaped): \(f.severity.rawValue): \(PrintableText.escapingControls(f.message)) [\(f.rule)]"
    }
}
