// The audit as GitHub Actions workflow commands (`::error file=...,title=...::message`), escaped as the
// Actions toolkit escapes them, so no file name can end a command early or start one of its own.

public struct GitHubReport: Sendable {
    /// GitHub turns only the first 10 notices of a step into annotations; the summary must be one of them.
    public static let noticeLimit = 10

    public init() {}

    /// New findings become `::error`, `::warning` or `::notice` annotations; findings known from the baseline
    /// are plain log lines (they must not crowd out new ones). At most 9 notes are annotations, so the
    /// closing summary notice, which carries the totals, is always shown.
    public func render(_ report: AuditReport) -> String {
        var out = ""
        var notices = 0
        for f in report.findings {
            let path = f.path.isRoot ? "." : f.path.escaped
            let text = "\(path): \(PrintableText.escapingControls(f.message))"
            if f.isKnown {
                out += "known (in the baseline): \(GitHubReport.escapeData(text)) [\(GitHubReport.escapeData(f.rule))]\n"
                continue
            }
            let command: String
            switch f.severity {
            case .error: command = "error"
            case .warning: command = "warning"
            case .note:
                guard notices < GitHubReport.noticeLimit - 1 else {
                    out += "note: \(GitHubReport.escapeData(text)) [\(GitHubReport.escapeData(f.rule))]\n"
                    continue
                }
                notices += 1
                command = "notice"
            }
            out += "::\(command) file=\(GitHubReport.escapeProperty(path)),title=\(GitHubReport.escapeProperty(f.rule))::"
            out += GitHubReport.escapeData(text) + "\n"
        }
        for s in report.skipped {
            out += "skipped: \(GitHubReport.escapeData("\(s.path.isRoot ? "." : s.path.escaped): \(PrintableText.escapingControls(s.reason))"))\n"
        }
        out += "::notice title=\(GitHubReport.escapeProperty("policyctl audit of '\(report.policy)'"))::"
        out += GitHubReport.escapeData(report.summaryLine) + "\n"
        return out
    }

    /// A command's message: `%` -> `%25`, CR -> `%0D`, LF -> `%0A` (the toolkit's `escapeData`).
    public static func escapeData(_ text: String) -> String {
        var out = ""
        for c in text.unicodeScalars {
            switch c {
            case "%": out += "%25"
            case "\r": out += "%0D"
            case "\n": out += "%0A"
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    }

    /// A property value (`file=`, `title=`): `escapeData` plus `:` -> `%3A` and `,` -> `%2C`
    /// (the toolkit's `escapeProperty`), since those end a property.
    public static func escapeProperty(_ text: String) -> String {
        var out = ""
        for c in escapeData(text).unicodeScalars {
            switch c {
            case ":": out += "%3A"
            case ",": out += "%2C"
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    }
}
