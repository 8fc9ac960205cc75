// policyctl(1) in roff, generated from the command table so the manual and --help cannot drift.
// Escapes every text it prints: a '-' or a leading '.' never turns into roff syntax.

enum ManPage {
    static func render(tool: CommandSpec, commands: [CommandSpec], version: String, date: String) -> String {
        var s = ".TH POLICYCTL 1 \"\(date)\" \"policyctl \(version)\" \"User Commands\"\n"
        s += ".SH NAME\npolicyctl \\- \(escape(tool.abstract))\n"
        s += ".SH SYNOPSIS\n"
        // One line per form, each with the command's name (a command with several forms used to lose it
        // from the second one on).
        for c in commands {
            for form in synopses(c) { s += ".B policyctl \(c.name)\n\(escape(form))\n.br\n" }
        }
        s += ".SH DESCRIPTION\n\(escape(tool.discussion ?? tool.abstract))\n"
        s += ".PP\nThe policy language is described in\n.BR policyctl-policy (5).\n"
        s += ".SH COMMANDS\n"
        for c in commands {
            s += ".SS \"policyctl \(c.name)\"\n\(escape(c.abstract))\n"
            if let d = c.discussion { s += ".PP\n\(escape(d))\n" }
            for a in c.arguments { s += ".TP\n.I \(a.name)\n\(escape(a.help))\n" }
            for o in c.options {
                var label = o.short.map { "\\fB\\-\($0)\\fR, " } ?? ""
                label += "\\fB\\-\\-\(o.long)\\fR"
                if let v = o.valueName { label += " \\fI\(v)\\fR" }
                var help = escape(o.help.replacingOccurrences(of: "(required) ", with: ""))
                if let values = o.allowedValues { help += " Values: \(escape(values.joined(separator: ", ")))." }
                if let d = o.defaultValue { help += " Default: \(escape(d))." }
                s += ".TP\n\(label)\n\(help)\n"
            }
        }
        s += """
        .SH EXIT STATUS
        .TP
        .B 0
        Success; nothing found.
        .TP
        .B 1
        \\fBaudit\\fR found violations.
        .TP
        .B 2
        \\fBplan \\-\\-detailed\\-exitcode\\fR: changes are pending.
        .TP
        .B 3
        An apply failed and was rolled back, or was refused before changing anything.
        .TP
        .B 64
        Usage error.
        .TP
        .B 65
        A policy is invalid.
        .TP
        .B 70
        policyctl could not read its own command line (no initializer arguments and no /proc).
        .TP
        .B 74
        An I/O or system error.
        .SH ENVIRONMENT
        .TP
        .B NO_COLOR
        When set and not empty, output is never coloured (it wins over the two below).
        .TP
        .B FORCE_COLOR\\fR, \\fBCLICOLOR_FORCE
        When set and not empty, 0 or false, output is coloured even when it is no terminal (CI logs).
        .SH FILES
        .TP
        .I ROOT/.policyctl/
        The state folder of each root: the lock, the journal and the staging area of apply. It is never scanned.
        .SH SEE ALSO
        .BR policyctl-policy (5),
        .BR systemd-tmpfiles (8),
        .BR find (1)

        """
        return s
    }

    /// The command's usage forms without its name: several when its spec lists them, else one from its options.
    static func synopses(_ c: CommandSpec) -> [String] {
        if let usage = c.usage { return usage.map { $0.trimmingCharacters() } }
        return [HelpRenderer.usageLine(c, path: "").trimmingCharacters()]
    }

    /// Escapes roff: backslashes, hyphens (so they stay hyphens), and a leading '.' or '\''.
    static func escape(_ text: String) -> String {
        var out = text.replacingOccurrences(of: "\\", with: "\\e").replacingOccurrences(of: "-", with: "\\-")
        if out.hasPrefix(".") || out.hasPrefix("'") { out = "\\&" + out }
        return out.replacingOccurrences(of: "\n.", with: "\n\\&.")
    }
}
