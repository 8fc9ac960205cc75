// systemd-tmpfiles beside policyctl: Debian 13 ages /tmp (10 days) and /var/tmp (30 days) by default, and an
// age line ignores everything a policy says (keep, minAge, in-use checks). `plan` reads tmpfiles.d in its
// precedence (ConfigFolders: /etc over /run over /usr/lib, /dev/null masks) and notes each age line that covers
// the root or a rule's scope; an `x` line for the path (what `schedule --tmpfiles-exclude` writes) hands it to
// policyctl and silences the note. The line syntax is tmpfiles.d(5)'s: whitespace-separated fields, quotes and
// C escapes inside them, `-` for a default; specifiers (`%h`, `%t`) are left alone: such a path is kept as
// written, never expanded, and cannot match an absolute root (noted by `hasSpecifiers`).

@_spi(Layers) import StoragePolicyFileSystem
@_spi(Layers) import StoragePolicyModel

package enum Tmpfiles {
    /// The folders, highest precedence first, under `prefix` (empty on a real system).
    package static func folders(prefix: String = "") -> ConfigFolders {
        ConfigFolders(folders: ["/etc/tmpfiles.d", "/run/tmpfiles.d", "/usr/lib/tmpfiles.d"].map { prefix + $0 },
                      suffix: ".conf", what: "tmpfiles.d folder")
    }

    /// One line that matters here: an age line or an exclusion.
    package struct Line: Sendable, Equatable {
        package var file: String
        package var number: Int
        /// The type letter (`d`, `D`, `e`, `v`, `q`, `Q`, `x`, `X`), without modifiers (`!`, `-`, `=`, `~`, `^`, `+`).
        package var type: Character
        package var path: String
        /// The age field as written (`10d`, `~1w`, `cmA:30d`); nil for `-` or none.
        package var age: String?
        /// The path holds a specifier (`%h`...), kept as written.
        package var hasSpecifiers: Bool

        package var isAge: Bool { "dDevqQ".contains(type) && age != nil }
        package var isExclusion: Bool { type == "x" || type == "X" }
    }

    /// The age and exclusion lines of one file. A line that does not parse (an unclosed quote, an unknown type)
    /// is skipped, as systemd-tmpfiles skips it with a warning.
    package static func parse(_ bytes: [UInt8], file: String) -> [Line] {
        var result: [Line] = []
        for (index, raw) in bytes.split(separator: 0x0A, omittingEmptySubsequences: false).enumerated() {
            let text = String(decoding: raw, as: UTF8.self)
            let trimmed = text.drop { $0 == " " || $0 == "\t" }
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            guard let fields = words(trimmed, count: 6), fields.count >= 2 else { continue }
            let typeField = fields[0]
            guard let type = typeField.first, "dDevqQxX".contains(type),
                  typeField.dropFirst().allSatisfy({ "!-=~^+?".contains($0) }) else { continue }
            let path = fields[1]
            guard path.hasPrefix("/") || path.hasPrefix("%") else { continue }
            let age = fields.count > 5 && fields[5] != "-" && !fields[5].isEmpty ? fields[5] : nil
            result.append(Line(file: file, number: index + 1, type: type, path: path, age: age,
                               hasSpecifiers: hasSpecifier(path)))
        }
        return result
    }

    /// The first `count` fields of a line, unquoted (`"..."` and `'...'` anywhere in a field, C escapes outside
    /// single quotes); nil when a quote is left open.
    package static func words(_ line: Substring, count: Int) -> [String]? {
        var fields: [String] = []
        var current: [UInt8] = []
        var inField = false
        var quote: UInt8? = nil
        var bytes = Array(line.utf8)[...]
        while let byte = bytes.popFirst(), fields.count < count {
            if let q = quote {
                if byte == q { quote = nil; continue }
                if byte == 0x5C, q == 0x22, let next = bytes.popFirst() { current += unescape(next, &bytes); continue }
                current.append(byte)
                continue
            }
            switch byte {
            case 0x20, 0x09, 0x0D:
                if inField { fields.append(String(decoding: current, as: UTF8.self)); current = []; inField = false }
            case 0x22, 0x27:
                quote = byte; inField = true
            case 0x5C:
                inField = true
                if let next = bytes.popFirst() { current += unescape(next, &bytes) }
            default:
                current.append(byte); inField = true
            }
        }
        if quote != nil { return nil }
        if inField && fields.count < count { fields.append(String(decoding: current, as: UTF8.self)) }
        return fields
    }

    private static func unescape(_ byte: UInt8, _ rest: inout ArraySlice<UInt8>) -> [UInt8] {
        switch byte {
        case UInt8(ascii: "n"): return [0x0A]
        case UInt8(ascii: "t"): return [0x09]
        case UInt8(ascii: "x"):
            let digits = rest.prefix(2)
            if digits.count == 2, let value = UInt8(String(decoding: digits, as: UTF8.self), radix: 16) {
                rest.removeFirst(2)
                return [value]
            }
            return [byte]
        default: return [byte]
        }
    }

    /// `%` and a letter other than `%`: a specifier tmpfiles expands and policyctl does not.
    static func hasSpecifier(_ path: String) -> Bool {
        var scalars = path.unicodeScalars[...]
        while let s = scalars.popFirst() {
            guard s == "%" else { continue }
            guard let next = scalars.popFirst() else { return false }
            if next != "%" { return true }
        }
        return false
    }

    /// True when the tmpfiles path `pattern` (a path or a glob) names `path` or a folder above it.
    package static func covers(_ pattern: String, _ path: String) -> Bool {
        let p = normalized(pattern), target = normalized(path)
        if target == p || target.hasPrefix(p == "/" ? "/" : p + "/") { return true }
        guard p.contains(where: { "*?[".contains($0) }), let glob = try? Glob(String(p.dropFirst())) else { return false }
        var prefix = ""
        for component in target.split(separator: "/") {
            prefix += prefix.isEmpty ? String(component) : "/" + component
            if let relative = RelativePath(prefix), glob.matches(relative) { return true }
        }
        return false
    }

    static func normalized(_ path: String) -> String {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true)
        return "/" + parts.joined(separator: "/")
    }

    /// The notes for a plan over `root` (absolute) whose rules cover `scopes` (rule name, absolute scope):
    /// each age line that ages the root, a folder above it, or a part of a rule's scope, unless an `x` line
    /// excludes that path (an `X` line excludes only the folder itself, not what is in it, so it does not).
    package static func notes(_ lines: [Line], root: String, scopes: [(rule: String, path: String)]) -> [String] {
        let exclusions = lines.filter { $0.type == "x" && !$0.hasSpecifiers }
        func excluded(_ path: String) -> Bool { exclusions.contains { covers($0.path, path) } }
        var notes: [String] = []
        for line in lines where line.isAge {
            guard !line.hasSpecifiers else {
                // %h, %t... depend on the user and the boot: left alone, and said, so no age line goes unseen.
                notes.append("\(line.file):\(line.number) ages \(line.path) (\(line.age!)) with a specifier policyctl does not expand; it was not compared with the root")
                continue
            }
            let said = " also aged by \(line.file):\(line.number) (\(line.age!)), which ignores keep and minAge"
            if covers(line.path, root) {
                if !excluded(root) { notes.append("the root \(root):" + said) }
                continue
            }
            // A line for a folder inside the root: it ages what a rule there governs.
            for scope in scopes where covers(line.path, scope.path) || covers(scope.path, line.path) {
                if !excluded(covers(line.path, scope.path) ? scope.path : line.path) {
                    notes.append("rule '\(scope.rule)' (\(scope.path)):" + said)
                }
            }
        }
        return notes
    }

    /// The `x` line that hands `root` to policyctl: tmpfiles then neither ages nor removes anything under it.
    package static func exclusionFile(root: String, job: String) -> GeneratedFile {
        exclusionFile(roots: [root], job: job)
    }

    /// One `x` line per root, for a job over a policy's `roots:`.
    package static func exclusionFile(roots: [String], job: String) -> GeneratedFile {
        GeneratedFile(name: "policyctl-\(job).conf",
                      contents: "# Written by policyctl schedule --tmpfiles-exclude: \(roots.joined(separator: ", ")) \(roots.count == 1 ? "is" : "are") cleaned by policyctl (job \(job)),\n"
                        + "# so systemd-tmpfiles leaves \(roots.count == 1 ? "it" : "them") alone (tmpfiles.d(5), type x).\n"
                        + roots.map { "x \(quotedPath($0))\n" }.joined())
    }

    /// A path as one tmpfiles field: quoted when it holds a space, a quote, a backslash or a `%`.
    static func quotedPath(_ path: String) -> String {
        var escaped = path.replacingOccurrences("%", "%%")
        guard escaped.contains(where: { " \t\"'\\".contains($0) }) else { return escaped }
        escaped = escaped.replacingOccurrences("\\", "\\\\").replacingOccurrences("\"", "\\\"")
        return "\"" + escaped + "\""
    }
}

extension String {
    fileprivate func replacingOccurrences(_ target: String, _ replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
