// Turns byte names into text a terminal shows safely: valid UTF-8 stays as it is; control characters (C0,
// DEL, C1), the Unicode bidi controls that make a name read differently from what it is, and invalid bytes
// become escapes. Never used to get bytes back: machine formats carry base64 for that.

enum PathEscaping {
    static func escape(_ bytes: [UInt8]) -> String {
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

/// Standard base64 (RFC 4648, with padding), without Foundation so byte paths never pass through it.
package enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    package static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var i = 0
        while i + 2 < bytes.count {
            let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
            out += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)], alphabet[Int(n >> 6 & 63)], alphabet[Int(n & 63)]]
            i += 3
        }
        let rest = bytes.count - i
        if rest == 1 {
            let n = UInt32(bytes[i]) << 16
            out += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)], 0x3D, 0x3D]
        } else if rest == 2 {
            let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8
            out += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)], alphabet[Int(n >> 6 & 63)], 0x3D]
        }
        return String(decoding: out, as: UTF8.self)
    }

    package static func decode(_ text: String) -> [UInt8]? {
        var values: [UInt8] = []
        for c in text.utf8 {
            if c == 0x3D { break }
            guard let v = alphabet.firstIndex(of: c) else { return nil }
            values.append(UInt8(v))
        }
        var out: [UInt8] = []
        var i = 0
        while i + 1 < values.count {
            let chunk = values[i..<min(i + 4, values.count)]
            var n: UInt32 = 0
            for (k, v) in chunk.enumerated() { n |= UInt32(v) << (18 - 6 * k) }
            out.append(UInt8(n >> 16 & 0xFF))
            if chunk.count > 2 { out.append(UInt8(n >> 8 & 0xFF)) }
            if chunk.count > 3 { out.append(UInt8(n & 0xFF)) }
            i += 4
        }
        return out
    }
}
