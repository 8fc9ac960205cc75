// The audit as SARIF 2.1.0 for GitHub code scanning and other SARIF viewers: one run, a rule entry per policy
// rule, a result per finding located at its root-relative path. Never emits an absolute path as a plain uri.

@_spi(Layers) import StoragePolicyFileSystem

package struct SARIFReport: Sendable {
    package static let schema = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
    /// Where people learn about the tool (SARIF `tool.driver.informationUri`).
    package static let informationURI = "https://github.com/policyctl/policyctl"
    /// The `partialFingerprints` key: versioned, so a future change of what is hashed cannot collide.
    package static let fingerprintKey = "policyctlFinding/v1"

    /// The directory relative policy paths were given from (the current directory): an absolute policy path
    /// under it is written relative, which is how code scanning finds files in the checkout.
    package var workingDirectory: String?

    package init(workingDirectory: String? = nil) { self.workingDirectory = workingDirectory }

    package func render(_ report: AuditReport) throws -> String {
        String(decoding: try PrettyJSON.encode(document(report)), as: UTF8.self) + "\n"
    }

    /// What `render` writes, as a value (a test holds PrettyJSON's bytes to JSONEncoder's for it).
    func document(_ report: AuditReport) -> some Encodable { Log(runs: [run(report)]) }

    /// A root-relative path as a relative URI reference (RFC 3986): every byte other than an unreserved
    /// character or `/` is percent-encoded, so spaces, `#`, `%`, `:` and bytes that are not UTF-8 survive.
    package static func uri(for path: RelativePath) -> String { percentEncode(path.bytes) }

    /// The URI of a policy file: relative (to the working directory) where it can be, else `file://`.
    func policyURI(_ file: String) -> String {
        if !file.hasPrefix("/") { return SARIFReport.percentEncode(Array(file.utf8)) }
        if let base = workingDirectory.map({ $0.hasSuffix("/") ? $0 : $0 + "/" }), file.hasPrefix(base) {
            return SARIFReport.percentEncode(Array(file.utf8.dropFirst(base.utf8.count)))
        }
        return "file://" + SARIFReport.percentEncode(Array(file.utf8))
    }

    static func percentEncode(_ bytes: [UInt8]) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        for b in bytes {
            switch b {
            case 0x41...0x5A, 0x61...0x7A, 0x30...0x39, 0x2D, 0x2E, 0x5F, 0x7E, 0x2F: out.append(b)
            default: out += [0x25, hex[Int(b >> 4)], hex[Int(b & 0xF)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private func run(_ report: AuditReport) -> Run {
        let ruleIndex = Dictionary(report.rules.enumerated().map { ($1.id, $0) }, uniquingKeysWith: { first, _ in first })
        let rootURI = "file://" + SARIFReport.percentEncode(Array(report.root.utf8)) + (report.root.hasSuffix("/") ? "" : "/")
        let results = report.findings.map { f in
            Result(
                ruleId: f.rule,
                ruleIndex: ruleIndex[f.rule],
                level: f.severity.rawValue,
                message: Message(text: "\(f.path.isRoot ? "." : f.path.escaped): \(f.message)"),
                locations: [Location(physicalLocation: PhysicalLocation(
                    artifactLocation: ArtifactLocation(uri: f.path.isRoot ? "." : SARIFReport.uri(for: f.path), uriBaseId: "ROOT"),
                    // Code scanning shows a result only with a region; a finding is about the whole entry,
                    // so it points at the entry's start.
                    region: Region(startLine: 1, startColumn: nil)))],
                relatedLocations: f.ruleLocation.map { l in
                    [Location(id: 1, physicalLocation: PhysicalLocation(
                        artifactLocation: ArtifactLocation(uri: policyURI(l.file), uriBaseId: nil),
                        region: Region(startLine: l.line, startColumn: l.column)),
                        message: Message(text: "rule '\(f.rule)' is defined here"))]
                },
                partialFingerprints: [SARIFReport.fingerprintKey: f.fingerprint],
                baselineState: report.usesBaseline ? (f.isKnown ? "unchanged" : "new") : nil,
                properties: ResultProperties(finding: f.source.name, known: f.isKnown)
            )
        }
        let notifications = report.skipped.map { s in
            Notification(level: "warning",
                         message: Message(text: "\(s.path.isRoot ? "." : s.path.escaped): skipped: \(s.reason)"),
                         locations: [Location(physicalLocation: PhysicalLocation(
                            artifactLocation: ArtifactLocation(uri: s.path.isRoot ? "." : SARIFReport.uri(for: s.path), uriBaseId: "ROOT"),
                            region: nil))])
        }
        return Run(
            tool: Tool(driver: Driver(rules: report.rules.map(ReportingDescriptor.init))),
            automationDetails: AutomationDetails(id: "policyctl/\(report.policy)/"),
            originalUriBaseIds: ["ROOT": ArtifactLocation(uri: rootURI, uriBaseId: nil)],
            invocations: [Invocation(executionSuccessful: true, toolExecutionNotifications: notifications.isEmpty ? nil : notifications)],
            results: results
        )
    }

    // The subset of the SARIF 2.1.0 object model this report writes.

    private struct Log: Encodable {
        var schema = SARIFReport.schema
        var version = "2.1.0"
        var runs: [Run]
        enum CodingKeys: String, CodingKey { case schema = "$schema", version, runs }
    }

    private struct Run: Encodable {
        var tool: Tool
        var automationDetails: AutomationDetails
        var originalUriBaseIds: [String: ArtifactLocation]
        var invocations: [Invocation]
        var results: [Result]
    }

    private struct Tool: Encodable { var driver: Driver }

    private struct Driver: Encodable {
        var name = "policyctl"
        var version = StoragePolicyVersion.tool
        var semanticVersion = StoragePolicyVersion.tool
        var informationUri = SARIFReport.informationURI
        var rules: [ReportingDescriptor]
    }

    private struct ReportingDescriptor: Encodable {
        var id: String
        var name: String
        var shortDescription: Message
        var fullDescription: Message
        var help: Message
        var defaultConfiguration: Configuration
        var properties: RuleProperties

        init(_ r: ReportRule) {
            id = r.id; name = r.id
            shortDescription = Message(text: r.summary)
            fullDescription = Message(text: r.details)
            help = Message(text: r.help)
            defaultConfiguration = Configuration(level: r.severity.rawValue)
            properties = RuleProperties(tags: ["storage-policy", r.kind], kind: r.kind, mode: r.mode.rawValue)
        }
    }

    private struct Configuration: Encodable { var level: String }
    private struct RuleProperties: Encodable { var tags: [String]; var kind: String; var mode: String }
    private struct AutomationDetails: Encodable { var id: String }
    private struct Message: Encodable { var text: String }

    private struct Invocation: Encodable {
        var executionSuccessful: Bool
        var toolExecutionNotifications: [Notification]?
    }

    private struct Notification: Encodable {
        var level: String
        var message: Message
        var locations: [Location]
    }

    private struct Result: Encodable {
        var ruleId: String
        var ruleIndex: Int?
        var level: String
        var message: Message
        var locations: [Location]
        var relatedLocations: [Location]?
        var partialFingerprints: [String: String]
        var baselineState: String?
        var properties: ResultProperties
    }

    private struct ResultProperties: Encodable { var finding: String; var known: Bool }

    private struct Location: Encodable {
        var id: Int?
        var physicalLocation: PhysicalLocation
        var message: Message?
    }

    private struct PhysicalLocation: Encodable {
        var artifactLocation: ArtifactLocation
        var region: Region?
    }

    private struct ArtifactLocation: Encodable {
        var uri: String
        var uriBaseId: String?
    }

    private struct Region: Encodable {
        var startLine: Int
        var startColumn: Int?
    }
}
