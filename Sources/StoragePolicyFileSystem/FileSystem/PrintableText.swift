// Makes report text safe to show: control characters (C0, DEL, C1), the Unicode bidi controls and the
// non-characters U+FFFE/U+FFFF become visible escapes, so a file name can never move a cursor, colour a log,
// end a line early or make itself read backwards.

package enum PrintableText {
    /// `text` with every control character escaped (`\x1b`, `\x0a`); backslashes are left alone, since
    /// paths in messages are already escaped and escaping them again would double them.
    package static func escapingControls(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            if isControl(scalar) { out += visible(scalar) } else { out.unicodeScalars.append(scalar) }
        }
        return out
    }

    /// A policy's source line as a diagnostic quotes it, with every control escaped (a policy's `\e]0;...\a`
    /// must not retitle the terminal that shows the error), tabs kept, and the padding that puts a caret under
    /// scalar `column` (from 1) of the original line, counting each escape's width.
    package static func sourceLine(_ text: String, caretColumn column: Int) -> (line: String, pad: String) {
        var line = "", pad = ""
        for (index, scalar) in text.unicodeScalars.enumerated() {
            let shown = scalar == "\t" ? "\t" : isControl(scalar) ? visible(scalar) : String(scalar)
            line += shown
            if index < column - 1 { pad += scalar == "\t" ? "\t" : String(repeating: " ", count: shown.count) }
        }
        return (line, pad)
    }

    package static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F, 0xFFFE, 0xFFFF: true
        default: PathEscaping.isInvisibleControl(scalar)
        }
    }

    /// `\x01` for a byte-sized scalar, `\u{FFFE}` above that: the escapes paths use for people.
    package static func visible(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16)
        return scalar.value < 0x100 ? "\\x" + (hex.count < 2 ? "0" + hex : hex) : "\\u{" + hex.uppercased() + "}"
    }
}
