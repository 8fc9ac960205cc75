// Turns byte names into text a terminal shows safely: valid UTF-8 stays as it is; control characters (C0,
// DEL, C1), the Unicode bidi controls that make a name read differently from what it is, and invalid bytes
// become escapes. Never used to get bytes back: machine formats carry base64 for that.

package enum PathEscaping {
    package static func escape(_ bytes: [UInt8]) -> String {
        var out = ""
        var i = 0
        while i < bytes.count {
            let b = bytes[i]
            if b < 0x80 {
                switch b {
                case 0x0A: out += "\\n"
                case 0x09: out += "\\t"
                case 0x0D: out += "\\r"
                case 0x5C: out += "\\\\"
                case 0..<0x20, 0x7F: out += "\\x" + hex(b)
                default: out.unicodeScalars.append(Unicode.Scalar(b))
                }
                i += 1
                continue
            }
            let length = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1
            if length > 1, i + length <= bytes.count,
               let s = String(validating: bytes[i..<(i + length)], as: UTF8.self) {
                // One sequence is one scalar. A C1 control or a bidi control shows as `\u{202E}`, distinct from
                // the `\xNN` of an invalid byte.
                if let scalar = s.unicodeScalars.first, PathEscaping.isInvisibleControl(scalar) {
                    out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
                } else {
                    out += s
                }
                i += length
            } else {
                out += "\\x" + hex(b)
                i += 1
            }
        }
        return out
    }

    /// C1 controls (U+0080-U+009F) and the bidi controls: embeddings and overrides (U+202A-U+202E),
    /// isolates (U+2066-U+2069) and the marks (U+200E, U+200F, U+061C). Each can move text around on screen.
    static func isInvisibleControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x80...0x9F, 0x202A...0x202E, 0x2066...0x2069, 0x200E, 0x200F, 0x061C: true
        default: false
        }
    }

    private static func hex(_ b: UInt8) -> String {
        let digits = Array("0123456789abcdef")
        return String([digits[Int(b >> 4)], digits[Int(b & 0xF)]])
    }
}
