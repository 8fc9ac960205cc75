// `policyctl status`'s formats: text for people, markdown for a CI step summary, and the Prometheus text
// exposition format (0.0.4) for node_exporter's textfile collector. JSON is StatusReport's Codable form.
import StoragePolicy

enum StatusFormats {
    /// The bar's filled and empty cells.
    struct Bars { var full: String; var empty: String }

    /// █/░ only when stdout is a terminal whose locale is UTF-8 (the first of LC_ALL, LC_CTYPE, LANG that is set
    /// names UTF-8); `#`/`.` everywhere else (pipes, files, logs), so what is captured is always plain ASCII.
    static func barStyle(isTTY: Bool = Terminal.stdoutIsTTY, environment: (String) -> String? = system_getenv) -> Bars {
        let locale = ["LC_ALL", "LC_CTYPE", "LANG"].compactMap { environment($0) }.first { !$0.isEmpty } ?? ""
        let utf8 = locale.lowercased().contains("utf-8") || locale.lowercased().contains("utf8")
        return isTTY && utf8 ? Bars(full: "█", empty: "░") : Bars(full: "#", empty: ".")
    }

    /// Ten cells, one per tenth of the limit, full past it.
    static func bar(_ bytes: Int64, _ limit: Int64, _ bars: Bars) -> String {
        let filled = limit > 0 ? Int(bytes >= limit ? 10 : max(0, bytes * 10 / limit)) : 10
        return String(repeating: bars.full, count: filled) + String(repeating: bars.empty, count: 10 - filled)
    }

    static func percent(_ bytes: Int64, _ limit: Int64) -> Int { limit > 0 ? Int(Double(bytes) * 100 / Double(limit)) : 0 }

    static func entries(_ r: StatusReport.Rule) -> String {
        let noun = r.kind == "trash" ? (r.entries == 1 ? "item" : "items") : (r.entries == 1 ? "file" : "files")
        return "\(r.entries)\(r.limitEntries.map { " / \($0)" } ?? "") \(noun)"
    }

    /// The rule's line: size against its size limit as a bar, or size and count with the age limit.
    static func ruleLine(_ r: StatusReport.Rule, bars: Bars) -> String {
        guard r.present else { return "missing (no folder there yet)" }
        if let limit = r.limitBytes, !r.perOwner {
            return "\(ByteSize.human(r.bytes)) / \(ByteSize.human(limit))  \(bar(r.bytes, limit, bars))  \(percent(r.bytes, limit)) %  \(entries(r))"
        }
        var line = "\(ByteSize.human(r.bytes))  \(entries(r))"
        if let limit = r.limitBytes, r.perOwner { line += "  (max \(ByteSize.human(limit)) per owner)" }
        if let age = r.limitAge { line += r.kind == "trash" ? "  (retain \(age))" : "  (expire after \(age))" }
        return line
    }

    static func text(_ s: StatusReport, bars: Bars) -> String {
        var out = "Status of policy \(s.policy) on \(PrintableText.escapingControls(s.root))\n\nRules:\n"
        let nameWidth = s.rules.map(\.name.count).max() ?? 0
        let pathWidth = s.rules.map(\.path.count).max() ?? 0
        func pad(_ t: String, _ w: Int) -> String { t + String(repeating: " ", count: max(0, w - t.count)) }
        if s.rules.isEmpty { out += "  no quota, trash or expire rules\n" }
        for r in s.rules { out += "  \(pad(r.name, nameWidth))  \(pad(r.path, pathWidth))  \(ruleLine(r, bars: bars))\n" }
        out += "\nNext apply frees: \(ByteSize.human(s.nextApplyBytes))\n"
        for (rule, bytes) in ordered(s) { out += "  \(pad(rule, nameWidth))  \(ByteSize.human(bytes))\n" }
        out += "\nVolume: " + volumeLine(s) + "\n"
        for p in s.volume?.pressure ?? [] {
            out += "  pressure \(p.name): evicts below \(ByteSize.human(p.freeBelowBytes)) free, until \(ByteSize.human(p.freeUntilBytes)) (\(p.active ? "active now" : "not active"))\n"
        }
        out += "\nQuarantine: " + quarantineLine(s) + "\n"
        out += "\nLast apply: " + lastApplyLine(s) + "\n"
        out += "Next timer run: \(s.nextTimerRun)\n"
        return out
    }

    static func quarantineLine(_ s: StatusReport) -> String {
        let q = s.quarantine
        guard q.entries > 0 else { return "empty" }
        return "\(q.entries) entr\(q.entries == 1 ? "y" : "ies"), \(ByteSize.human(q.bytes)) held (\(q.transactions) transaction\(q.transactions == 1 ? "" : "s")); the next apply after \(q.nextPurge ?? "?") purges the earliest window"
    }

    /// The rules that would free bytes, in policy order, then any others by name.
    static func ordered(_ s: StatusReport) -> [(String, Int64)] {
        let listed = s.rules.map(\.name).filter { s.nextApplyBytesByRule[$0] != nil }
        let rest = s.nextApplyBytesByRule.keys.filter { !listed.contains($0) }.sorted()
        return (listed + rest).map { ($0, s.nextApplyBytesByRule[$0]!) }
    }

