// Renders a plan as text for people: actions grouped by rule, human sizes and ages, findings, a summary.
// Returns strings and never prints; colour (ANSI) only when the caller asks for it.

@_spi(Layers) import StoragePolicyFileSystem

/// A plan as text for people: actions grouped by rule, violations, skipped entries and a summary.
public struct PlanRenderer: Sendable {
    /// Emit ANSI colours (the CLI decides: a TTY and no NO_COLOR).
    public var color: Bool
    /// Rule names in the order groups are shown (the policy's order); others follow by name.
    public var ruleOrder: [String]

    /// A renderer; `ruleOrder` lists rules in the order groups are shown (policy order).
    public init(color: Bool = false, ruleOrder: [String] = []) {
        self.color = color; self.ruleOrder = ruleOrder
    }

    /// The whole text at once (for small plans and tests).
    public func render(_ plan: Plan) -> String {
        var out = ""
        render(plan) { out += $0 }
        return out
    }

    /// Renders piece by piece (a few lines at a time), so a huge plan is never one string in memory.
    public func render(_ plan: Plan, to write: (String) -> Void) {
        write("Plan for policy '\(plan.policy)' on \(PrintableText.escapingControls(plan.root))\n")
        write(dim("  evaluated \(plan.createdAt), \(Self.grouped(plan.summary.entriesScanned)) entries scanned") + "\n")

        // Actions are sorted by path; group them by rule without copying: indices per rule.
        var groups: [String: [Int]] = [:]
        for (i, a) in plan.actions.enumerated() { groups[a.rule, default: []].append(i) }
        let order = ruleOrder.filter { groups[$0] != nil } + groups.keys.filter { !ruleOrder.contains($0) }.sorted()
        for rule in order {
            // A rule whose deletes are held back says so once, above them (Docs/plan-format.md, "quarantine").
            let held = plan.quarantine?.windows[rule].map { dim("  (deletes quarantined for \($0): 'policyctl undo' puts them back until then)") } ?? ""
            write("\n" + style(rule, "1") + held + "\n")
            var chunk = ""
            for i in groups[rule]! {
                chunk += "  " + line(plan.actions[i]) + "\n"
                if chunk.utf8.count > 32 * 1024 { write(chunk); chunk = "" }
            }
            write(chunk)
        }
        if !plan.violations.isEmpty {
            write("\n" + style("Violations (\(plan.violations.count)):", "1") + "\n")
            let width = plan.violations.map(\.rule.count).max() ?? 0
            for v in plan.violations {
                let severity = v.severity.rawValue.padding(7)
                let code = v.severity == .error ? "31" : v.severity == .warning ? "33" : "2"
                write("  \(style(severity, code)) \(v.rule.padding(width))  \(v.path.isEmpty ? "." : v.path.escaped): \(v.message)\n")
            }
        }
        if !plan.skipped.isEmpty {
            write("\n" + style("Skipped (\(plan.skipped.count)):", "1") + "\n")
            for s in plan.skipped { write("  \(s.path.escaped): \(s.reason)\n") }
        }
        if !plan.notes.isEmpty {
            write("\n" + style("Notes:", "1") + "\n")
            for n in plan.notes { write("  \(PrintableText.escapingControls(n))\n") }
        }
        write("\n")
        for line in freedLines(plan) { write(line + "\n") }
        write(summary(plan) + "\n")
    }

    /// What the deletes free, when there are any: per rule (most first, ties by name), and per volume (the
    /// root's, with its free space before and after when pressure rules measured it). Above the summary line,
    /// which stays the plan's last.
    public func freedLines(_ plan: Plan) -> [String] {
        guard let byRule = plan.summary.bytesFreedByRule, !byRule.isEmpty else { return [] }
        var lines = [dim("Freed per rule: " + Self.perRule(byRule))]
        for v in plan.summary.volumes ?? [] {
            var line = "Freed on the root's volume (device \(Self.device(v.device))): \(ByteSize.human(v.bytesFreed))"
            if let before = v.freeBefore, let size = v.size {
                line += "; \(ByteSize.human(before)) free of \(ByteSize.human(size)) before, \(ByteSize.human(before + v.bytesFreed)) after"
            }
            lines.append(dim(line))
        }
        return lines
    }

    /// `cache 40.0 KiB, tmp 12.0 KiB`: most first, ties by name.
    public static func perRule(_ byRule: [String: Int64]) -> String {
        byRule.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
            .map { "\($0.key) \(ByteSize.human($0.value))" }.joined(separator: ", ")
    }

    /// `8:3`: a device number as major:minor (the platform layer knows how it is encoded).
    public static func device(_ d: UInt64) -> String { VolumeSpace.majorMinor(d) }

