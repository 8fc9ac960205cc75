// `apply --metrics-file FILE`: after each run, the node_exporter textfile collector's format (Prometheus text
// exposition 0.0.4), written next to FILE under a temporary name (O_EXCL, so nothing planted there is followed),
// synced, then renamed into place, so the collector never reads half a file. A run that changed nothing, or
// failed, writes it too: the exit code and the time of the last run are what alerts watch.
import StoragePolicy

enum MetricsFile {
    /// The `policy` label of apply's metrics and of status's Prometheus output, one rule for both so their series
    /// join: the policy file's absolute path (the plan file's for a saved plan), `policyctl.d` for the drop-in set.
    static func policyLabel(_ policyPath: String?, planFile: String? = nil) -> String {
        policyPath == PolicyArgument.dropInSet ? PolicyDropIns.setName : PathNormalization.absolute(policyPath ?? planFile ?? "")
    }

    /// The metrics of one run: its exit code, when it finished, and (when it committed) what it did per rule.
    /// `bytesFreedTotal`: the journal's committed history summed (status's counter of the same name); nil leaves it out.
    static func text(policy: String, root: String, exit: ExitCode, finishedNs: Int64, seconds: Double, report: ApplyReport?,
                     bytesFreedTotal: Int64? = nil) -> String {
        let labels = "policy=\"\(escape(policy))\",root=\"\(escape(root))\""
        var out = ""
        func metric(_ name: String, _ help: String, _ samples: [(String, String)]) {
            out += "# HELP \(name) \(help)\n# TYPE \(name) gauge\n"
            for (extra, value) in samples { out += "\(name){\(labels)\(extra)} \(value)\n" }
        }
        metric("policyctl_last_apply_timestamp_seconds", "When the last policyctl apply finished (Unix time).",
               [("", String(Double(finishedNs / 1_000_000) / 1000))])
        metric("policyctl_last_apply_exit_code", "The last apply's exit code (0 applied or nothing to do, 1 some items skipped for an error, 3 rolled back, 74 I/O).",
               [("", "\(exit.rawValue)")])
        metric("policyctl_last_apply_duration_seconds", "How long the last apply ran.", [("", String((seconds * 1000).rounded() / 1000))])
        var freed: [String: Int64] = [:]
        var actions: [String: Int] = [:]
        var skipped = 0, failed = 0
        // One item at a time (`items` would make all of them at once: 0.09 KB a step at the run's end).
        for item in report?.lazyItems ?? ApplyReport().lazyItems {
            switch item.outcome {
            case .done:
                actions[item.action.rule, default: 0] += 1
                if case .delete = item.action.kind { freed[item.action.rule, default: 0] += item.action.bytes }
            case .skipped: if item.error != nil { failed += 1 } else { skipped += 1 }
            case .unchanged: break
            }
        }
        metric("policyctl_last_apply_bytes_freed", "Bytes the last apply freed (allocated, as du counts), per rule.",
               freed.sorted { $0.key < $1.key }.map { (",rule=\"\(escape($0.key))\"", "\($0.value)") })
        metric("policyctl_last_apply_actions", "Actions the last apply carried out, per rule.",
               actions.sorted { $0.key < $1.key }.map { (",rule=\"\(escape($0.key))\"", "\($0.value)") })
        metric("policyctl_last_apply_skipped", "Items the last apply skipped: changed since the plan (reason=\"changed\") or an error on them (reason=\"error\").",
               [(",reason=\"changed\"", "\(skipped)"), (",reason=\"error\"", "\(failed)")])
        if let total = bytesFreedTotal {
            out += "# HELP policyctl_bytes_freed_total \(bytesFreedTotalHelp)\n# TYPE policyctl_bytes_freed_total counter\n"
            out += "policyctl_bytes_freed_total{\(labels)} \(total)\n"
        }
        return out
    }

    /// One HELP text for the counter wherever it is written (status and --metrics-file), so they never disagree.
    static let bytesFreedTotalHelp = "Bytes freed over every committed transaction in the journal."

    /// The bytes freed over the committed transactions of `root`'s journal; nil when it cannot be read (no
    /// journal is 0). Read through the engine's journal reader, with its state-folder trust checks.
    static func bytesFreedTotal(root: String, stateDirectory: String?) -> Int64? {
        let reading: JournalHistory.Reading?
        do { reading = try StorageEngine.journal(root: root, stateDirectory: stateDirectory) } catch { return nil }
        return (reading?.transactions ?? []).filter { $0.outcome == .committed }.reduce(Int64(0)) { $0 + $1.bytesFreed }
    }

    /// A label value escaped as the exposition format asks: backslash, double quote and newline.
    static func escape(_ s: String) -> String {
        var out = ""
        for c in s.unicodeScalars {
            switch c {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    }

    /// Writes `text` to `path` atomically (temporary name beside it, fsync, rename); only a regular file, a
    /// symlink (replaced, never followed) or nothing may be there. A failure is a warning: the apply stands.
    static func write(_ text: String, to path: String) {
        if let existing = system_lstat(path), existing.kind != .regular, existing.kind != .symbolicLink {
            Terminal.err("warning: --metrics-file \(PrintableText.escapingControls(path)) was not written: it is not a regular file (remove it, or name a file)")
            return
        }
        // The commands' one atomic writer (temporary name beside it with O_EXCL, fsync, rename).
        do {
            try OutputFile.write(Array(text.utf8), to: path)
        } catch {
            Terminal.err("warning: --metrics-file \(PrintableText.escapingControls(path)) was not written: \(PrintableText.escapingControls(error.message))")
        }
    }
}
