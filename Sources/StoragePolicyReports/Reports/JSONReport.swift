// The audit as stable JSON for other tools (the format is documented in Docs/ci.md): sorted keys, findings in
// report order, a path that is not UTF-8 also given exactly as `pathBase64`. Fields are only ever added.

@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyModel
@_spi(Layers) import StoragePolicyPlan

package struct JSONReport: Sendable {
    /// The `version` field: bumped only if a field changes meaning or goes away.
    package static let formatVersion = 1

    package init() {}

    package func render(_ report: AuditReport) throws -> String {
        String(decoding: try PrettyJSON.encode(document(report)), as: UTF8.self) + "\n"
    }

    /// What `render` writes, as a value (a test holds PrettyJSON's bytes to JSONEncoder's for it).
    func document(_ report: AuditReport) -> some Encodable { Document(report) }

    private struct Document: Encodable {
        var version = JSONReport.formatVersion
        var tool = Tool()
        var policy: String
        var policyFile: String?
        var root: String
        var createdAt: String
        var failOn: String
        var passed: Bool
        var rules: [RuleEntry]
        var findings: [FindingEntry]
        var skipped: [SkippedEntry]
        var notes: [String]
        var fixedSinceBaseline: [Baseline.Entry]?
        var summary: Summary

        init(_ r: AuditReport) {
            policy = r.policy; policyFile = r.policyFile; root = r.root; createdAt = r.createdAt
            failOn = r.failOn.rawValue; passed = r.passes
            rules = r.rules.map(RuleEntry.init)
            findings = r.findings.map(FindingEntry.init)
            skipped = r.skipped; notes = r.notes
            fixedSinceBaseline = r.usesBaseline ? r.fixedSinceBaseline : nil
            summary = Summary(r)
        }
    }

    private struct Tool: Encodable {
        var name = "policyctl"
        var version = StoragePolicyVersion.tool
    }

    private struct Location: Encodable {
        var file: String, line: Int, column: Int
        init?(_ l: PolicyLocation?) {
            guard let l else { return nil }
            file = l.file; line = l.line; column = l.column
        }
    }

    private struct RuleEntry: Encodable {
        var id, kind, mode, severity, summary: String
        var location: Location?
        init(_ r: ReportRule) {
            id = r.id; kind = r.kind; mode = r.mode.rawValue; severity = r.severity.rawValue; summary = r.summary
            location = Location(r.location)
        }
    }

    private struct FindingEntry: Encodable {
        var rule: String
        var path: String
        var pathBase64: String?
        var severity: String
        /// `violation`, or the action apply would take (`delete`, `rename`, `trash`, `mkdir`, `setxattr`, `write-tag`).
        var finding: String
        var to: String?
        var toBase64: String?
        var message: String
        var fingerprint: String
        var known: Bool
        var ruleLocation: Location?

        init(_ f: Finding) {
            rule = f.rule; path = f.path.string; pathBase64 = f.path.isValidUTF8 ? nil : f.path.base64
            severity = f.severity.rawValue; finding = f.source.name; message = f.message
            fingerprint = f.fingerprint; known = f.isKnown; ruleLocation = Location(f.ruleLocation)
            if case .action(.rename(let target)) = f.source { (to, toBase64) = (target.string, target.isValidUTF8 ? nil : target.base64) }
            if case .action(.trash(let target)) = f.source { (to, toBase64) = (target.string, target.isValidUTF8 ? nil : target.base64) }
        }
    }

    private struct Summary: Encodable {
        var findings, errors, warnings, notes, known, failing, entriesScanned, skipped: Int
        init(_ r: AuditReport) {
            let c = r.counts
            findings = c.total; errors = c.errors; warnings = c.warnings; notes = c.notes; known = c.known
            failing = c.failing; entriesScanned = r.entriesScanned; skipped = r.skipped.count
        }
    }
}