    /// `- delete  tmp/a.dat  4.0 KiB  mtime 2d3h ago > 1d`
    public func line(_ a: Action) -> String {
        let (sign, code): (String, String) = switch a.kind {
        case .delete: ("-", "31")
        case .rename, .trash: ("~", "33")
        case .mkdir, .mkfile, .symlink: ("+", "32")
        case .setxattr, .writeTag, .unmark, .untag, .setPermissions: ("*", "36")
        }
        var target = a.path.isEmpty ? "." : a.path.escaped
        if a.type == .directory && a.isDelete { target += "/" }
        switch a.kind {
        case .rename(let to), .trash(let to):
            target += " -> " + (to.parent == a.path.parent && !to.parent.isEmpty ? to.lastComponent!.escaped : to.escaped)
        case .setxattr(let name, let value):
            target += "  \(name)=\(PathEscaping.escape(value))"
        case .setPermissions(let mode, let owner, let group):
            target += "  " + Self.permissions(mode: mode, owner: owner, group: group)
        case .symlink(let to):
            target += " -> " + PathEscaping.escape(to)
        case .mkfile(let content, let mode, let owner, let group):
            target += "  \(content.count) \(content.count == 1 ? "byte" : "bytes")"
            if mode != nil || owner != nil || group != nil { target += " " + Self.permissions(mode: mode, owner: owner, group: group) }
        default: break
        }
        var detail: [String] = []
        if a.isDelete {
            var size = ByteSize.human(a.bytes)
            if a.entries > 1 { size += ", \(Self.grouped(a.entries)) entries" }
            detail.append(size)
        }
        detail.append(a.reason)
        return style("\(sign) \(a.kind.name.padding(9))", code) + " \(target)  " + dim(detail.joined(separator: "  "))
    }

    /// `mode 0750 owner 1000 group 1000`: what a set-perms action sets (only what it changes).
    package static func permissions(mode: UInt32?, owner: UInt32?, group: UInt32?) -> String {
        var parts: [String] = []
        if let mode { parts.append("mode \(Action.octal(mode))") }
        if let owner { parts.append("owner \(owner)") }
        if let group { parts.append("group \(group)") }
        return parts.joined(separator: " ")
    }

    /// `Plan: 3 to delete (52.0 KiB freed), 1 to rename, ...; 2 violations, 1 skipped.`
    public func summary(_ plan: Plan) -> String {
        let counts = plan.summary.actions
        func n(_ key: String) -> Int { counts[key] ?? 0 }
        var parts: [String] = []
        parts.append("\(Self.deletes(plan, count: n("delete"))) to delete (\(ByteSize.human(plan.summary.bytesFreed)) freed)")
        parts.append("\(n("rename")) to rename")
        parts.append("\(n("trash")) to move to the trash")
        parts.append("\(n("mkdir")) to create")
        parts.append("\(n("setxattr")) \(n("setxattr") == 1 ? "marker" : "markers") to set")
        parts.append("\(n("write-tag")) cache \(n("write-tag") == 1 ? "tag" : "tags") to write")
        // Only when a plan has them (layout `backup: include`): older summaries read as they did.
        if n("unmark") + n("untag") > 0 { parts.append("\(n("unmark") + n("untag")) backup-exclusion \(n("unmark") + n("untag") == 1 ? "marker" : "markers") to remove") }
        if n("mkfile") + n("symlink") > 0 {
            parts.append("\(n("mkfile")) \(n("mkfile") == 1 ? "file" : "files") and \(n("symlink")) \(n("symlink") == 1 ? "symlink" : "symlinks") to create")
        }
        if n("set-perms") > 0 { parts.append("\(n("set-perms")) \(n("set-perms") == 1 ? "mode or owner" : "modes or owners") to set") }
        var tail = "\(plan.violations.count) \(plan.violations.count == 1 ? "violation" : "violations")"
        tail += ", \(plan.skipped.count) skipped"
        let head = plan.actions.isEmpty ? "No changes." : "Plan:"
        return style(head, "1") + " " + parts.joined(separator: ", ") + "; " + tail + "."
    }

    /// `3`, or when folder deletes take what they hold with them, `1 folder, 501 entries` (`2 folders and
    /// 1 file, 40 entries`): the summary never understates how much goes.
    package static func deletes(_ plan: Plan, count: Int) -> String {
        guard let entries = plan.summary.deleteEntries, entries > count else { return "\(count)" }
        let folders = plan.actions.reduce(0) { $0 + ($1.isDelete && $1.type == .directory ? 1 : 0) }
        var what: [String] = []
        if folders > 0 { what.append("\(grouped(folders)) folder\(folders == 1 ? "" : "s")") }
        if count > folders { what.append("\(grouped(count - folders)) file\(count - folders == 1 ? "" : "s")") }
        return "\(what.joined(separator: " and ")), \(grouped(entries)) entries"
    }

    private func style(_ text: String, _ code: String) -> String {
        color ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
    }

    private func dim(_ text: String) -> String { style(text, "2") }

    /// 1234567 -> "1,234,567"
    public static func grouped(_ n: Int) -> String {
        let digits = Array(String(n.magnitude))
        var out = ""
        for (i, d) in digits.enumerated() {
            if i > 0 && (digits.count - i) % 3 == 0 { out += "," }
            out.append(d)
        }
        return (n < 0 ? "-" : "") + out
    }
}

private extension String {
    func padding(_ width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
