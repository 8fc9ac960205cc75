// The audit as GitHub Actions workflow commands (`::error file=...,title=...::message`), escaped as the
// Actions toolkit escapes them, so no file name can end a command early or start one of its own. Only
// commands: the plain lines a person needs (known findings, what overflows the notice budget) are separate.

@_spi(Layers) import StoragePolicyFileSystem

package struct GitHubReport: Sendable {
    /// GitHub turns only the first 10 notices of a step into annotations; the summary must be one of them.
    package static let noticeLimit = 10

    /// The directory the workflow runs in (the checkout): an annotation's `file=` is a path from there, as
    /// GitHub resolves it, so with `--root fixtures/container` it reads `fixtures/container/Documents/a.txt`.
    /// A root outside it names the entry by its absolute path; nil names it from the root (a library caller's
    /// report, where no checkout is known).
    package var workingDirectory: String?

    package init(workingDirectory: String? = nil) { self.workingDirectory = workingDirectory }

    /// The annotation `file=` for a root-relative path: the root's path from the working directory (nothing
    /// when they are the same) joined with the entry's, escaped for people like every path in the report.
    package func file(for path: RelativePath, root: String) -> String {
        let base = Self.prefix(root: root, workingDirectory: workingDirectory)
        if path.isRoot { return base.isEmpty ? "." : String(base.dropLast()) }
        return base + path.escaped
    }

    /// `fixtures/container/` for a root under the working directory, `""` for the working directory itself (or
    /// none known), else the root's absolute path with a trailing slash.
    static func prefix(root: String, workingDirectory: String?) -> String {
        guard let workingDirectory else { return "" }
        let rootText = PrintableText.escapingControls(root.hasSuffix("/") ? String(root.dropLast()) : root)
        let cwd = workingDirectory.hasSuffix("/") ? String(workingDirectory.dropLast()) : workingDirectory
        if root == cwd || root == cwd + "/" { return "" }
        // With cwd "/" (cwd == ""), every root is below it.
        if root.hasPrefix(cwd + "/") { return PrintableText.escapingControls(String(root.dropFirst(cwd.count + 1))) + "/" }
        return rootText + "/"
    }

    /// The workflow commands, and nothing else: every line starts with `::`, so the Actions runner never
    /// meets a plain line in a command stream. New findings become `::error`, `::warning` or `::notice`
    /// annotations; notes, skipped entries and the plan's remarks share the notice budget (9, so the closing
    /// summary notice, which carries the totals, is always shown). What does not fit, and findings known from
    /// the baseline (they must not crowd out new ones), are `logLines(_:)`, for standard error.
    package func render(_ report: AuditReport) -> String { split(report).commands }

    /// The plain log lines that go with `render(_:)`: known findings, and notes, skipped entries and remarks
    /// past the notice budget. `policyctl audit` writes them to standard error.
    package func logLines(_ report: AuditReport) -> [String] { split(report).log }

    private func split(_ report: AuditReport) -> (commands: String, log: [String]) {
        var out = ""
        var log: [String] = []
        var notices = 0
        func notice(title: String, file: String?, _ text: String, overflow: String) {
            guard notices < GitHubReport.noticeLimit - 1 else {
                log.append(overflow)
                return
            }
            notices += 1
            out += "::notice " + (file.map { "file=\(GitHubReport.escapeProperty($0))," } ?? "")
            out += "title=\(GitHubReport.escapeProperty(title))::" + GitHubReport.escapeData(text) + "\n"
        }
        for f in report.findings {
            // The message names the entry from the root, as every other report does; `file=` is for GitHub.
            let path = f.path.isRoot ? "." : f.path.escaped
            let location = file(for: f.path, root: report.root)
            let text = "\(path): \(PrintableText.escapingControls(f.message))"
            if f.isKnown {
                log.append("known (in the baseline): \(text) [\(f.rule)]")
                continue
            }
            let command: String
            switch f.severity {
            case .error: command = "error"
            case .warning: command = "warning"
            case .note:
                notice(title: f.rule, file: location, text, overflow: "note: \(text) [\(f.rule)]")
                continue
            }
            out += "::\(command) file=\(GitHubReport.escapeProperty(location)),title=\(GitHubReport.escapeProperty(f.rule))::"
            out += GitHubReport.escapeData(text) + "\n"
        }
        for s in report.skipped {
            let path = s.path.isRoot ? "." : s.path.escaped
            let text = "\(path): skipped: \(PrintableText.escapingControls(s.reason))"
            notice(title: "skipped", file: file(for: s.path, root: report.root), text, overflow: text)
        }
        for n in report.notes {
            let text = PrintableText.escapingControls(n)
            notice(title: "note", file: nil, text, overflow: "note: \(text)")
        }
        out += "::notice title=\(GitHubReport.escapeProperty("policyctl audit of '\(report.policy)'"))::"
        out += GitHubReport.escapeData(report.summaryLine) + "\n"
        return (out, log)
    }

    /// A command's message: `%` -> `%25`, CR -> `%0D`, LF -> `%0A` (the toolkit's `escapeData`).
    package static func escapeData(_ text: String) -> String {
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
    package static func escapeProperty(_ text: String) -> String {
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
