// Escapes text for XML 1.0 (JUnit reports, launchd plists): markup characters become entities and the
// characters XML 1.0 forbids become visible escapes, so no name can make a document ill-formed.

@_spi(Layers) import StoragePolicyFileSystem

package enum XMLText {
    /// Text for element content.
    static func content(_ text: String) -> String { escape(text, attribute: false) }

    /// Text for a double- or single-quoted attribute value; tab and LF become character references, since
    /// a parser would otherwise normalise them to spaces.
    static func attribute(_ text: String) -> String { escape(text, attribute: true) }

    private static func escape(_ text: String, attribute: Bool) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x26: out += "&amp;"
            case 0x3C: out += "&lt;"
            case 0x3E: out += "&gt;"
            case 0x22 where attribute: out += "&quot;"
            case 0x27 where attribute: out += "&apos;"
            case 0x09, 0x0A:
                if attribute { out += "&#\(scalar.value);" } else { out.unicodeScalars.append(scalar) }
            case 0x0D:
                out += "&#13;"  // a raw CR is read back as LF, even in content
            default:
                // C0 controls and U+FFFE/U+FFFF are not allowed in XML 1.0 at all (not even as references);
                // DEL and C1 are allowed but invisible. Show them rather than drop them.
                if PrintableText.isControl(scalar) { out += PrintableText.visible(scalar) } else { out.unicodeScalars.append(scalar) }
            }
        }
        return out
    }
}
