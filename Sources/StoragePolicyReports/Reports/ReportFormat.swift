// The formats `policyctl audit --format` writes, and the one place that picks a renderer for each.
// Rendering only builds text: writing it anywhere is the caller's job.

package enum ReportFormat: String, Sendable, CaseIterable {
    case text, json, sarif, junit, github

    /// Renders `report`; `workingDirectory` lets SARIF name the policy file, and GitHub annotations every file, relative to the checkout.
    package func render(_ report: AuditReport, workingDirectory: String? = nil) throws -> String {
        switch self {
        case .text: TextReport().render(report)
        case .json: try JSONReport().render(report)
        case .sarif: try SARIFReport(workingDirectory: workingDirectory).render(report)
        case .junit: JUnitReport().render(report)
        case .github: GitHubReport(workingDirectory: workingDirectory).render(report)
        }
    }
}