    static func volumeLine(_ s: StatusReport) -> String {
        guard let v = s.volume else { return "free space unknown (fstatvfs of the root failed)" }
        let pct = v.sizeBytes > 0 ? Int(Double(v.freeBytes) * 100 / Double(v.sizeBytes)) : 0
        return "\(ByteSize.human(v.freeBytes)) free of \(ByteSize.human(v.sizeBytes)) (\(pct) %)" + (v.pressure.isEmpty ? "; no pressure rules" : "")
    }

    static func lastApplyLine(_ s: StatusReport) -> String {
        guard let a = s.lastApply else { return "none" }
        return "\(a.time) (\(a.id)) \(a.outcome): \(a.changes) change\(a.changes == 1 ? "" : "s"), \(a.skipped) skipped, \(ByteSize.human(a.bytesFreed)) freed"
    }

    static func markdown(_ s: StatusReport) -> String {
        func cell(_ t: String) -> String { t.replacingOccurrences(of: "|", with: "\\|").replacingOccurrences(of: "\n", with: " ") }
        var out = "### policyctl status: \(cell(s.policy))\n\n| Rule | Scope | Size | Limit | Use | Entries | Next apply frees |\n|---|---|---:|---:|---:|---:|---:|\n"
        for r in s.rules {
            let limit = r.limitBytes.map { ByteSize.human($0) + (r.perOwner ? " per owner" : "") } ?? r.limitAge.map { (r.kind == "trash" ? "retain " : "after ") + $0 } ?? ""
            let use = r.limitBytes != nil && !r.perOwner ? "\(percent(r.bytes, r.limitBytes!)) %" : ""
            out += "| \(cell(r.name)) | \(cell(r.path)) | \(r.present ? ByteSize.human(r.bytes) : "missing") | \(limit) | \(use) | \(entries(r)) | \(ByteSize.human(r.nextApplyBytes)) |\n"
        }
        out += "\n- Next apply frees: \(ByteSize.human(s.nextApplyBytes))\n- Volume: \(volumeLine(s))\n"
        for p in s.volume?.pressure ?? [] {
            out += "- Pressure \(cell(p.name)): below \(ByteSize.human(p.freeBelowBytes)) free, until \(ByteSize.human(p.freeUntilBytes)) (\(p.active ? "active now" : "not active"))\n"
        }
        out += "- Quarantine: \(cell(quarantineLine(s)))\n"
        out += "- Last apply: \(cell(lastApplyLine(s)))\n- Next timer run: \(s.nextTimerRun)\n"
        return out
    }

    /// Every family has HELP and TYPE; every sample carries the policy (file) and root labels with the values
    /// `apply --metrics-file` gives them, so status's series and apply's join on the same labels.
    static func prometheus(_ s: StatusReport) -> String {
        let base = "policy=\"\(MetricsFile.escape(s.policyFile))\",root=\"\(MetricsFile.escape(s.root))\""
        var out = ""
        func family(_ name: String, _ type: String, _ help: String, _ samples: [(String, String)]) {
            out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
            for (extra, value) in samples { out += "\(name){\(base)\(extra)} \(value)\n" }
        }
        func rule(_ name: String) -> String { ",rule=\"\(MetricsFile.escape(name))\"" }
        let present = s.rules.filter(\.present)
        family("policyctl_scope_bytes", "gauge", "Bytes (allocated, as du counts) under each quota, trash and expire rule's scope.",
               present.map { (rule($0.name), "\($0.bytes)") })
        family("policyctl_scope_entries", "gauge", "Files (quota, expire) or items (trash) in each rule's scope.",
               present.map { (rule($0.name), "\($0.entries)") })
        family("policyctl_scope_limit_bytes", "gauge", "Each rule's size limit (quota max, per owner for per: owner; trash maxSize).",
               s.rules.compactMap { r in r.limitBytes.map { (rule(r.name), "\($0)") } })
        family("policyctl_scope_limit_entries", "gauge", "Each rule's maxEntries, where set.",
               s.rules.compactMap { r in r.limitEntries.map { (rule(r.name), "\($0)") } })
        family("policyctl_next_apply_bytes", "gauge", "Bytes the next apply would free, per rule.",
               ordered(s).map { (rule($0.0), "\($0.1)") })
        if let v = s.volume {
            family("policyctl_volume_free_bytes", "gauge", "Free bytes on the root's volume (statvfs f_bavail).", [("", "\(v.freeBytes)")])
            family("policyctl_volume_size_bytes", "gauge", "The root's volume size in bytes.", [("", "\(v.sizeBytes)")])
            family("policyctl_pressure_free_below_bytes", "gauge", "Free space under which each pressure rule evicts.",
                   v.pressure.map { (",pressure=\"\(MetricsFile.escape($0.name))\"", "\($0.freeBelowBytes)") })
        }
        family("policyctl_quarantine_bytes", "gauge", "Bytes (as planned) of the deletes the quarantine holds, which undo can still put back.",
               [("", "\(s.quarantine.bytes)")])
        family("policyctl_quarantine_entries", "gauge", "Deletes the quarantine holds.", [("", "\(s.quarantine.entries)")])
        // The same HELP text as apply --metrics-file's, so the two never disagree about the family.
        family("policyctl_last_apply_timestamp_seconds", "gauge", "When the last policyctl apply finished (Unix time).",
               s.lastApply.map { [("", "\($0.timestampSeconds)")] } ?? [])
        family("policyctl_bytes_freed_total", "counter", MetricsFile.bytesFreedTotalHelp,
               [("", "\(s.bytesFreedTotal)")])
        return out
    }
}
